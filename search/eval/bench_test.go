package eval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/memory"
	"github.com/agentcraftlab/agentcraft/search/token"
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

func BenchmarkSciFactBM25Query(b *testing.B) {
	l := load(b, scifact)
	e, err := memory.New(nil)
	if err != nil {
		b.Fatal(err)
	}
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

func BenchmarkSciFactIndex(b *testing.B) {
	l := load(b, scifact)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		e, err := memory.New(nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := e.Index(ctx, l.docs...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(l.docs)*b.N)/b.Elapsed().Seconds(), "docs/s")
}

func BenchmarkJSQuADIndex(b *testing.B) {
	l := load(b, jsquad)
	ctx := context.Background()
	token.New(nil).Tokens("辞書を読み込む") // the one-time dictionary load is not indexing
	b.ReportAllocs()
	for b.Loop() {
		e, err := memory.New(nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := e.Index(ctx, l.docs...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(l.docs)*b.N)/b.Elapsed().Seconds(), "docs/s")
}

// randomEmbedder is a benchmark fixture: it returns a fixed random vector
// per text so the engine's hybrid path can be timed without a model. It
// says nothing about quality and must never be used outside tests.
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

func BenchmarkSciFactHybridQuery(b *testing.B) {
	l := load(b, scifact)
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
		if d.Title == "" {
			add(d.Text)
		} else {
			add(d.Title + "\n" + d.Text)
		}
	}
	for _, t := range l.topics {
		add(t.Text)
	}
	e, err := memory.New(&memory.Options{Embedder: emb})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := e.Index(ctx, l.docs...); err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		res, err := e.Search(ctx, search.Query{Text: l.topics[i%len(l.topics)].Text, Mode: search.ModeHybrid})
		if err != nil || res.Mode != search.ModeHybrid {
			b.Fatalf("hybrid search: mode %q, err %v", res.Mode, err)
		}
		lat = append(lat, time.Since(t0))
		i++
	}
	reportLatency(b, lat)
}
