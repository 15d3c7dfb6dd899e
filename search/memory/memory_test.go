package memory

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/token"
)

func ids(hs []search.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Index + "/" + h.ID
	}
	return out
}

func newEngine(t testing.TB, opts *Options, docs ...search.Document) *Engine {
	t.Helper()
	e, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Index(context.Background(), docs...); err != nil {
		t.Fatal(err)
	}
	return e
}

var sample = []search.Document{
	{ID: "go", Index: "kb", Title: "Go", Text: "Go is a programming language with goroutines and channels.", Metadata: map[string]string{"lang": "en"}},
	{ID: "rust", Index: "kb", Title: "Rust", Text: "Rust is a programming language focused on memory safety.", Metadata: map[string]string{"lang": "en"}},
	{ID: "tea", Index: "kb", Title: "Tea", Text: "Green tea is brewed from leaves.", Metadata: map[string]string{"lang": "en", "topic": "food"}},
	{ID: "ja", Index: "kb", Title: "梅雨", Text: "梅雨は東アジアの雨の多い期間のこと。", Metadata: map[string]string{"lang": "ja"}},
	{ID: "go2", Index: "notes", Text: "Channels in Go pass values between goroutines.", Metadata: map[string]string{"lang": "en"}},
}

func search1(t *testing.T, e *Engine, q search.Query) search.Result {
	t.Helper()
	res, err := e.Search(context.Background(), q)
	if err != nil {
		t.Fatalf("Search(%+v): %v", q, err)
	}
	return res
}

func TestFulltext(t *testing.T) {
	e := newEngine(t, nil, sample...)
	tests := []struct {
		name string
		q    search.Query
		want []string
	}{
		{"one index", search.Query{Text: "programming language", Indexes: []string{"kb"}}, []string{"kb/go", "kb/rust"}},
		// Statistics are per index: in the one-document "notes" index the
		// terms are common (low idf), so kb/go ranks first.
		{"all indexes", search.Query{Text: "goroutines channels"}, []string{"kb/go", "notes/go2"}},
		{"title is searched", search.Query{Text: "tea"}, []string{"kb/tea"}},
		{"stemmed query", search.Query{Text: "brewing leaf"}, []string{"kb/tea"}},
		{"japanese", search.Query{Text: "梅雨の期間"}, []string{"kb/ja"}},
		{"filter", search.Query{Text: "programming language goroutines", Filter: map[string]string{"lang": "en"}, Indexes: []string{"notes"}}, []string{"notes/go2"}},
		{"filter excludes", search.Query{Text: "tea programming", Filter: map[string]string{"topic": "food"}}, []string{"kb/tea"}},
		{"top k", search.Query{Text: "programming language", TopK: 1}, []string{"kb/go"}},
		{"unknown index", search.Query{Text: "go", Indexes: []string{"nope"}}, []string{}},
		{"stopwords only", search.Query{Text: "the of and"}, []string{}},
		{"no match", search.Query{Text: "zebra"}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := search1(t, e, tt.q)
			if diff := cmp.Diff(tt.want, ids(res.Hits)); diff != "" {
				t.Errorf("hits mismatch (-want +got):\n%s", diff)
			}
			if res.Mode != search.ModeFulltext || res.Note != "" {
				t.Errorf("mode %q note %q, want fulltext and no note", res.Mode, res.Note)
			}
		})
	}
}

func TestBM25Scores(t *testing.T) {
	// Two documents, k1=1.2 b=0.75: "a b" (len 2) and "a" (len 1); avgdl 1.5.
	// Query "b": df 1, N 2, idf = ln(1+(2-1+0.5)/1.5) = ln 2;
	// doc1 score = ln2 * 1/(1 + 1.2*(0.25+0.75*2/1.5)) = ln2/2.5.
	e := newEngine(t, &Options{BM25: &BM25{K1: 1.2, B: 0.75}, Tokenizer: token.New(&token.Options{DisableStemming: true, KeepStopwords: true})},
		search.Document{ID: "1", Index: "x", Text: "a b"}, search.Document{ID: "2", Index: "x", Text: "a"})
	res := search1(t, e, search.Query{Text: "b"})
	want := 0.6931471805599453 / 2.5
	if len(res.Hits) != 1 || res.Hits[0].ID != "1" || diff(res.Hits[0].Score, want) > 1e-6 {
		t.Fatalf("hits %+v, want doc 1 with score %v", res.Hits, want)
	}
	// Repeating a query term doubles its weight.
	res2 := search1(t, e, search.Query{Text: "b b"})
	if diff(res2.Hits[0].Score, 2*want) > 1e-6 {
		t.Errorf("score for \"b b\" = %v, want %v", res2.Hits[0].Score, 2*want)
	}
}

