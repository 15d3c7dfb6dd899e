package queue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// backend is the database kind named by a DatabaseURL.
type backend int

const (
	backendSQLite backend = iota + 1
	backendPostgres
)

// parseURL splits a DatabaseURL into its backend and, for SQLite, the file
// path. It accepts what the app's config accepts (cmd/agentcraft/internal/config):
// sqlite://PATH, postgres://… and postgresql://….
func parseURL(url string) (backend, string, error) {
	switch {
	case strings.HasPrefix(url, "sqlite://"):
		path := strings.TrimPrefix(url, "sqlite://")
		switch path {
		case "":
			return 0, "", errors.New("queue: DatabaseURL: sqlite:// has no path; use sqlite://PATH, e.g. sqlite://./data/agentcraft.db")
		case ":memory:", "file::memory:":
			// River needs its own connection to the file shared with the
			// store; an in-memory database is private to one connection.
			return 0, "", fmt.Errorf("queue: DatabaseURL: %q is not supported; use a file path (a temporary file in tests)", url)
		}
		return backendSQLite, path, nil
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		return backendPostgres, "", nil
	}
	return 0, "", fmt.Errorf("queue: DatabaseURL: %q must start with sqlite:// or postgres://", url)
}

// openSQLite opens River's own handle on the SQLite file at path.
//
// It holds exactly one connection: River runs its producers, completer,
// elector and notifier concurrently, and two of its connections in one
// process would fail each other with SQLITE_BUSY instead of queueing in Go.
// The store's pools on the same file are other connections; busy_timeout
// makes either side wait for the other's write lock, and BEGIN IMMEDIATE
// (_txlock) takes that lock at the start of a transaction, where waiting
// works, rather than at its first write, where a WAL snapshot conflict
// fails at once.
func openSQLite(ctx context.Context, path string) (*sql.DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("queue: open sqlite: create directory: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("queue: open sqlite %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", sqliteDSN(abs))
	if err != nil {
		return nil, fmt.Errorf("queue: open sqlite %s: %w", abs, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("queue: open sqlite %s: %w", abs, err)
	}
	return db, nil
}

// sqliteDSN is the driver's connection string for the file at abs, with
// the pragmas store/sqlite uses for its writer, so both agree on WAL. A
// file: URI keeps '?' and '#' in the path from starting the parameters.
func sqliteDSN(abs string) string {
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // Windows: C:/x becomes /C:/x
	}
	var b strings.Builder
	b.WriteString("file://")
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '%', '?', '#', ' ':
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString("?_pragma=busy_timeout(5000)")
	b.WriteString("&_pragma=journal_mode(WAL)")
	b.WriteString("&_pragma=foreign_keys(1)")
	b.WriteString("&_pragma=synchronous(NORMAL)")
	b.WriteString("&_txlock=immediate")
	return b.String()
}

// openPostgres opens River's own pool. River keeps one connection for
// LISTEN and borrows others for fetching and completing jobs; handlers do
// not use it.
func openPostgres(ctx context.Context, url string) (*pgxpool.Pool, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("queue: open postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("queue: open postgres: %w", err)
	}
	return pool, nil
}

// migrateLockKey is the PostgreSQL advisory lock that serializes River
// migrations between processes starting at once (serve and workers):
// rivermigrate itself does not lock. The value is arbitrary but fixed.
const migrateLockKey int64 = 0x61676e74_71756575 // "agntqueu"

// withMigrateLock runs f while holding migrateLockKey on a connection of
// pool.
func withMigrateLock(ctx context.Context, pool *pgxpool.Pool, f func() error) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrateLockKey); err != nil {
		return err
	}
	// Unlock even when ctx has ended, so the pooled session does not keep
	// the lock.
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrateLockKey) //nolint:errcheck
	return f()
}
