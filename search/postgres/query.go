package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

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

func (e *Engine) fulltext(ctx context.Context, q search.Query, k int) ([]search.Hit, error) {
	terms := e.tok.Tokens(q.Text)
	if len(terms) == 0 {
		return nil, nil
	}
	distinct, qtf := sqlengine.QueryTerms(terms)
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

// score returns every document of the searched indexes matching a term of
// the query, scored as search/memory scores it (float32 accumulation
// included). Posting lists come from e.lists when cached at the index's
// current generation; the others are read in one statement.
func (e *Engine) score(ctx context.Context, tx pgx.Tx, q search.Query, distinct []string, qtf map[string]float64) ([]candidate, error) {
	ixs, err := e.selected(ctx, tx, q)
	if err != nil {
		return nil, err
	}
	lists := make([][]*postings.List, len(ixs))
	var missIxs []int64
	var missTerms []string
	for i, ix := range ixs {
		if ix.Docs <= 0 {
			continue
		}
		lists[i] = make([]*postings.List, len(distinct))
		missed := false
		for j, t := range distinct {
			if lists[i][j] = e.lists.Get(ix.ID, ix.Gen, t); lists[i][j] == nil {
				missed = true
				if !slices.Contains(missTerms, t) {
					missTerms = append(missTerms, t)
				}
			}
		}
		if missed {
			missIxs = append(missIxs, ix.ID)
		}
	}
	if len(missIxs) > 0 {
		loaded, err := e.loadLists(ctx, tx, missIxs, missTerms)
		if err != nil {
			return nil, err
		}
		for i, ix := range ixs {
			for j, t := range distinct {
				if lists[i] == nil || lists[i][j] != nil {
					continue
				}
				l := loaded[listKey{ix.ID, t}]
				if l == nil {
					l = &postings.List{} // absent: cached too
				}
				lists[i][j] = l
				e.lists.Put(ix.ID, ix.Gen, t, l)
			}
		}
	}
	var cands []candidate
	for i, ix := range ixs {
		if lists[i] == nil {
			continue
		}
		scorer := postings.NewScorer(e.bm25.K1, e.bm25.B, ix.Docs, ix.TotalLen)
		ws := make([]float32, 0, len(distinct))
		var nonEmpty []*postings.List
		for j, l := range lists[i] {
			if l.DF > 0 {
				ws = append(ws, scorer.Weight(l.DF, qtf[distinct[j]]))
				nonEmpty = append(nonEmpty, l)
			}
		}
		if len(nonEmpty) == 0 {
			continue
		}
		acc := scorer.Accumulate(ws, nonEmpty)
		cands = slices.Grow(cands, acc.Len())
		acc.Each(func(doc int64, s float32) {
			cands = append(cands, candidate{Score: float64(s), Doc: doc, Index: ix})
		})
		acc.Release()
	}
	return cands, nil
}

// listKey names the postings of one term in one index.
type listKey struct {
	index int64
	term  string
}

// loadLists reads and decodes the postings of terms in the indexes ixIDs;
// a term without documents in an index is missing from the map.
func (e *Engine) loadLists(ctx context.Context, tx pgx.Tx, ixIDs []int64, terms []string) (map[listKey]*postings.List, error) {
	rows, err := tx.Query(ctx, e.sql.postings, ixIDs, terms)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type pending struct {
		df int64
		ps []postings.Posting
	}
	byKey := make(map[listKey]*pending)
	for rows.Next() {
		// Raw values: a miss reads hundreds of KB of segments, and
		// decoding them in place saves copying each one.
		vals := rows.RawValues()
		if len(vals) != 5 {
			return nil, fmt.Errorf("postings: %d columns, want 5", len(vals))
		}
		var k listKey
		var df, first int64
		if err := rows.Scan(&k.index, &k.term, &df, &first, nil); err != nil {
			return nil, err
		}
		p := byKey[k]
		if p == nil {
			p = &pending{df: df, ps: make([]postings.Posting, 0, min(df, 1<<20))}
			byKey[k] = p
		}
		if err := postings.Decode(first, vals[4], func(doc, tf, dl int64) {
			p.ps = append(p.ps, postings.Posting{Doc: doc, TF: tf, Len: dl})
		}); err != nil {
			return nil, fmt.Errorf("term %q: %w", k.term, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make(map[listKey]*postings.List, len(byKey))
	for k, p := range byKey {
		out[k] = postings.FromPostings(p.df, p.ps)
	}
	return out, nil
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
	return rank.Collect(rows, cands, pos, func(ix *sqlengine.Index) string { return ix.Name })
}
