package postgres

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/search"
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
				s := dot(qv, c.vecs[i*c.dim:(i+1)*c.dim])
				cands = append(cands, candidate{score: float64(s), doc: doc, ix: ix})
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
		c.vecs = decodeVector(c.vecs, blob)
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

// encodeVector normalises a copy of v and returns it as little-endian
// float32s, or nil (no vector) when v is zero or not finite.
func encodeVector(v []float32) []byte {
	v = slices.Clone(v)
	if !normalize(v) {
		return nil
	}
	out := make([]byte, 0, 4*len(v))
	for _, x := range v {
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(x))
	}
	return out
}

func decodeVector(dst []float32, b []byte) []float32 {
	for i := 0; i+4 <= len(b); i += 4 {
		dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
	}
	return dst
}

// normalize scales v to unit length in place; it reports false for a zero
// (or non-finite) vector.
func normalize(v []float32) bool {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 || math.IsInf(s, 0) || math.IsNaN(s) {
		return false
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return true
}

// dot is the inner product of two equal-length vectors, unrolled by four so
// the compiler keeps four independent accumulators.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}
