package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/memory"
	"github.com/agentcraftlab/agentcraft/search/searchtest"
	"github.com/agentcraftlab/agentcraft/search/sqlite"
)

// BenchmarkQueryBM25 measures the product target (p50 <= 2 ms on SciFact)
// with the memory engine as the peer, and the engine without its posting
// cache (every query reads and decodes its terms' segments).
func BenchmarkQueryBM25(b *testing.B) {
	l := searchtest.Load(b, searchtest.SciFact)
	b.Run("engine=sqlite", func(b *testing.B) {
		searchtest.QueryBench(b, open(b, nil), l)
	})
	b.Run("engine=sqlite/cache=off", func(b *testing.B) {
		searchtest.QueryBench(b, open(b, &sqlite.Options{PostingsCacheBytes: -1}), l)
	})
	b.Run("engine=memory", func(b *testing.B) {
		m, err := memory.New(nil)
		if err != nil {
			b.Fatal(err)
		}
		searchtest.QueryBench(b, m, l)
	})
}

// BenchmarkIndex indexes SciFact into a new file, in batches of 64 (the
// size a chunker hands over) and as one batch.
func BenchmarkIndex(b *testing.B) {
	l := searchtest.Load(b, searchtest.SciFact)
	for _, batch := range []int{64, len(l.Docs)} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				e, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "search.db"), nil)
				if err != nil {
					b.Fatal(err)
				}
				for chunk := range slices.Chunk(l.Docs, batch) {
					if err := e.Index(ctx, chunk...); err != nil {
						b.Fatal(err)
					}
				}
				if err := e.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(l.Docs)*b.N)/b.Elapsed().Seconds(), "chunks/s")
		})
	}
}

// BenchmarkQueryHybrid times hybrid queries on SciFact with 768-dimension
// vectors (see searchtest.HybridBench).
func BenchmarkQueryHybrid(b *testing.B) {
	l := searchtest.Load(b, searchtest.SciFact)
	searchtest.HybridBench(b, l, func(b *testing.B, emb search.Embedder) search.Engine {
		return open(b, &sqlite.Options{Embedder: emb})
	})
}
