package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/internal/postings"
	"github.com/agentcraftlab/agentcraft/search/internal/rank"
)

// Search answers q; see search.Mode for the modes. It answers as
// search/memory does, including the degraded hybrid answers.
func (e *Engine) Search(ctx context.Context, q search.Query) (search.Result, error) {
	return e.searcher.Search(ctx, q)
}

// indexInfo is one row of search_indexes.
type indexInfo struct {
	id             int64
	name           string
	docs, totalLen int64
	gen            int64
}

// candidate is a scored document not yet read.
type candidate = rank.Candidate[*indexInfo]

// read runs fn in a read transaction, so it sees one snapshot of the file.
func (e *Engine) read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := e.reader.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // read-only: nothing to lose
	return fn(tx)
}

// selected returns the indexes q searches.
func selected(ctx context.Context, tx *sql.Tx, q search.Query) ([]*indexInfo, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, name, docs, total_len, gen FROM search_indexes`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*indexInfo
	for rows.Next() {
		ix := &indexInfo{}
		if err := rows.Scan(&ix.id, &ix.name, &ix.docs, &ix.totalLen, &ix.gen); err != nil {
			return nil, err
		}
		if len(q.Indexes) == 0 || slices.Contains(q.Indexes, ix.name) {
			out = append(out, ix)
		}
	}
	return out, rows.Err()
}

func (e *Engine) fulltext(ctx context.Context, q search.Query, k int) ([]search.Hit, error) {
	terms := e.tok.Tokens(q.Text)
	if len(terms) == 0 {
		return nil, nil
	}
	// Repeated query terms count again, as Lucene's BooleanQuery does.
	qtf := make(map[string]float64, len(terms))
	var distinct []any
	for _, t := range terms {
		if qtf[t] == 0 {
			distinct = append(distinct, t)
		}
		qtf[t]++
	}
	var hits []search.Hit
	err := e.read(ctx, func(tx *sql.Tx) error {
		ixs, err := selected(ctx, tx, q)
		if err != nil {
			return err
		}
		var cands []candidate
		for _, ix := range ixs {
			if cands, err = e.scoreIndex(ctx, tx, ix, distinct, qtf, cands); err != nil {
				return err
			}
		}
		hits, err = materialize(ctx, tx, cands, k, q.Filter)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite search: fulltext: %w", err)
	}
	return hits, nil
}

// scoreIndex appends every document of ix matching a term to cands, scored as
// search/memory scores it (float32 accumulation included).
func (e *Engine) scoreIndex(ctx context.Context, tx *sql.Tx, ix *indexInfo, distinct []any, qtf map[string]float64, cands []candidate) ([]candidate, error) {
	if ix.docs <= 0 {
		return cands, nil
	}
	scorer := postings.NewScorer(e.bm25.K1, e.bm25.B, ix.docs, ix.totalLen)
	args := append([]any{ix.id}, distinct...)
	rows, err := tx.QueryContext(ctx, `SELECT id, term, df FROM search_terms WHERE index_id = ? AND df > 0 AND term IN (`+placeholders("?", len(distinct))+`)`, args...)
	if err != nil {
		return nil, err
	}
	type weighted struct {
		id  int64
		idf float32
	}
	var ts []weighted
	for rows.Next() {
		var w weighted
		var t string
		var df int64
		if err := rows.Scan(&w.id, &t, &df); err != nil {
			rows.Close()
			return nil, err
		}
		w.idf = scorer.Weight(df, qtf[t])
		ts = append(ts, w)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(ts) == 0 {
		return cands, nil
	}
	scores := make(map[int64]float32)
	idf := make(map[int64]float32, len(ts))
	args = make([]any, len(ts))
	for i, w := range ts {
		idf[w.id] = w.idf
		args[i] = w.id
	}
	rows, err = tx.QueryContext(ctx, `SELECT term_id, first_doc, data FROM search_postings WHERE term_id IN (`+placeholders("?", len(ts))+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var term, first int64
		var data sql.RawBytes
		if err := rows.Scan(&term, &first, &data); err != nil {
			return nil, err
		}
		if err := scorer.Add(scores, idf[term], first, data); err != nil {
			return nil, fmt.Errorf("term %d: %w", term, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for doc, s := range scores {
		cands = append(cands, candidate{Score: float64(s), Doc: doc, Index: ix})
	}
	return cands, nil
}

// materialize reads the best candidates and returns the k best that pass
// filter, as rank.Best orders them.
func materialize(ctx context.Context, tx *sql.Tx, cands []candidate, k int, filter map[string]string) ([]search.Hit, error) {
	return rank.Best(cands, k, len(filter) > 0, func(batch []candidate) ([]search.Hit, error) {
		hits, err := readDocs(ctx, tx, batch)
		if err != nil {
			return nil, err
		}
		if len(filter) == 0 {
			return hits, nil
		}
		return slices.DeleteFunc(hits, func(h search.Hit) bool { return !search.Matches(h.Metadata, filter) }), nil
	})
}

// readDocs returns the hits of cands, in the order of cands.
func readDocs(ctx context.Context, tx *sql.Tx, cands []candidate) ([]search.Hit, error) {
	args := make([]any, len(cands))
	pos := make(map[int64]int, len(cands))
	for i, c := range cands {
		args[i] = c.Doc
		pos[c.Doc] = i
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, ext_id, title, body, metadata FROM search_docs WHERE id IN (`+placeholders("?", len(cands))+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]search.Hit, len(cands))
	found := make([]bool, len(cands))
	for rows.Next() {
		var id int64
		var h search.Hit
		var meta sql.NullString
		if err := rows.Scan(&id, &h.ID, &h.Title, &h.Text, &meta); err != nil {
			return nil, err
		}
		i, ok := pos[id]
		if !ok {
			continue
		}
		if h.Metadata, err = decodeMetadata(meta); err != nil {
			return nil, fmt.Errorf("document %q: %w", h.ID, err)
		}
		h.Index = cands[i].Index.name
		h.Score = cands[i].Score
		out[i] = h
		found[i] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// A candidate always has its row: postings, vectors and documents are
	// read in the same snapshot.
	n := 0
	for i := range out {
		if found[i] {
			out[n] = out[i]
			n++
		}
	}
	return out[:n], nil
}