func diff(a, b float64) float64 {
	if a > b {
		return a - b
	}
	return b - a
}

func TestTiesOrderedByID(t *testing.T) {
	var docs []search.Document
	for _, id := range []string{"d", "b", "a", "c"} {
		docs = append(docs, search.Document{ID: id, Index: "x", Text: "same words"})
	}
	e := newEngine(t, nil, docs...)
	res := search1(t, e, search.Query{Text: "words", TopK: 3})
	if diff := cmp.Diff([]string{"x/a", "x/b", "x/c"}, ids(res.Hits)); diff != "" {
		t.Errorf("hits mismatch (-want +got):\n%s", diff)
	}
}

func TestDeleteAndReplace(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, nil, sample...)
	if err := e.Delete(ctx, "kb", "go", "missing"); err != nil {
		t.Fatal(err)
	}
	if got := ids(search1(t, e, search.Query{Text: "goroutines"}).Hits); !slices.Equal(got, []string{"notes/go2"}) {
		t.Errorf("after delete: %v, want [notes/go2]", got)
	}
	if e.Len("kb") != 3 {
		t.Errorf("Len(kb) = %d, want 3", e.Len("kb"))
	}
	// Replacing a document drops its old terms.
	if err := e.Index(ctx, search.Document{ID: "rust", Index: "kb", Text: "Ferris the crab"}); err != nil {
		t.Fatal(err)
	}
	if got := ids(search1(t, e, search.Query{Text: "memory safety"}).Hits); len(got) != 0 {
		t.Errorf("old text still found: %v", got)
	}
	if got := ids(search1(t, e, search.Query{Text: "crab"}).Hits); !slices.Equal(got, []string{"kb/rust"}) {
		t.Errorf("new text: %v, want [kb/rust]", got)
	}
	if e.Len("kb") != 3 {
		t.Errorf("Len(kb) after replace = %d, want 3", e.Len("kb"))
	}
	// The engine keeps its own metadata copy.
	meta := map[string]string{"lang": "en"}
	if err := e.Index(ctx, search.Document{ID: "m", Index: "kb", Text: "copy check", Metadata: meta}); err != nil {
		t.Fatal(err)
	}
	meta["lang"] = "fr"
	if got := ids(search1(t, e, search.Query{Text: "copy", Filter: map[string]string{"lang": "en"}}).Hits); !slices.Equal(got, []string{"kb/m"}) {
		t.Errorf("filter after caller changed metadata: %v, want [kb/m]", got)
	}
}

func TestDeleteIndex(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, nil, sample...)
	if err := e.DeleteIndex(ctx, "kb"); err != nil {
		t.Fatal(err)
	}
	if got := ids(search1(t, e, search.Query{Text: "programming language goroutines"}).Hits); !slices.Equal(got, []string{"notes/go2"}) {
		t.Errorf("after DeleteIndex(kb): %v, want only [notes/go2]", got)
	}
	if e.Len("kb") != 0 || e.Len("notes") != 1 {
		t.Errorf("Len(kb) = %d, Len(notes) = %d, want 0 and 1", e.Len("kb"), e.Len("notes"))
	}
	if err := e.DeleteIndex(ctx, "missing"); err != nil {
		t.Errorf("DeleteIndex of an unknown index: %v", err)
	}
	// The name can be used again from scratch.
	if err := e.Index(ctx, search.Document{ID: "n", Index: "kb", Text: "fresh start"}); err != nil {
		t.Fatal(err)
	}
	if got := ids(search1(t, e, search.Query{Text: "programming fresh", Indexes: []string{"kb"}}).Hits); !slices.Equal(got, []string{"kb/n"}) {
		t.Errorf("after re-creating kb: %v, want [kb/n]", got)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := e.DeleteIndex(cctx, "notes"); !errors.Is(err, context.Canceled) {
		t.Errorf("DeleteIndex with a cancelled context: %v, want context.Canceled", err)
	}
}

