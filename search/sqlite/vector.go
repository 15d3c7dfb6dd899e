package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/internal/sqlengine"
	"github.com/agentcraftlab/agentcraft/search/internal/vec"
)

func (e *Engine) vector(ctx context.Context, q search.Query, qv []float32, k int) ([]search.Hit, error) {
	var hits []search.Hit
	err := e.read(ctx, func(tx *sql.Tx) error {
		ixs, err := selected(ctx, tx, q)
		if err != nil {
			return err
		}
		vectors := func(ix *sqlengine.Index) (*vec.Set, error) { return e.vectors(ctx, tx, ix) }
		hits, err = sqlengine.Vector(ixs, vectors, qv, k, len(q.Filter) > 0, func(cands []candidate) ([]search.Hit, error) {
			return materialize(ctx, tx, cands, k, q.Filter)
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite search: vector: %w", err)
	}
	return hits, nil
}

// vectors returns the vectors of ix at its current generation, loading them
// in tx when the cache is missing or older.
func (e *Engine) vectors(ctx context.Context, tx *sql.Tx, ix *sqlengine.Index) (*vec.Set, error) {
	return sqlengine.Vectors(ctx, &e.vecs, e.logger, ix, func(add func(int64, []byte)) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, vec FROM search_docs WHERE index_id = ? AND vec IS NOT NULL`, ix.ID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var doc int64
			var blob []byte
			if err := rows.Scan(&doc, &blob); err != nil {
				return err
			}
			add(doc, blob)
		}
		return rows.Err()
	})
}
