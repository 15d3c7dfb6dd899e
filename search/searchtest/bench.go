package searchtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/search"
)

// ReportLatency adds p50 and p99 of the recorded per-query times to b.
func ReportLatency(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds()), "p99-µs")
}

// QueryBench indexes l into e and times top-10 BM25 queries over its
// topics.
func QueryBench(b *testing.B, e search.Engine, l Loaded) {
	ctx := context.Background()
	if err := e.Index(ctx, l.Docs...); err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		if _, err := e.Search(ctx, search.Query{Text: l.Topics[i%len(l.Topics)].Text, Mode: search.ModeFulltext}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		i++
	}
	ReportLatency(b, lat)
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

// HybridBench times hybrid queries over l with 768-dimension random
// vectors, on an engine from open (new and empty, using emb). cache=warm
// is the steady state; cache=cold writes one document before each query,
// so every query reloads the index's vectors from storage: the difference
// is what an engine's per-index vector cache saves.
func HybridBench(b *testing.B, l Loaded, open func(b *testing.B, emb search.Embedder) search.Engine) {
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
	for _, d := range l.Docs {
		add(d.Title + "\n" + d.Text)
	}
	for _, t := range l.Topics {
		add(t.Text)
	}
	add("cache buster")
	ctx := context.Background()
	e := open(b, emb)
	if err := e.Index(ctx, l.Docs...); err != nil {
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
				res, err := e.Search(ctx, search.Query{Text: l.Topics[i%len(l.Topics)].Text, Mode: search.ModeHybrid})
				if err != nil || res.Mode != search.ModeHybrid {
					b.Fatalf("hybrid search: mode %q, err %v", res.Mode, err)
				}
				lat = append(lat, time.Since(t0))
				i++
			}
			ReportLatency(b, lat)
		})
	}
}