func TestIndexRejectsBadDocuments(t *testing.T) {
	e := newEngine(t, nil)
	if err := e.Index(context.Background(), search.Document{ID: "x", Text: "no index"}); err == nil {
		t.Error("Index accepted a document without an index")
	}
	if _, err := New(&Options{BM25: &BM25{K1: 1, B: 2}}); err == nil {
		t.Error("New accepted b=2")
	}
	if _, err := e.Search(context.Background(), search.Query{Mode: "semantic"}); err == nil {
		t.Error("Search accepted mode semantic")
	}
}

// tableEmbedder is a test fake standing in for a real model: it returns the
// vector registered for each text and fails for unknown texts or when down.
type tableEmbedder struct {
	dim int
	mu  sync.Mutex
	vec map[string][]float32
	err error
}

func (f *tableEmbedder) Dimension() int { return f.dim }

func (f *tableEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v, ok := f.vec[t]
		if !ok {
			return nil, fmt.Errorf("tableEmbedder: no vector for %q", t)
		}
		out[i] = slices.Clone(v)
	}
	return out, nil
}

func TestVectorAndHybrid(t *testing.T) {
	ctx := context.Background()
	emb := &tableEmbedder{dim: 3, vec: map[string][]float32{
		"A\nalpha words":   {1, 0, 0},
		"B\nbeta words":    {0.8, 0.6, 0},
		"C\ngamma words":   {0, 0, 1},
		"alpha":            {0, 0, 5}, // points at C: the vector list disagrees with BM25
		"gamma words beta": {0.1, 0.9, 0},
	}}
	docs := []search.Document{
		{ID: "a", Index: "x", Title: "A", Text: "alpha words"},
		{ID: "b", Index: "x", Title: "B", Text: "beta words"},
		{ID: "c", Index: "x", Title: "C", Text: "gamma words"},
	}
	e := newEngine(t, &Options{Embedder: emb}, docs...)

	res := search1(t, e, search.Query{Text: "alpha", Mode: search.ModeVector})
	if diff := cmp.Diff([]string{"x/c", "x/a", "x/b"}, ids(res.Hits)); diff != "" {
		t.Errorf("vector hits (-want +got):\n%s", diff)
	}
	if res.Hits[0].Score < 0.999 || res.Mode != search.ModeVector {
		t.Errorf("top cosine %v mode %q, want 1 and vector", res.Hits[0].Score, res.Mode)
	}

	// Auto mode with an embedder is hybrid: BM25 says a, vectors say c, a.
	// a: 1/61+1/62, c: 1/61, b: 1/63.
	res = search1(t, e, search.Query{Text: "alpha"})
	if diff := cmp.Diff([]string{"x/a", "x/c", "x/b"}, ids(res.Hits)); diff != "" {
		t.Errorf("hybrid hits (-want +got):\n%s", diff)
	}
	if res.Mode != search.ModeHybrid || res.Note != "" {
		t.Errorf("mode %q note %q, want hybrid, no note", res.Mode, res.Note)
	}

	// Down-weighting the BM25 list lets the vector list decide:
	// c: 1/61 beats a: 0.01/61 + 1/62.
	ew := newEngine(t, &Options{Embedder: emb, FulltextWeight: 0.01}, docs...)
	if got := ids(search1(t, ew, search.Query{Text: "alpha"}).Hits); got[0] != "x/c" {
		t.Errorf("vector-weighted hybrid top = %v, want x/c first", got)
	}

	// A failing embedder degrades hybrid to BM25 with a note...
	emb.mu.Lock()
	emb.err = errors.New("connection refused")
	emb.mu.Unlock()
	res = search1(t, e, search.Query{Text: "alpha", Mode: search.ModeHybrid})
	if diff := cmp.Diff([]string{"x/a"}, ids(res.Hits)); diff != "" {
		t.Errorf("degraded hits (-want +got):\n%s", diff)
	}
	if res.Mode != search.ModeFulltext || res.Note != "embedder unavailable: fulltext results only" {
		t.Errorf("mode %q note %q, want fulltext with a note", res.Mode, res.Note)
	}
	// ...but vector mode reports the error, and indexing refuses the batch.
	if _, err := e.Search(ctx, search.Query{Text: "alpha", Mode: search.ModeVector}); err == nil {
		t.Error("vector search with a failing embedder returned no error")
	}
	if err := e.Index(ctx, search.Document{ID: "d", Index: "x", Text: "delta"}); err == nil {
		t.Error("Index with a failing embedder returned no error")
	}
	if e.Len("x") != 3 {
		t.Errorf("Len = %d after failed Index, want 3", e.Len("x"))
	}
}

