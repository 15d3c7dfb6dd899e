package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/internal/vec"
)

func (e *Engine) vector(ctx context.Context, q search.Query, qv []float32, k int) ([]search.Hit, error) {
	var hits []search.Hit
	err := e.read(ctx, func(tx pgx.Tx) error {
		ixs, err := e.selected(ctx, tx, q)
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
			hits, err = e.materialize(ctx, tx, cands, k, q.Filter)
			return len(hits) >= k, err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("postgres search: vector: %w", err)
	}
	return hits, nil
}

// selected returns the indexes q searches.
func (e *Engine) selected(ctx context.Context, tx pgx.Tx, q search.Query) ([]*indexInfo, error) {
	rows, err := tx.Query(ctx, e.sql.indexes)
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

// vectors returns the vectors of ix at its current generation, loading them
// in tx when the cache is missing or older.
func (e *Engine) vectors(ctx context.Context, tx pgx.Tx, ix *indexInfo) (*vec.Set, error) {
	if c := e.vecs.Get(ix.id, ix.gen); c != nil {
		return c, nil
	}
	rows, err := tx.Query(ctx, e.sql.vectors, ix.id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	c := &vec.Set{Name: ix.name, Gen: ix.gen}
	for rows.Next() {
		var doc int64
		if err := rows.Scan(&doc, nil); err != nil {
			return nil, err
		}
		blob := rows.RawValues()[1] // decoded into c.vecs, not kept
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
