package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/kb"
	sqlitesearch "github.com/agentcraftlab/agentcraft/search/sqlite"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
)

// TestOldSearchFileMovesIn: an install from before the search index moved
// into agentcraft.db (its index in data/search.db beside it) keeps its
// knowledge bases: the first command that opens the database moves the
// index in, the old file is kept renamed, and search answers as before.
func TestOldSearchFileMovesIn(t *testing.T) {
	dir, cfg := kbConfig(t)
	dbDir := filepath.Join(dir, "db")
	ctx := context.Background()
	// The old layout, written as the old binary wrote it: two files.
	st, err := sqlite.Open(ctx, filepath.Join(dbDir, "agentcraft.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	eng, err := sqlitesearch.Open(ctx, filepath.Join(dbDir, legacySearchFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := kb.New(kb.Options{Store: st, Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := st.Workspaces().GetOrCreate(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	base, err := svc.Create(ctx, ws.ID, "zoo", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Ingest(ctx, base, "octopus.txt", []byte("Octopuses have three hearts and blue blood.")); err != nil {
		t.Fatal(err)
	}
	eng.Close()
	st.Close()

	out, errOut := mustRun(t, with(cfg, "migrate")...)
	if !strings.Contains(out, "moved 1 search documents") {
		t.Errorf("migrate printed %q (stderr %q)", out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dbDir, legacySearchFile)); !os.IsNotExist(err) {
		t.Errorf("%s still in place: %v", legacySearchFile, err)
	}
	if _, err := os.Stat(filepath.Join(dbDir, legacySearchFile+sqlitesearch.MovedSuffix)); err != nil {
		t.Errorf("old file not kept: %v", err)
	}
	out, _ = mustRun(t, with(cfg, "kb", "search", "--kb", "zoo", "how many hearts")...)
	if !strings.Contains(out, "octopus.txt") {
		t.Errorf("search after the move printed %q, want the octopus document", out)
	}
}