func TestNoEmbedder(t *testing.T) {
	e := newEngine(t, nil, sample...)
	if _, err := e.Search(context.Background(), search.Query{Text: "go", Mode: search.ModeVector}); !errors.Is(err, search.ErrNoEmbedder) {
		t.Errorf("vector without embedder: err %v, want ErrNoEmbedder", err)
	}
	res := search1(t, e, search.Query{Text: "tea", Mode: search.ModeHybrid})
	if res.Mode != search.ModeFulltext || res.Note == "" || len(res.Hits) != 1 {
		t.Errorf("hybrid without embedder: %+v, want fulltext hits with a note", res)
	}
}

func TestVectorFilterAndDelete(t *testing.T) {
	emb := &tableEmbedder{dim: 2, vec: map[string][]float32{"p": {1, 0}, "q": {0.9, 0.1}, "r": {0, 1}, "query": {1, 0}}}
	e := newEngine(t, &Options{Embedder: emb},
		search.Document{ID: "p", Index: "x", Text: "p", Metadata: map[string]string{"k": "1"}},
		search.Document{ID: "q", Index: "x", Text: "q", Metadata: map[string]string{"k": "2"}},
		search.Document{ID: "r", Index: "x", Text: "r", Metadata: map[string]string{"k": "2"}})
	got := ids(search1(t, e, search.Query{Text: "query", Mode: search.ModeVector, Filter: map[string]string{"k": "2"}}).Hits)
	if diff := cmp.Diff([]string{"x/q", "x/r"}, got); diff != "" {
		t.Errorf("filtered vector hits (-want +got):\n%s", diff)
	}
	if err := e.Delete(context.Background(), "x", "q"); err != nil {
		t.Fatal(err)
	}
	got = ids(search1(t, e, search.Query{Text: "query", Mode: search.ModeVector}).Hits)
	if diff := cmp.Diff([]string{"x/p", "x/r"}, got); diff != "" {
		t.Errorf("vector hits after delete (-want +got):\n%s", diff)
	}
}

func randomVectors(r *rand.Rand, n, dim int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		out[i] = v
	}
	return out
}

// vectorEngine indexes n random vectors through a table embedder keyed by
// document text "v<i>".
func vectorEngine(t testing.TB, n, dim int, seed uint64) (*Engine, *tableEmbedder, [][]float32) {
	r := rand.New(rand.NewPCG(seed, 1))
	vecs := randomVectors(r, n, dim)
	emb := &tableEmbedder{dim: dim, vec: make(map[string][]float32, n+64)}
	docs := make([]search.Document, n)
	for i, v := range vecs {
		text := fmt.Sprintf("v%d", i)
		emb.vec[text] = v
		docs[i] = search.Document{ID: text, Index: "vec", Text: text}
	}
	e, err := New(&Options{Embedder: emb, Tokenizer: token.New(nil)})
	if err != nil {
		t.Fatal(err)
	}
	const batch = 1000
	for i := 0; i < n; i += batch {
		if err := e.Index(context.Background(), docs[i:min(i+batch, n)]...); err != nil {
			t.Fatal(err)
		}
	}
	return e, emb, vecs
}

