package sqlite_test

import (
	"os"
	"path/filepath"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/internal/database"
	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/searchtest"
	"github.com/agentcraftlab/agentcraft/search/sqlite"
)

// TestMoveFrom: the index an older install kept in search.db moves into
// the main database with its documents, vectors and statistics; the old
// file is renamed, and a second start copies nothing.
func TestMoveFrom(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	old := filepath.Join(dir, "search.db")
	emb := searchtest.NewTableEmbedder(2, map[string][]float32{"north wind": {1, 0}, "east wind": {0, 1}, "wind": {1, 0.2}, "calm": {0.5, 0.5}, "wind calm": {0.7, 0.7}, "south wind": {0.9, 0.1}})
	opts := &sqlite.Options{Embedder: emb}
	e, err := sqlite.Open(ctx, old, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Index(ctx,
		search.Document{ID: "n", Index: "kb", Text: "north wind", Metadata: map[string]string{"side": "up"}},
		search.Document{ID: "e", Index: "kb", Text: "east wind"},
		search.Document{ID: "x", Index: "other", Text: "calm"},
	); err != nil {
		t.Fatal(err)
	}
	queries := []search.Query{
		{Text: "wind", Mode: search.ModeFulltext},
		{Text: "wind", Mode: search.ModeVector},
		{Text: "wind calm", Mode: search.ModeHybrid, Indexes: []string{"kb", "other"}},
	}
	var before []search.Result
	for _, q := range queries {
		r, err := e.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, r)
	}
	// A server killed mid-write leaves the WAL beside the file; the move
	// must read it too.
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	db := mainDB(t, dir)
	n, err := sqlite.MoveFrom(ctx, db, old)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("moved %d documents, want 3", n)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("%s still there after the move (stat: %v)", old, err)
	}
	if _, err := os.Stat(old + sqlite.MovedSuffix); err != nil {
		t.Errorf("the old file was not kept as %s: %v", old+sqlite.MovedSuffix, err)
	}
	moved, err := sqlite.New(ctx, db, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer moved.Close()
	for i, q := range queries {
		r, err := moved.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if diff := gocmp.Diff(before[i], r); diff != "" {
			t.Errorf("query %d after the move (-before +after):\n%s", i, diff)
		}
	}
	// New documents take fresh ids after the copied ones.
	if err := moved.Index(ctx, search.Document{ID: "s", Index: "kb", Text: "south wind"}); err != nil {
		t.Fatal(err)
	}
	r, err := moved.Search(ctx, search.Query{Text: "wind", Mode: search.ModeFulltext, Indexes: []string{"kb"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Hits) != 3 {
		t.Errorf("after indexing one more: %d hits, want 3", len(r.Hits))
	}

	// Nothing left to move: no error, nothing copied.
	if n, err := sqlite.MoveFrom(ctx, db, old); err != nil || n != 0 {
		t.Errorf("second MoveFrom = %d, %v; want 0, nil", n, err)
	}
}

// TestMoveFromAfterCopy: a file whose rows were copied before a crash
// stopped the rename is renamed, not copied a second time over a database
// that already holds an index.
func TestMoveFromAfterCopy(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	old := filepath.Join(dir, "search.db")
	e, err := sqlite.Open(ctx, old, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Index(ctx, search.Document{ID: "a", Index: "kb", Text: "alpha"}); err != nil {
		t.Fatal(err)
	}
	e.Close()
	db := mainDB(t, dir)
	main, err := sqlite.New(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer main.Close()
	if err := main.Index(ctx, search.Document{ID: "b", Index: "kb", Text: "beta"}); err != nil {
		t.Fatal(err)
	}
	n, err := sqlite.MoveFrom(ctx, db, old)
	if err != nil || n != 0 {
		t.Fatalf("MoveFrom = %d, %v; want 0, nil", n, err)
	}
	if _, err := os.Stat(old + sqlite.MovedSuffix); err != nil {
		t.Errorf("the old file was not renamed: %v", err)
	}
	r, err := main.Search(ctx, search.Query{Text: "alpha beta", Mode: search.ModeFulltext})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Hits) != 1 || r.Hits[0].ID != "b" {
		t.Errorf("hits %+v, want only b", r.Hits)
	}
}

// TestMoveFromForeignFile: a file that is not a search index is named in
// the error and left where it is.
func TestMoveFromForeignFile(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	old := filepath.Join(dir, "search.db")
	if err := os.WriteFile(old, []byte("not a database, just text that is long enough to be read as a header ....."), 0o600); err != nil {
		t.Fatal(err)
	}
	db := mainDB(t, dir)
	if _, err := sqlite.MoveFrom(ctx, db, old); err == nil {
		t.Fatal("MoveFrom of a text file succeeded")
	}
	if _, err := os.Stat(old); err != nil {
		t.Errorf("the file was moved or removed: %v", err)
	}
}

// mainDB opens and migrates the main database in dir, closed when t ends.
func mainDB(t *testing.T, dir string) *database.DB {
	t.Helper()
	db, err := database.OpenSQLite(t.Context(), filepath.Join(dir, "agentcraft.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := sqlite.Migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	return db
}
