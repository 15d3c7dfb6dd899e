package searchtest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/memory"
)

// Dropper is an engine that can drop an index, as search/memory and the
// database engines do.
type Dropper interface {
	search.Engine
	DeleteIndex(ctx context.Context, index string) error
}

// cacheStep is one write in CacheSeesWrites, made through the engine that
// owns the cache (other false) or through a second engine on the same
// storage (other true).
type cacheStep struct {
	name     string
	other    bool
	index    []search.Document
	delete   []string // ids in "kb"
	dropKB   bool     // DeleteIndex("kb") first
	wantHits map[string][]string
}

var cacheSteps = []cacheStep{
	{name: "first batch", index: []search.Document{
		{ID: "d1", Index: "kb", Text: "red apple"},
		{ID: "d2", Index: "kb", Text: "green apple pie"},
		{ID: "d3", Index: "kb", Text: "red wine"},
	}, wantHits: map[string][]string{"zebra": {}}},
	{name: "other engine adds", other: true, index: []search.Document{
		{ID: "d4", Index: "kb", Text: "apple apple cider"},
		{ID: "z", Index: "kb", Text: "a zebra"},
	}, wantHits: map[string][]string{"zebra": {"kb/z"}}},
	{name: "same engine deletes", delete: []string{"d1", "z"}, wantHits: map[string][]string{"zebra": {}}},
	{name: "other engine replaces", other: true, index: []search.Document{
		{ID: "d2", Index: "kb", Text: "blue pie"},
	}},
	{name: "other engine deletes", other: true, delete: []string{"d3"}},
	{name: "second index", index: []search.Document{
		{ID: "o1", Index: "other", Text: "red apple cider"},
	}},
	{name: "other engine re-creates kb", other: true, dropKB: true, index: []search.Document{
		{ID: "d5", Index: "kb", Text: "red red apple"},
	}},
}

var cacheQueries = []string{"apple", "red", "pie", "apple red cider", "zebra", "wine"}

// CacheSeesWrites checks that an engine's posting cache never serves a
// list a write has made stale: a and b are two new, empty engines on the
// same storage (b standing for another process). It applies a series of
// writes (add, delete, replace, a second index, dropping and re-creating
// an index) to a or b and to search/memory, and after every write checks
// that a, whose cache is warm from the previous step's queries, answers
// each query twice (once filling the cache, once reading it) with
// memory's hits, scores and order.
func CacheSeesWrites(t *testing.T, a, b Dropper) {
	ctx := t.Context()
	mem, err := memory.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range cacheSteps {
		w := a
		if st.other {
			w = b
		}
		for _, e := range []Dropper{w, mem} {
			if st.dropKB {
				if err := e.DeleteIndex(ctx, "kb"); err != nil {
					t.Fatal(err)
				}
			}
			if len(st.delete) > 0 {
				if err := e.Delete(ctx, "kb", st.delete...); err != nil {
					t.Fatal(err)
				}
			}
			if len(st.index) > 0 {
				if err := e.Index(ctx, st.index...); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, q := range cacheQueries {
			sq := search.Query{Text: q, Mode: search.ModeFulltext, TopK: 10}
			want, err := mem.Search(ctx, sq)
			if err != nil {
				t.Fatal(err)
			}
			// Twice: the first may fill the cache, the second reads it.
			for range 2 {
				got, err := a.Search(ctx, sq)
				if err != nil {
					t.Fatalf("%s: %q: %v", st.name, q, err)
				}
				what := fmt.Sprintf("after %s, %q", st.name, q)
				SameScores(t, "cached engine", what, want.Hits, got.Hits)
				if diff := gocmp.Diff(IDs(want.Hits), IDs(got.Hits)); diff != "" {
					t.Errorf("%s: order (-memory +cached engine):\n%s", what, diff)
				}
				if ids, ok := st.wantHits[q]; ok {
					if diff := gocmp.Diff(ids, IDs(got.Hits)); diff != "" {
						t.Errorf("%s: hits (-want +got):\n%s", what, diff)
					}
				}
			}
		}
	}
}

// CacheConcurrent runs searches on a while b, a second engine on the same
// storage, writes (a and b new and empty), then checks that a answers as
// search/memory does: a list cached by a search that overlapped a write
// must not outlive it. Run it with -race.
func CacheConcurrent(t *testing.T, a, b search.Engine) {
	ctx := t.Context()
	mem, err := memory.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta"}
	doc := func(i int) search.Document {
		return search.Document{ID: fmt.Sprint("d", i%40), Index: "kb",
			Text: strings.Repeat(words[i%len(words)]+" ", 1+i%3) + words[(i*7+1)%len(words)]}
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	for g := range 3 {
		wg.Go(func() {
			for i := g; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				q := words[i%len(words)] + " " + words[(i+g)%len(words)]
				if _, err := a.Search(ctx, search.Query{Text: q, Mode: search.ModeFulltext}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for i := range 60 {
		batch := []search.Document{doc(i), doc(i + 17)}
		for _, e := range []search.Engine{b, mem} {
			if err := e.Index(ctx, batch...); err != nil {
				t.Fatal(err)
			}
			if i%5 == 4 {
				if err := e.Delete(ctx, "kb", fmt.Sprint("d", i%40)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	close(done)
	wg.Wait()
	for _, w := range words {
		for _, q := range []string{w, w + " " + words[0]} {
			sq := search.Query{Text: q, Mode: search.ModeFulltext, TopK: 50}
			want, err := mem.Search(ctx, sq)
			if err != nil {
				t.Fatal(err)
			}
			got, err := a.Search(ctx, sq)
			if err != nil {
				t.Fatal(err)
			}
			SameScores(t, "cached engine", q, want.Hits, got.Hits)
		}
	}
}
