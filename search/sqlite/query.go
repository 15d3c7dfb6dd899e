package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/internal/postings"
	"github.com/agentcraftlab/agentcraft/search/internal/rank"
	"github.com/agentcraftlab/agentcraft/search/internal/sqlengine"
)

// Search answers q; see search.Mode for the modes. It answers as
// search/memory does, including the degraded hybrid answers.
func (e *Engine) Search(ctx context.Context, q search.Query) (search.Result, error) {
	return e.searcher.Search(ctx, q)
}

// candidate is a scored document not yet read.
type candidate = sqlengine.Candidate

// read runs fn in a read transaction, so it sees one snapshot of the file.
func (e *Engine) read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := e.reader.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // read-only: nothing to lose
	return fn(tx)
}

// The statements of a search, prepared once per reader connection
// (Engine.stmts): preparing them on every query took a seventh of a cached
// SciFact query. Id and term lists are passed as one JSON array so that
// the text of a statement does not depend on their number.
const (
	indexesSQL = `SELECT id, name, docs, total_len, gen FROM search_indexes`
	listsSQL   = `SELECT t.term, t.df, p.first_doc, p.data
		FROM search_terms AS t JOIN search_postings AS p ON p.term_id = t.id
		WHERE t.index_id = ? AND t.df > 0 AND t.term IN (SELECT value FROM json_each(?))`
	docsSQL = `SELECT id, ext_id, title, body, metadata FROM search_docs WHERE id IN (SELECT value FROM json_each(?))`
)

// statements are prepared statements on the reader pool; a nil field
// means the statement text is prepared per query.
type statements struct {
	indexes, lists, docs *sql.Stmt
}

// unprepared is the statements of callers without an Engine at hand.
var unprepared statements

func (s *statements) prepare(ctx context.Context, db *sql.DB) error {
	for _, p := range []struct {
		st **sql.Stmt
		q  string
	}{{&s.indexes, indexesSQL}, {&s.lists, listsSQL}, {&s.docs, docsSQL}} {
		st, err := db.PrepareContext(ctx, p.q)
		if err != nil {
			return err
		}
		*p.st = st
	}
	return nil
}

func (s *statements) close() {
	for _, st := range []*sql.Stmt{s.indexes, s.lists, s.docs} {
		if st != nil {
			st.Close()
		}
	}
}

// query runs st (or, when nil, the statement text q) in tx.
func query(ctx context.Context, tx *sql.Tx, st *sql.Stmt, q string, args ...any) (*sql.Rows, error) {
	if st == nil {
		return tx.QueryContext(ctx, q, args...)
	}
	// Closing the transaction closes its copy of st.
	return tx.StmtContext(ctx, st).QueryContext(ctx, args...)
}

// selected returns the indexes q searches.
func selected(ctx context.Context, tx *sql.Tx, q search.Query) ([]*sqlengine.Index, error) {
	return selectedWith(ctx, tx, &unprepared, q)
}

