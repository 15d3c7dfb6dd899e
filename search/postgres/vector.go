package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/internal/vec"
)

// vecCache is the vectors of one index as of generation gen: reading 16 MB
// of bytea per query (SciFact at 768 dimensions) would dominate the scan.
// It is immutable once built.
type vecCache struct {
	name string
	gen  int64
	dim  int
	docs []int64   // row ids
	vecs []float32 // i*dim .. (i+1)*dim is docs[i]'s unit vector
}

func (e *Engine) vector(ctx context.Context, q search.Query, qv []float32, k int) ([]search.Hit, error) {
	var hits []search.Hit
	err := e.read(ctx, func(tx pgx.Tx) error {
		ixs, err := e.selected(ctx, tx, q)
		if err != nil {
			return err
		}
		var cands []candidate
		for _, ix := range ixs {
			c, err := e.vectors(ctx, tx, ix)
			if err != nil {
				return err
			}
			if c.dim != len(qv) {
				continue
			}
			for i, doc := range c.docs {
				s := vec.Dot(qv, c.vecs[i*c.dim:(i+1)*c.dim])
				cands = append(cands, candidate{Score: float64(s), Doc: doc, Index: ix})
			}
		}
		hits, err = e.materialize(ctx, tx, cands, k, q.Filter)
		return err
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
func (e *Engine) vectors(ctx context.Context, tx pgx.Tx, ix *indexInfo) (*vecCache, error) {
	e.vecMu.Lock()
	c := e.vecs[ix.id]
	e.vecMu.Unlock()
	if c != nil && c.gen == ix.gen {
		return c, nil
	}
	rows, err := tx.Query(ctx, e.sql.vectors, ix.id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	c = &vecCache{name: ix.name, gen: ix.gen}
	for rows.Next() {
		var doc int64
		if err := rows.Scan(&doc, nil); err != nil {
			return nil, err
		}
		blob := rows.RawValues()[1] // decoded into c.vecs, not kept
		if c.dim == 0 {
			c.dim = len(blob) / 4
		}
		if len(blob) != 4*c.dim || c.dim == 0 {
			e.logger.WarnContext(ctx, "search_vector_skipped", "index", ix.name, "doc_rowid", doc, "bytes", len(blob), "dim", c.dim)
			continue
		}
		c.docs = append(c.docs, doc)
		c.vecs = vec.Decode(c.vecs, blob)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	e.vecMu.Lock()
	defer e.vecMu.Unlock()
	// Generations only grow, so a slower loader never replaces a newer cache.
	if old := e.vecs[ix.id]; old == nil || old.gen < c.gen {
		e.vecs[ix.id] = c
	}
	return c, nil
}
