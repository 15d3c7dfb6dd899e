//go:build unix

package sqlite

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpenCreatesPrivateFiles: a new database, its WAL and its shared
// memory file are 0600 even under umask 022, which would leave them 0644.
func TestOpenCreatesPrivateFiles(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "agentcraft.db")
	st, err := Open(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s is %v, want -rw-------", filepath.Base(p), fi.Mode().Perm())
		}
	}
}
