package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/database"
)

// Which commands lock the database
//
// On SQLite one process executes workflow runs: at start it resumes every
// live run (controlplane.Options.SingleProcess) as if it were the only
// executor. A second executing process on the same file would run the
// first one's in-flight steps again, so `serve`, `worker` and `mcp serve
// --stdio` (which runs workflows for its tools) take an exclusive lock on
// DB.lock, a file beside the database, before they open it, and hold it
// until they exit. The kernel releases it when the
// process dies however it dies, so a stale file blocks nothing.
//
// Short commands that only read or add rows (`keys`, `kb`, `migrate`,
// `mcp clients`, `run`, `mcp tools|call`) do not take it: they must keep working beside a
// running server (`keys create` while serve runs is the README's quick
// start), and SQLite's own locking with busy_timeout serializes their
// writes. `agentcraft run` executes a workflow in memory, never a stored
// run, so it cannot repeat one. PostgreSQL needs no lock: there every run
// is leased to the worker executing it.

// lockFileSuffix names the lock file: agentcraft.db.lock beside agentcraft.db.
const lockFileSuffix = ".lock"

// ErrDatabaseLocked is the cause of the error lockDatabase returns when
// another process holds the lock.
var ErrDatabaseLocked = errors.New("database is in use by another process")

// dbLock is a held lock on a SQLite database.
type dbLock struct {
	f *os.File
}

// release drops the lock. It is safe on a nil lock (PostgreSQL).
func (l *dbLock) release() {
	if l == nil || l.f == nil {
		return
	}
	unlockFile(l.f)
	l.f.Close()
	l.f = nil
}

// lockDatabase takes the exclusive lock of the SQLite database u names
// for command (serve, worker, mcp serve), writing this process's pid, command
// and start time into the lock file so that a refused second process can
// name the holder. It returns a nil lock for other databases.
func lockDatabase(u database.URL, command string) (*dbLock, error) {
	if u.Kind != database.SQLite || u.Path == database.MemoryPath {
		return nil, nil
	}
	abs, err := filepath.Abs(u.Path)
	if err != nil {
		return nil, fmt.Errorf("lock database: %w", err)
	}
	lockPath := abs + lockFileSuffix
	// The directory is created as store/sqlite creates it, so that the
	// lock exists before the database does.
	if err := os.MkdirAll(filepath.Dir(lockPath), 0o700); err != nil {
		return nil, fmt.Errorf("lock database: create directory: %w", err)
	}
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock database: %w", err)
	}
	held, err := tryLockFile(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock database %s: %w", lockPath, err)
	}
	if !held {
		holder, _ := os.ReadFile(lockPath)
		f.Close()
		return nil, fmt.Errorf("%w: %s is locked by %s; stop that process first, "+
			"or give this one its own database.url (PostgreSQL runs several workers on one database)",
			ErrDatabaseLocked, abs, describeHolder(holder))
	}
	info := fmt.Sprintf("pid=%d\ncommand=agentcraft %s\nstarted=%s\n", os.Getpid(), command, time.Now().UTC().Format(time.RFC3339))
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(info), 0)
	}
	return &dbLock{f: f}, nil
}

// describeHolder turns the lock file's lines into "pid 123 (agentcraft
// serve, started 2025-01-02T03:04:05Z)".
func describeHolder(b []byte) string {
	fields := map[string]string{}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if k, v, ok := strings.Cut(string(line), "="); ok {
			fields[k] = v
		}
	}
	if fields["pid"] == "" {
		return "another process (its lock file names none)"
	}
	return fmt.Sprintf("pid %s (%s, started %s)", fields["pid"], fields["command"], fields["started"])
}
