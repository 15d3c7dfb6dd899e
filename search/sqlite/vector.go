package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/internal/vec"
)

// A filtered vector query first takes the max(k×vecFilterFetch,
// vecFilterMin) best documents of each index, then vecFilterFetch times as
// many while fewer than k of them pass. Candidates are read lazily (see
// rank.Best), so a generous first take costs heap entries, not rows.
const (
	vecFilterFetch = 16
	vecFilterMin   = 1024
)

func (e *Engine) vector(ctx context.Context, q search.Query, qv []float32, k int) ([]search.Hit, error) {
	var hits []search.Hit
	err := e.read(ctx, func(tx *sql.Tx) error {
		ixs, err := selected(ctx, tx, q)
		if err != nil {
			return err
		}
		sets := make([]*vec.Set, len(ixs))
		for i, ix := range ixs {
			if sets[i], err = e.vectors(ctx, tx, ix); err != nil {
				return err
			}
		}
		// The k best of each index (and their ties) hold the k best
		// overall. A filter is applied to the rows read, so take more and
		// widen until k pass or no document is left out.
		n := k
		if len(q.Filter) > 0 {
			n = max(k*vecFilterFetch, vecFilterMin)
		}
		for {
			var cands []candidate
			more := false
			for i, c := range sets {
				top := c.TopK(qv, n)
				for _, t := range top {
					cands = append(cands, candidate{Score: float64(t.Score), Doc: c.Docs[t.Row], Index: ixs[i]})
				}
				more = more || (len(top) >= n && len(top) < len(c.Docs))
			}
			if hits, err = materialize(ctx, tx, cands, k, q.Filter); err != nil || len(hits) >= k || !more {
				return err
			}
			n *= vecFilterFetch
		}
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite search: vector: %w", err)
	}
	return hits, nil
}

// vectors returns the vectors of ix at its current generation, loading them
// in tx when the cache is missing or older.
func (e *Engine) vectors(ctx context.Context, tx *sql.Tx, ix *indexInfo) (*vec.Set, error) {
	if c := e.vecs.Get(ix.id, ix.gen); c != nil {
		return c, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, vec FROM search_docs WHERE index_id = ? AND vec IS NOT NULL`, ix.id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	c := &vec.Set{Name: ix.name, Gen: ix.gen}
	for rows.Next() {
		var doc int64
		var blob []byte
		if err := rows.Scan(&doc, &blob); err != nil {
			return nil, err
		}
		if !c.Add(doc, blob) {
			e.logger.WarnContext(ctx, "search_vector_skipped", "index", ix.name, "doc_rowid", doc, "bytes", len(blob), "dim", c.Dim)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	e.vecs.Put(ix.id, c)
	return c, nil
}
