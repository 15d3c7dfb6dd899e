package sqlite_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/memory"
	"github.com/agentcraftlab/agentcraft/search/searchtest"
	"github.com/agentcraftlab/agentcraft/search/sqlite"
)

// scores maps "index/id" to score.
func scores(hs []search.Hit) map[string]float64 {
	out := make(map[string]float64, len(hs))
	for _, h := range hs {
		out[h.Index+"/"+h.ID] = h.Score
	}
	return out
}

// sameScores reports a difference between two engines' answers: the same
// documents with the same scores (to float32 rounding; both accumulate in
// float32, memory in map order).
func sameScores(t *testing.T, what string, want, got []search.Hit) {
	t.Helper()
	if diff := gocmp.Diff(scores(want), scores(got), gocmp.Comparer(func(a, b float64) bool {
		return math.Abs(a-b) <= 1e-5*math.Max(1, math.Abs(a))
	})); diff != "" {
		t.Errorf("%s: scores (-memory +sqlite):\n%s", what, diff)
	}
}

// TestMatchesMemory replays random batches of indexing, replacing and
// deleting on both engines and compares every answer. The vocabulary is
// small so common terms outgrow one postings segment and deletes hit
// segments in the middle of a term.
func TestMatchesMemory(t *testing.T) {
	ctx := t.Context()
	sq := open(t, nil)
	mem, err := memory.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	vocab := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
		"kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango"}
	doc := func(index string, i int) search.Document {
		words := make([]string, 3+rng.IntN(40))
		for j := range words {
			// Skewed: the first words are in nearly every document.
			words[j] = vocab[min(rng.IntN(len(vocab)), rng.IntN(len(vocab)))]
		}
		return search.Document{ID: fmt.Sprintf("d%04d", i), Index: index, Text: strings.Join(words, " "),
			Metadata: map[string]string{"parity": fmt.Sprint(i % 2)}}
	}
	const n = 3000
	if raceEnabled {
		t.Log("race detector on: a shorter replay")
	}
	total := n
	if raceEnabled {
		total = n / 5
	}
	for i := 0; i < total; {
		batch := []search.Document{}
		for range 1 + rng.IntN(200) {
			index := "a"
			if rng.IntN(4) == 0 {
				index = "b"
			}
			// Ids repeat: some documents are replaced, in the same batch too.
			batch = append(batch, doc(index, rng.IntN(total)))
			i++
		}
		for _, e := range []search.Engine{sq, mem} {
			if err := e.Index(ctx, batch...); err != nil {
				t.Fatal(err)
			}
		}
		if rng.IntN(3) == 0 {
			var ids []string
			for range rng.IntN(50) {
				ids = append(ids, fmt.Sprintf("d%04d", rng.IntN(total)))
			}
			for _, e := range []search.Engine{sq, mem} {
				if err := e.Delete(ctx, "a", ids...); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, q := range []search.Query{
		{Text: "alpha"},
		{Text: "alpha bravo kilo"},
		{Text: "tango sierra sierra"},
		{Text: "romeo", Indexes: []string{"b"}},
		{Text: "delta echo", Filter: map[string]string{"parity": "1"}},
		{Text: "zulu"},
	} {
		q.TopK = total
		want, err := mem.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := sq.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		sameScores(t, fmt.Sprintf("%+v", q), want.Hits, got.Hits)
		// The top 10 agree in order too, ties included.
		q.TopK = 10
		want, _ = mem.Search(ctx, q)
		got, _ = sq.Search(ctx, q)
		if diff := gocmp.Diff(ids(want.Hits), ids(got.Hits)); diff != "" && !nearTie(want.Hits) {
			t.Errorf("%q top 10 (-memory +sqlite):\n%s", q.Text, diff)
		}
	}
	for _, index := range []string{"a", "b"} {
		mn := mem.Len(index)
		sn, err := sq.Len(ctx, index)
		if err != nil || sn != mn {
			t.Errorf("Len(%q) = %d, %v; memory has %d", index, sn, err, mn)
		}
	}
}

func ids(hs []search.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Index + "/" + h.ID
	}
	return out
}

// nearTie reports adjacent scores closer than float32 rounding, where the
// two engines may legitimately order differently.
func nearTie(hs []search.Hit) bool {
	for i := 1; i < len(hs); i++ {
		if d := hs[i-1].Score - hs[i].Score; d > 0 && d < 1e-5*hs[i].Score {
			return true
		}
	}
	return false
}

// TestReopen checks that documents, vectors and statistics survive Close.
func TestReopen(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "kb", "search.db")
	table := map[string][]float32{"north wind": {1, 0}, "east wind": {0, 1}, "query north": {1, 0.1}}
	emb := searchtest.NewTableEmbedder(2, table)
	e, err := sqlite.Open(ctx, path, &sqlite.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	docs := []search.Document{
		{ID: "n", Index: "kb", Text: "north wind", Metadata: map[string]string{"side": "up"}},
		{ID: "e", Index: "kb", Text: "east wind"},
	}
	if err := e.Index(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	before, err := e.Search(ctx, search.Query{Text: "wind", Mode: search.ModeFulltext})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	e, err = sqlite.Open(ctx, path, &sqlite.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	after, err := e.Search(ctx, search.Query{Text: "wind", Mode: search.ModeFulltext})
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(before, after); diff != "" {
		t.Errorf("fulltext after reopening (-before +after):\n%s", diff)
	}
	vec, err := e.Search(ctx, search.Query{Text: "query north", Mode: search.ModeVector})
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff([]string{"kb/n", "kb/e"}, ids(vec.Hits)); diff != "" {
		t.Errorf("vector hits after reopening (-want +got):\n%s", diff)
	}
	if len(vec.Hits) > 0 && math.Abs(vec.Hits[0].Score-1/math.Sqrt(1.01)) > 1e-6 {
		t.Errorf("cosine of the nearest = %v, want %v: vectors must be stored normalised", vec.Hits[0].Score, 1/math.Sqrt(1.01))
	}
}

// TestDeleteIndex checks that a dropped index is gone, that re-creating it
// starts empty, and that its vectors are not served from a stale cache.
func TestDeleteIndex(t *testing.T) {
	ctx := t.Context()
	table := map[string][]float32{"old text": {1, 0}, "new text": {0, 1}, "probe": {1, 0}}
	e := open(t, &sqlite.Options{Embedder: searchtest.NewTableEmbedder(2, table)})
	if err := e.Index(ctx, search.Document{ID: "x", Index: "kb", Text: "old text"},
		search.Document{ID: "y", Index: "other", Text: "old text"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Search(ctx, search.Query{Text: "probe", Mode: search.ModeVector}); err != nil {
		t.Fatal(err) // fills the vector cache
	}
	if err := e.DeleteIndex(ctx, "kb"); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteIndex(ctx, "no-such-index"); err != nil {
		t.Errorf("DeleteIndex of an unknown index: %v", err)
	}
	res, err := e.Search(ctx, search.Query{Text: "old", Mode: search.ModeFulltext})
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff([]string{"other/y"}, ids(res.Hits)); diff != "" {
		t.Errorf("after DeleteIndex(kb) (-want +got):\n%s", diff)
	}
	if err := e.Index(ctx, search.Document{ID: "z", Index: "kb", Text: "new text"}); err != nil {
		t.Fatal(err)
	}
	res, err = e.Search(ctx, search.Query{Text: "probe", Mode: search.ModeVector, Indexes: []string{"kb"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff([]string{"kb/z"}, ids(res.Hits)); diff != "" {
		t.Errorf("vector hits in the re-created index (-want +got):\n%s", diff)
	}
	if n, err := e.Len(ctx, "kb"); err != nil || n != 1 {
		t.Errorf("Len(kb) = %d, %v; want 1", n, err)
	}
}

func TestOpenRejectsBadOptions(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		path string
		opts *sqlite.Options
		want string
	}{
		{"empty path", "", nil, "path is empty"},
		{"negative b", filepath.Join(dir, "a.db"), &sqlite.Options{BM25: &memory.BM25{K1: 1.2, B: -0.1}}, "0 <= b <= 1"},
		{"negative readers", filepath.Join(dir, "b.db"), &sqlite.Options{MaxReaders: -1}, "MaxReaders"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, err := sqlite.Open(t.Context(), tt.path, tt.opts)
			if err == nil {
				e.Close()
				t.Fatalf("Open succeeded, want an error mentioning %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
		})
	}
}

func TestMemoryPath(t *testing.T) {
	e, err := sqlite.Open(t.Context(), sqlite.MemoryPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Index(t.Context(), search.Document{ID: "a", Index: "kb", Text: "ephemeral"}); err != nil {
		t.Fatal(err)
	}
	path := e.Path()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Dir(path) + "/*"); len(m) != 0 {
		t.Errorf("Close left %v behind", m)
	}
}