// TestVectorRecallAgainstExact checks brute-force search against exact
// float64 cosine on 100k random 768-dimensional vectors (the issue's
// collection). Under the race detector, which slows the scan tenfold and
// checks nothing numeric, and with -short it uses 2k; `make test` runs it
// once more without the race detector at full size.
func TestVectorRecallAgainstExact(t *testing.T) {
	n, dim := 100_000, 768
	if testing.Short() || raceEnabled {
		n = 2_000
	}
	start := time.Now()
	e, emb, vecs := vectorEngine(t, n, dim, 42)
	t.Logf("indexed %d×%d vectors in %v", n, dim, time.Since(start).Round(time.Millisecond))
	r := rand.New(rand.NewPCG(7, 7))
	queries := randomVectors(r, 20, dim)
	var searchTime time.Duration
	for qi, qv := range queries {
		text := fmt.Sprintf("query%d", qi)
		emb.mu.Lock()
		emb.vec[text] = qv
		emb.mu.Unlock()
		// Exact answer in float64.
		type scored struct {
			id string
			s  float64
		}
		exact := make([]scored, n)
		for i, v := range vecs {
			var d, nv, nq float64
			for j := range v {
				d += float64(v[j]) * float64(qv[j])
				nv += float64(v[j]) * float64(v[j])
				nq += float64(qv[j]) * float64(qv[j])
			}
			exact[i] = scored{fmt.Sprintf("vec/v%d", i), d / (sqrt(nv) * sqrt(nq))}
		}
		slices.SortFunc(exact, func(a, b scored) int {
			if a.s > b.s {
				return -1
			}
			if a.s < b.s {
				return 1
			}
			return 0
		})
		want := make([]string, 10)
		for i := range want {
			want[i] = exact[i].id
		}
		t0 := time.Now()
		res := search1(t, e, search.Query{Text: text, Mode: search.ModeVector, TopK: 10})
		searchTime += time.Since(t0)
		got := ids(res.Hits)
		found := 0
		for _, id := range got {
			if slices.Contains(want, id) {
				found++
			}
		}
		if found != 10 {
			t.Errorf("query %d: recall@10 = %d/10\ngot  %v\nwant %v", qi, found, got, want)
		}
	}
	t.Logf("mean vector query over %d×%d: %v", n, dim, (searchTime / time.Duration(len(queries))).Round(time.Microsecond))
}

func sqrt(x float64) float64 {
	z := x
	for range 60 {
		z = (z + x/z) / 2
	}
	return z
}

func TestConcurrentUse(t *testing.T) {
	e := newEngine(t, nil, sample...)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				id := fmt.Sprintf("w%d-%d", w, i)
				if err := e.Index(ctx, search.Document{ID: id, Index: "kb", Text: "concurrent goroutines"}); err != nil {
					t.Error(err)
					return
				}
				if _, err := e.Search(ctx, search.Query{Text: "goroutines"}); err != nil {
					t.Error(err)
					return
				}
				if i%2 == 0 {
					if err := e.Delete(ctx, "kb", id); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if got, want := e.Len("kb"), len(sample)-1+4*25; got != want {
		t.Errorf("Len(kb) = %d, want %d", got, want)
	}
}

// BenchmarkVectorQuery100k times brute-force search over 100k×768 vectors
// (about 300 MB); it only runs with -bench.
func BenchmarkVectorQuery100k(b *testing.B) {
	const n, dim = 100_000, 768
	e, emb, _ := vectorEngine(b, n, dim, 3)
	r := rand.New(rand.NewPCG(9, 9))
	q := randomVectors(r, 1, dim)[0]
	emb.vec["q"] = q
	ctx := context.Background()
	runtime.GC() // collect the setup's garbage so it isn't charged to queries
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Search(ctx, search.Query{Text: "q", Mode: search.ModeVector, TopK: 10}); err != nil {
			b.Fatal(err)
		}
	}
}
