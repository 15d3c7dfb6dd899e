package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/internal/vec"
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
		return vec.Widen(sets, qv, k, len(q.Filter) > 0, func(top [][]vec.Scored) (bool, error) {
			var cands []candidate
			for i, rows := range top {
				for _, t := range rows {
					cands = append(cands, candidate{Score: float64(t.Score), Doc: sets[i].Docs[t.Row], Index: ixs[i]})
				}
			}
			hits, err = materialize(ctx, tx, cands, k, q.Filter)
			return len(hits) >= k, err
		})
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
