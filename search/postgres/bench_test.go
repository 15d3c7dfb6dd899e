package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/memory"
	"github.com/agentcraftlab/agentcraft/search/postgres"
	"github.com/agentcraftlab/agentcraft/search/searchtest"
)

// BenchmarkQueryBM25 measures the product target (p50 <= 2 ms on SciFact)
// with the memory engine as the peer, and the engine without its posting
// cache (every query reads and decodes its terms' segments).
func BenchmarkQueryBM25(b *testing.B) {
	l := searchtest.Load(b, searchtest.SciFact)
	testDSN(b)
	b.Run("engine=postgres", func(b *testing.B) {
		searchtest.QueryBench(b, open(b, nil), l)
	})
	b.Run("engine=postgres/cache=off", func(b *testing.B) {
		searchtest.QueryBench(b, open(b, &postgres.Options{PostingsCacheBytes: -1}), l)
	})
	b.Run("engine=memory", func(b *testing.B) {
		m, err := memory.New(nil)
		if err != nil {
			b.Fatal(err)
		}
		searchtest.QueryBench(b, m, l)
	})
}

// BenchmarkIndex indexes SciFact into a new schema, in batches of 64 (the
// size a chunker hands over) and as one batch.
func BenchmarkIndex(b *testing.B) {
	l := searchtest.Load(b, searchtest.SciFact)
	testDSN(b)
	for _, batch := range []int{64, len(l.Docs)} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				e := open(b, nil)
				for chunk := range slices.Chunk(l.Docs, batch) {
					if err := e.Index(ctx, chunk...); err != nil {
						b.Fatal(err)
					}
				}
				e.Close() // release the pool now, not when the benchmark ends
			}
			b.ReportMetric(float64(len(l.Docs)*b.N)/b.Elapsed().Seconds(), "chunks/s")
		})
	}
}

// BenchmarkQueryHybrid times hybrid queries on SciFact with 768-dimension
// vectors (see searchtest.HybridBench).
func BenchmarkQueryHybrid(b *testing.B) {
	l := searchtest.Load(b, searchtest.SciFact)
	testDSN(b)
	searchtest.HybridBench(b, l, func(b *testing.B, emb search.Embedder) search.Engine {
		return open(b, &postgres.Options{Embedder: emb})
	})
}