func selectedWith(ctx context.Context, tx *sql.Tx, stmts *statements, q search.Query) ([]*sqlengine.Index, error) {
	rows, err := query(ctx, tx, stmts.indexes, indexesSQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return sqlengine.Selected(rows, q)
}

func (e *Engine) fulltext(ctx context.Context, q search.Query, k int) ([]search.Hit, error) {
	terms := e.tok.Tokens(q.Text)
	if len(terms) == 0 {
		return nil, nil
	}
	distinct, qtf := sqlengine.QueryTerms(terms)
	var hits []search.Hit
	err := e.read(ctx, func(tx *sql.Tx) error {
		ixs, err := selectedWith(ctx, tx, &e.stmts, q)
		if err != nil {
			return err
		}
		var cands []candidate
		for _, ix := range ixs {
			if cands, err = e.scoreIndex(ctx, tx, ix, distinct, qtf, cands); err != nil {
				return err
			}
		}
		hits, err = materializeWith(ctx, tx, &e.stmts, cands, k, q.Filter)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite search: fulltext: %w", err)
	}
	return hits, nil
}

// scoreIndex appends every document of ix matching a term to cands, scored as
// search/memory scores it (float32 accumulation included). The posting
// lists come from e.lists when cached at ix's generation, else from tx.
func (e *Engine) scoreIndex(ctx context.Context, tx *sql.Tx, ix *sqlengine.Index, distinct []string, qtf map[string]float64, cands []candidate) ([]candidate, error) {
	if ix.Docs <= 0 {
		return cands, nil
	}
	lists := make([]*postings.List, len(distinct))
	var missing []string
	for i, t := range distinct {
		if lists[i] = e.lists.Get(ix.ID, ix.Gen, t); lists[i] == nil {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		loaded, err := e.loadLists(ctx, tx, ix.ID, missing)
		if err != nil {
			return nil, err
		}
		for i, t := range distinct {
			if lists[i] != nil {
				continue
			}
			l := loaded[t]
			if l == nil {
				l = &postings.List{} // absent: cached too
			}
			lists[i] = l
			e.lists.Put(ix.ID, ix.Gen, t, l)
		}
	}
	scorer := postings.NewScorer(e.bm25.K1, e.bm25.B, ix.Docs, ix.TotalLen)
	ws := make([]float32, 0, len(lists))
	nonEmpty := lists[:0:0]
	for i, l := range lists {
		if l.DF > 0 {
			ws = append(ws, scorer.Weight(l.DF, qtf[distinct[i]]))
			nonEmpty = append(nonEmpty, l)
		}
	}
	if len(nonEmpty) == 0 {
		return cands, nil
	}
	acc := scorer.Accumulate(ws, nonEmpty)
	defer acc.Release()
	cands = slices.Grow(cands, acc.Len())
	acc.Each(func(doc int64, s float32) {
		cands = append(cands, candidate{Score: float64(s), Doc: doc, Index: ix})
	})
	return cands, nil
}

// loadLists reads and decodes the postings of terms in the index ixID, in
// one statement; a term without documents is missing from the map.
func (e *Engine) loadLists(ctx context.Context, tx *sql.Tx, ixID int64, terms []string) (map[string]*postings.List, error) {
	termsJSON, err := json.Marshal(terms)
	if err != nil {
		return nil, err
	}
	rows, err := query(ctx, tx, e.stmts.lists, listsSQL, ixID, string(termsJSON))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type pending struct {
		df int64
		ps []postings.Posting
	}
	byTerm := make(map[string]*pending, len(terms))
	for rows.Next() {
		var t string
		var df, first int64
		var data sql.RawBytes
		if err := rows.Scan(&t, &df, &first, &data); err != nil {
			return nil, err
		}
		p := byTerm[t]
		if p == nil {
			p = &pending{df: df, ps: make([]postings.Posting, 0, df)}
			byTerm[t] = p
		}
		if err := postings.Decode(first, data, func(doc, tf, dl int64) {
			p.ps = append(p.ps, postings.Posting{Doc: doc, TF: tf, Len: dl})
		}); err != nil {
			return nil, fmt.Errorf("term %q: %w", t, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make(map[string]*postings.List, len(byTerm))
	for t, p := range byTerm {
		out[t] = postings.FromPostings(p.df, p.ps)
	}
	return out, nil
}

// materialize reads the best candidates and returns the k best that pass
// filter, as rank.Best orders them.
func materialize(ctx context.Context, tx *sql.Tx, cands []candidate, k int, filter map[string]string) ([]search.Hit, error) {
	return materializeWith(ctx, tx, &unprepared, cands, k, filter)
}

func materializeWith(ctx context.Context, tx *sql.Tx, stmts *statements, cands []candidate, k int, filter map[string]string) ([]search.Hit, error) {
	return rank.Best(cands, k, len(filter) > 0, func(batch []candidate) ([]search.Hit, error) {
		hits, err := readDocs(ctx, tx, stmts, batch)
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
func readDocs(ctx context.Context, tx *sql.Tx, stmts *statements, cands []candidate) ([]search.Hit, error) {
	pos := make(map[int64]int, len(cands))
	ids := make([]byte, 0, 8*len(cands)+2)
	ids = append(ids, '[')
	for i, c := range cands {
		if i > 0 {
			ids = append(ids, ',')
		}
		ids = strconv.AppendInt(ids, c.Doc, 10)
		pos[c.Doc] = i
	}
	ids = append(ids, ']')
	rows, err := query(ctx, tx, stmts.docs, docsSQL, string(ids))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	// A candidate always has its row: postings, vectors and documents are
	// read in the same snapshot.
	return rank.Collect(rows, cands, pos, func(ix *sqlengine.Index) string { return ix.Name })
}
