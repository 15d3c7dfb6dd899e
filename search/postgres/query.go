package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

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

// readTxOptions give a search one snapshot of the database.
var readTxOptions = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}

// read runs fn in a read-only transaction, so it sees one snapshot.
func (e *Engine) read(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := e.pool.BeginTx(ctx, readTxOptions)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only: nothing to lose
	return fn(tx)
}

// names is q.Indexes as a non-nil array parameter (nil would be NULL, and
// the statements read an empty array as "all indexes").
func names(q search.Query) []string {
	if q.Indexes == nil {
		return []string{}
	}
	return q.Indexes
}

func (e *Engine) fulltext(ctx context.Context, q search.Query, k int) ([]search.Hit, error) {
	terms := e.tok.Tokens(q.Text)
	if len(terms) == 0 {
		return nil, nil
	}
	// Repeated query terms count again, as Lucene's BooleanQuery does.
	qtf := make(map[string]float64, len(terms))
	var distinct []string
	for _, t := range terms {
		if qtf[t] == 0 {
			distinct = append(distinct, t)
		}
		qtf[t]++
	}
	var hits []search.Hit
	err := e.read(ctx, func(tx pgx.Tx) error {
		cands, err := e.score(ctx, tx, q, distinct, qtf)
		if err != nil {
			return err
		}
		hits, err = e.materialize(ctx, tx, cands, k, q.Filter)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres search: fulltext: %w", err)
	}
	return hits, nil
}

// perIndex is the scoring state of one searched index.
type perIndex struct {
	info   *indexInfo
	scorer postings.Scorer
	scores map[int64]float32
}

// score reads the segments of the query's terms in every searched index
// and returns each matching document scored as search/memory scores it
// (float32 accumulation included).
func (e *Engine) score(ctx context.Context, tx pgx.Tx, q search.Query, distinct []string, qtf map[string]float64) ([]candidate, error) {
	rows, err := tx.Query(ctx, e.sql.postings, names(q), distinct)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ixs := make(map[int64]*perIndex)
	var order []*perIndex
	for rows.Next() {
		// Raw values: a query reads hundreds of KB of segments, and
		// decoding them in place saves copying each one.
		vals := rows.RawValues()
		if len(vals) != 9 {
			return nil, fmt.Errorf("postings: %d columns, want 9", len(vals))
		}
		var ixID, docs, totalLen, df, termID, first int64
		var name, term string
		if err := rows.Scan(&ixID, &name, &docs, &totalLen, &term, &df, &termID, &first, nil); err != nil {
			return nil, err
		}
		ix := ixs[ixID]
		if ix == nil {
			ix = &perIndex{info: &indexInfo{id: ixID, name: name, docs: docs, totalLen: totalLen},
				scorer: postings.NewScorer(e.bm25.K1, e.bm25.B, docs, totalLen), scores: make(map[int64]float32)}
			ixs[ixID] = ix
			order = append(order, ix)
		}
		if ix.info.docs <= 0 {
			continue
		}
		w := ix.scorer.Weight(df, qtf[term])
		if err := ix.scorer.Add(ix.scores, w, first, vals[8]); err != nil {
			return nil, fmt.Errorf("term %d: %w", termID, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var cands []candidate
	for _, ix := range order {
		for doc, s := range ix.scores {
			cands = append(cands, candidate{Score: float64(s), Doc: doc, Index: ix.info})
		}
	}
	return cands, nil
}

// materialize reads the best candidates and returns the k best that pass
// filter, as rank.Best orders them.
func (e *Engine) materialize(ctx context.Context, tx pgx.Tx, cands []candidate, k int, filter map[string]string) ([]search.Hit, error) {
	if k == 0 || len(cands) == 0 {
		return nil, nil
	}
	var filterJSON []byte
	if len(filter) > 0 {
		var err error
		if filterJSON, err = json.Marshal(filter); err != nil {
			return nil, fmt.Errorf("encode filter: %w", err)
		}
	}
	return rank.Best(cands, k, len(filter) > 0, func(batch []candidate) ([]search.Hit, error) {
		return e.readDocs(ctx, tx, batch, filterJSON)
	})
}

// readDocs returns the hits of cands that pass filterJSON (a jsonb
// containment test; nil means no filter), in the order of cands.
func (e *Engine) readDocs(ctx context.Context, tx pgx.Tx, cands []candidate, filterJSON []byte) ([]search.Hit, error) {
	ids := make([]int64, len(cands))
	pos := make(map[int64]int, len(cands))
	for i, c := range cands {
		ids[i] = c.Doc
		pos[c.Doc] = i
	}
	var rows pgx.Rows
	var err error
	if filterJSON == nil {
		rows, err = tx.Query(ctx, e.sql.readDocs, ids)
	} else {
		rows, err = tx.Query(ctx, e.sql.readDocsFiltered, ids, string(filterJSON))
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]search.Hit, len(cands))
	found := make([]bool, len(cands))
	for rows.Next() {
		var id int64
		var h search.Hit
		var meta []byte
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
	n := 0
	for i := range out {
		if found[i] {
			out[n] = out[i]
			n++
		}
	}
	return out[:n], nil
}
