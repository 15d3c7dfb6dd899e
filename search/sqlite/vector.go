package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/internal/vec"
)

// vecCache is the vectors of one index as of generation gen: reading 16 MB
// of blobs per query (SciFact at 768 dimensions) would dominate the scan.
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
	err := e.read(ctx, func(tx *sql.Tx) error {
		ixs, err := selected(ctx, tx, q)
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
		hits, err = materialize(ctx, tx, cands, k, q.Filter)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite search: vector: %w", err)
	}
	return hits, nil
}

// vectors returns the vectors of ix at its current generation, loading them
// in tx when the cache is missing or older.
func (e *Engine) vectors(ctx context.Context, tx *sql.Tx, ix *indexInfo) (*vecCache, error) {
	e.vecMu.Lock()
	c := e.vecs[ix.id]
	e.vecMu.Unlock()
	if c != nil && c.gen == ix.gen {
		return c, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, vec FROM search_docs WHERE index_id = ? AND vec IS NOT NULL`, ix.id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	c = &vecCache{name: ix.name, gen: ix.gen}
	for rows.Next() {
		var doc int64
		var blob []byte
		if err := rows.Scan(&doc, &blob); err != nil {
			return nil, err
		}
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
