package sqlite_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/memory"
	"github.com/agentcraftlab/agentcraft/search/searchtest"
	"github.com/agentcraftlab/agentcraft/search/sqlite"
)

// TestMatchesMemory replays random batches of indexing, replacing and
// deleting on both engines and compares every answer.
func TestMatchesMemory(t *testing.T) {
	searchtest.MatchesMemory(t, "sqlite", open(t, nil))
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
	if diff := gocmp.Diff([]string{"kb/n", "kb/e"}, searchtest.IDs(vec.Hits)); diff != "" {
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
	if diff := gocmp.Diff([]string{"other/y"}, searchtest.IDs(res.Hits)); diff != "" {
		t.Errorf("after DeleteIndex(kb) (-want +got):\n%s", diff)
	}
	if err := e.Index(ctx, search.Document{ID: "z", Index: "kb", Text: "new text"}); err != nil {
		t.Fatal(err)
	}
	res, err = e.Search(ctx, search.Query{Text: "probe", Mode: search.ModeVector, Indexes: []string{"kb"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff([]string{"kb/z"}, searchtest.IDs(res.Hits)); diff != "" {
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
