package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/memory"
	"github.com/agentcraftlab/agentcraft/search/postgres"
)

// reportLatency adds p50 and p99 of the recorded per-query times.
func reportLatency(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds()), "p99-µs")
}

// queryBench times top-10 BM25 queries over SciFact's 300 test topics.
func queryBench(b *testing.B, e search.Engine, l loaded) {
	ctx := context.Background()
	if err := e.Index(ctx, l.docs...); err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		if _, err := e.Search(ctx, search.Query{Text: l.topics[i%len(l.topics)].Text, Mode: search.ModeFulltext}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		i++
	}
	reportLatency(b, lat)
}

// BenchmarkQueryBM25 measures the product target (p50 <= 2 ms on SciFact)
// with the memory engine as the peer.
func BenchmarkQueryBM25(b *testing.B) {
	l := load(b, scifact)
	testDSN(b)
	b.Run("engine=postgres", func(b *testing.B) {
		queryBench(b, open(b, nil), l)
	})
	b.Run("engine=memory", func(b *testing.B) {
		m, err := memory.New(nil)
		if err != nil {
			b.Fatal(err)
		}
		queryBench(b, m, l)
	})
}

// BenchmarkIndex indexes SciFact into a new schema, in batches of 64 (the
// size a chunker hands over) and as one batch.
func BenchmarkIndex(b *testing.B) {
	l := load(b, scifact)
	testDSN(b)
	for _, batch := range []int{64, len(l.docs)} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				e := open(b, nil)
				for chunk := range slices.Chunk(l.docs, batch) {
					if err := e.Index(ctx, chunk...); err != nil {
						b.Fatal(err)
					}
				}
				e.Close() // release the pool now, not when the benchmark ends
			}
			b.ReportMetric(float64(len(l.docs)*b.N)/b.Elapsed().Seconds(), "chunks/s")
		})
	}
}

// randomEmbedder is a benchmark fixture: a fixed random vector per text, so
// the vector path can be timed without a model. It says nothing about
// quality and must never be used outside tests.
type randomEmbedder struct {
	dim int
	vec map[string][]float32
}

func (r *randomEmbedder) Dimension() int { return r.dim }

func (r *randomEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v, ok := r.vec[t]
		if !ok {
			return nil, fmt.Errorf("randomEmbedder: unknown text %q", t)
		}
		out[i] = slices.Clone(v)
	}
	return out, nil
}

// BenchmarkQueryHybrid times hybrid queries on SciFact with 768-dimension
// vectors. cache=warm is the steady state; cache=cold writes one document
// before each query, so every query reloads the index's vectors from the
// database: the difference is what the per-index vector cache saves.
func BenchmarkQueryHybrid(b *testing.B) {
	l := load(b, scifact)
	testDSN(b)
	const dim = 768
	rng := rand.New(rand.NewPCG(1, 2))
	emb := &randomEmbedder{dim: dim, vec: make(map[string][]float32)}
	add := func(text string) {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		emb.vec[text] = v
	}
	for _, d := range l.docs {
		add(d.Title + "\n" + d.Text)
	}
	for _, t := range l.topics {
		add(t.Text)
	}
	add("cache buster")
	ctx := context.Background()
	e := open(b, &postgres.Options{Embedder: emb})
	if err := e.Index(ctx, l.docs...); err != nil {
		b.Fatal(err)
	}
	for _, cold := range []bool{false, true} {
		b.Run(fmt.Sprintf("cache=%s", map[bool]string{false: "warm", true: "cold"}[cold]), func(b *testing.B) {
			var lat []time.Duration
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				if cold {
					b.StopTimer()
					if err := e.Index(ctx, search.Document{ID: "buster", Index: "scifact", Text: "cache buster"}); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				t0 := time.Now()
				res, err := e.Search(ctx, search.Query{Text: l.topics[i%len(l.topics)].Text, Mode: search.ModeHybrid})
				if err != nil || res.Mode != search.ModeHybrid {
					b.Fatalf("hybrid search: mode %q, err %v", res.Mode, err)
				}
				lat = append(lat, time.Since(t0))
				i++
			}
			reportLatency(b, lat)
		})
	}
}
