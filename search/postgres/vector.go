package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/internal/sqlengine"
	"github.com/agentcraftlab/agentcraft/search/internal/vec"
)

func (e *Engine) vector(ctx context.Context, q search.Query, qv []float32, k int) ([]search.Hit, error) {
	var hits []search.Hit
	err := e.read(ctx, func(tx pgx.Tx) error {
		ixs, err := e.selected(ctx, tx, q)
		if err != nil {
			return err
		}
		vectors := func(ix *sqlengine.Index) (*vec.Set, error) { return e.vectors(ctx, tx, ix) }
		hits, err = sqlengine.Vector(ixs, vectors, qv, k, len(q.Filter) > 0, func(cands []candidate) ([]search.Hit, error) {
			return e.materialize(ctx, tx, cands, k, q.Filter)
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres search: vector: %w", err)
	}
	return hits, nil
}

// selected returns the indexes q searches.
func (e *Engine) selected(ctx context.Context, tx pgx.Tx, q search.Query) ([]*sqlengine.Index, error) {
	rows, err := tx.Query(ctx, e.sql.indexes)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return sqlengine.Selected(rows, q)
}

// vectors returns the vectors of ix at its current generation, loading them
// in tx when the cache is missing or older.
func (e *Engine) vectors(ctx context.Context, tx pgx.Tx, ix *sqlengine.Index) (*vec.Set, error) {
	return sqlengine.Vectors(ctx, &e.vecs, e.logger, ix, func(add func(int64, []byte)) error {
		rows, err := tx.Query(ctx, e.sql.vectors, ix.ID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var doc int64
			if err := rows.Scan(&doc, nil); err != nil {
				return err
			}
			add(doc, rows.RawValues()[1]) // decoded by add, not kept
		}
		return rows.Err()
	})
}
