package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
	"github.com/agentcraftlab/agentcraft/store/storetest"
)

// openStore opens a migrated store on a file in t's temporary directory.
func openStore(t testing.TB, path string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatalf("Open(%s) = %v", path, err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
	})
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate() = %v", err)
	}
	return st
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openStore(t, filepath.Join(t.TempDir(), "agentcraft.db"))
	})
}

func TestOpenCreatesParentDirectory(t *testing.T) {
	// Spaces, '?' and '#' would end the path in a plain DSN.
	path := filepath.Join(t.TempDir(), "new dir", "a?b#c", "agentcraft.db")
	st := openStore(t, path)
	if _, err := st.Workspaces().Create(t.Context(), store.Workspace{Name: "w"}); err != nil {
		t.Fatalf("Create = %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database file: %v", err)
	}
	if st.Path() != path {
		t.Errorf("Path() = %q, want %q", st.Path(), path)
	}
	info, err := os.Stat(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o700 {
		t.Errorf("created directory mode = %v, want 0700", perm)
	}
}

func TestReopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agentcraft.db")
	st, err := sqlite.Open(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	w, err := st.Workspaces().Create(t.Context(), store.Workspace{Name: "kept"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	if err := st.Close(); err != nil {
		t.Errorf("second Close() = %v, want nil", err)
	}
	st2 := openStore(t, path) // migrates again: nothing pending
	got, err := st2.Workspaces().Get(t.Context(), w.ID)
	if err != nil || got.Name != "kept" {
		t.Errorf("Get after reopen = %+v, %v; want the workspace", got, err)
	}
}

func TestMemoryPath(t *testing.T) {
	st, err := sqlite.Open(t.Context(), sqlite.MemoryPath, nil)
	if err != nil {
		t.Fatalf("Open(:memory:) = %v", err)
	}
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Workspaces().GetOrCreate(t.Context(), "default"); err != nil {
		t.Fatal(err)
	}
	path := st.Path()
	if err := st.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary directory of a :memory: store after Close: %v, want removed", err)
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := sqlite.Open(t.Context(), "", nil); err == nil {
		t.Error("Open(\"\") = nil error, want one naming the path")
	}
	if _, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"), &sqlite.Options{MaxReaders: -1}); err == nil {
		t.Error("Open(MaxReaders -1) = nil error")
	}
	// A regular file where the directory should be.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(t.Context(), filepath.Join(file, "db"), nil); err == nil {
		t.Error("Open(path under a file) = nil error")
	}
}

// TestTwoStoresOneFile is `agentcraft migrate` or a second process writing
// while serve writes: busy_timeout must absorb the contention.
func TestTwoStoresOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agentcraft.db")
	st1, st2 := openStore(t, path), openStore(t, path)
	w, err := st1.Workspaces().GetOrCreate(t.Context(), "shared")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 20 {
		st := st1
		if i%2 == 1 {
			st = st2
		}
		wg.Go(func() {
			for range 10 {
				err := st.Usage().Record(t.Context(), store.UsageRecord{WorkspaceID: w.ID, Model: "m", Provider: "p", Status: store.StatusOK})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	sum, err := st2.Usage().Summary(t.Context(), w.ID, time.Time{})
	if err != nil || len(sum) != 1 || sum[0].Requests != 200 {
		t.Errorf("Summary = %+v, %v; want 200 requests", sum, err)
	}
}

func TestSourcesMigration(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "agentcraft.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.MigrateTo(ctx, storetest.SourcesMigrationVersion); err != nil {
		t.Fatal(err)
	}
	storetest.SourcesMigration(t, st, st.Migrate, func(ctx context.Context) error {
		return st.MigrateDownTo(ctx, storetest.SourcesMigrationVersion)
	})
}
