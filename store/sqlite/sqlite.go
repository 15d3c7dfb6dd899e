// Package sqlite implements store.Store on one SQLite file, for the
// single-machine `agentcraft serve`. It uses modernc.org/sqlite (pure Go, no
// cgo).
//
//	st, err := sqlite.Open(ctx, "data/agentcraft.db", nil)
//	if err != nil { ... }
//	defer st.Close()
//	err = st.Migrate(ctx)
//
// SQLite lets one connection write at a time; a second writer waits on
// busy_timeout and then fails with "database is locked". The Store therefore
// keeps two pools on the same file: a writer pool of exactly one connection,
// through which every write goes (so writes queue in Go instead of
// contending for the file lock), and a reader pool of several query_only
// connections, which in WAL mode read concurrently with the writer. Every
// connection runs with journal_mode=WAL, busy_timeout=5000 (for other
// processes on the same file, such as `agentcraft migrate`),
// foreign_keys=ON and synchronous=NORMAL (durable at each WAL checkpoint,
// safe against corruption; a power cut may lose the last transactions).
//
// Times are stored as INTEGER microseconds since the epoch (UTC), JSON as
// TEXT; the tables are STRICT.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/internal/migrate"
)

//go:embed migrations/*.sql
var migrations embed.FS

// MemoryPath is the path that opens a private database in a temporary file,
// removed by Close. A true in-memory database cannot be shared by the
// writer and reader pools, so the file stands in for it.
const MemoryPath = ":memory:"

// Options configures Open. The zero value (or nil) is the default.
type Options struct {
	// Logger receives migration progress at Info. Nil discards.
	Logger *slog.Logger
	// MaxReaders caps the connections serving reads. Zero means
	// max(4, GOMAXPROCS).
	MaxReaders int
}

// Store is a store.Store on a SQLite file. It is safe for concurrent use.
type Store struct {
	// Core implements the aggregates on driver{s}'s SQL verbs.
	store.Core

	path   string
	writer *sql.DB // exactly one connection; every write goes through it
	reader *sql.DB // query_only connections for reads
	// keyByHash is the statement of APIKeys.GetByHash, prepared on first
	// use (the table exists only after Migrate): it runs on every
	// authenticated request, and skipping the per-call parse makes it
	// 1.5-2x faster (BenchmarkAPIKeyGetByHash, Prepared vs Adhoc).
	keyByHash atomic.Pointer[sql.Stmt]
	// writeStmts holds the writer's prepared statements of the run hot
	// path (Runs.Checkpoint, AppendEvents), keyed by SQL text; see
	// writeStmt.
	writeStmts sync.Map // string → *sql.Stmt
	// readStmts holds the reader's prepared statements of other hot
	// reads (Sessions.GetByHash), keyed by SQL text; see readStmt.
	readStmts sync.Map   // string → *sql.Stmt
	prepareMu sync.Mutex // serializes preparing keyByHash and writeStmts
	logger    *slog.Logger
	// tempDir holds the file of a MemoryPath database; Close removes it.
	tempDir string

	closeOnce sync.Once
	closeErr  error // set once by Close
}

var _ store.Store = (*Store)(nil)

// Open opens (creating when needed) the database at path and its parent
// directory. It does not migrate; call Migrate. Pass MemoryPath for a
// throwaway database.
func Open(ctx context.Context, path string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxReaders < 0 {
		return nil, fmt.Errorf("sqlite: open: MaxReaders is %d; set it to 0 (default) or more", o.MaxReaders)
	}
	if o.MaxReaders == 0 {
		o.MaxReaders = max(4, runtime.GOMAXPROCS(0))
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if path == "" {
		return nil, errors.New("sqlite: open: path is empty; set a file path or \":memory:\"")
	}

	s := &Store{logger: o.Logger}
	s.Core = store.NewCore(driver{s})
	if path == MemoryPath {
		dir, err := os.MkdirTemp("", "agentcraft-sqlite-")
		if err != nil {
			return nil, fmt.Errorf("sqlite: open: create temporary directory: %w", err)
		}
		s.tempDir = dir
		path = filepath.Join(dir, "agentcraft.db")
	} else {
		// 0700: the file holds key hashes and sealed credentials.
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("sqlite: open: create directory: %w", err)
		}
	}
	if err := createPrivate(path); err != nil {
		s.removeTemp()
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		s.removeTemp()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	s.path = abs

	s.writer, err = sql.Open("sqlite", dsn(abs, false))
	if err != nil {
		s.removeTemp()
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}
	s.writer.SetMaxOpenConns(1)
	s.writer.SetMaxIdleConns(1)
	s.writer.SetConnMaxLifetime(0)
	s.writer.SetConnMaxIdleTime(0)
	// Connect the writer first: it switches the file to WAL, which the
	// query_only readers cannot do.
	if err := s.writer.PingContext(ctx); err != nil {
		s.writer.Close()
		s.removeTemp()
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}

	s.reader, err = sql.Open("sqlite", dsn(abs, true))
	if err != nil {
		s.writer.Close()
		s.removeTemp()
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}
	s.reader.SetMaxOpenConns(o.MaxReaders)
	s.reader.SetMaxIdleConns(o.MaxReaders)
	if err := s.reader.PingContext(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}
	return s, nil
}

// createPrivate creates the database file at path with mode 0600 unless
// it exists. SQLite would create it 0644 less the umask, and gives its
// -wal and -shm files the mode of the database file, so this keeps all
// three private whatever the umask.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	defer f.Close()
	// The umask may have taken bits from 0600 (as 0277 would): set it exactly.
	if err := f.Chmod(0o600); err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return nil
}

// keyByHashStmt returns the prepared statement of APIKeys.GetByHash.
func (s *Store) keyByHashStmt(ctx context.Context) (*sql.Stmt, error) {
	if stmt := s.keyByHash.Load(); stmt != nil {
		return stmt, nil
	}
	s.prepareMu.Lock()
	defer s.prepareMu.Unlock()
	if stmt := s.keyByHash.Load(); stmt != nil {
		return stmt, nil
	}
	stmt, err := s.reader.PrepareContext(ctx, queryKeyByHash)
	if err != nil {
		return nil, err
	}
	s.keyByHash.Store(stmt)
	return stmt, nil
}

// writeStmt returns query prepared on the writer connection. Call it before
// beginning a transaction: the writer has one connection, and preparing
// while a transaction holds it would wait forever. Inside the transaction,
// tx.StmtContext reuses the statement, as it was prepared on that very
// connection.
func (s *Store) writeStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if stmt, ok := s.writeStmts.Load(query); ok {
		return stmt.(*sql.Stmt), nil
	}
	s.prepareMu.Lock()
	defer s.prepareMu.Unlock()
	if stmt, ok := s.writeStmts.Load(query); ok {
		return stmt.(*sql.Stmt), nil
	}
	stmt, err := s.writer.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	s.writeStmts.Store(query, stmt)
	return stmt, nil
}

// readStmt returns query prepared on the reader pool (database/sql
// re-prepares it on each connection as needed).
func (s *Store) readStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if stmt, ok := s.readStmts.Load(query); ok {
		return stmt.(*sql.Stmt), nil
	}
	s.prepareMu.Lock()
	defer s.prepareMu.Unlock()
	if stmt, ok := s.readStmts.Load(query); ok {
		return stmt.(*sql.Stmt), nil
	}
	stmt, err := s.reader.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	s.readStmts.Store(query, stmt)
	return stmt, nil
}

// dsn is the driver's connection string for the file at abs. A file: URI
// keeps characters such as '?' and '#' in the path from being read as the
// start of the parameters.
func dsn(abs string, readOnly bool) string {
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // Windows: C:/x becomes /C:/x
	}
	var b strings.Builder
	b.WriteString("file://")
	b.WriteString(escapePath(p))
	b.WriteString("?_pragma=busy_timeout(5000)")
	b.WriteString("&_pragma=foreign_keys(1)")
	b.WriteString("&_pragma=synchronous(NORMAL)")
	if readOnly {
		b.WriteString("&_pragma=query_only(1)")
	} else {
		b.WriteString("&_pragma=journal_mode(WAL)")
		// BEGIN IMMEDIATE takes the write lock at the start of a
		// transaction, so one that cannot get it waits (busy_timeout)
		// instead of failing when it first writes.
		b.WriteString("&_txlock=immediate")
	}
	return b.String()
}

// escapePath percent-encodes the bytes SQLite's URI parser would otherwise
// take as delimiters.
func escapePath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch c {
		case '%', '?', '#', ' ':
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Ping implements store.Store.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.writer.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	if err := s.reader.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	return nil
}

// Migrate implements store.Store. Migrations run on the writer connection,
// each in its own transaction.
func (s *Store) Migrate(ctx context.Context) error { return s.migrate(ctx, 0, false) }

// MigrateCount is Migrate that also returns how many migrations it
// applied: 0 when the schema was already up to date. agentcraft migrate
// reports it.
func (s *Store) MigrateCount(ctx context.Context) (int, error) { return s.migrateN(ctx, 0, false) }

// migrate applies the migrations up to version to, or all when to is 0;
// with down, it reverts those after version to instead (tests of a
// migration start from the version before it, and go back to it).
func (s *Store) migrate(ctx context.Context, to int64, down bool) error {
	_, err := s.migrateN(ctx, to, down)
	return err
}

// migrateN is migrate returning the number of migrations applied or reverted.
func (s *Store) migrateN(ctx context.Context, to int64, down bool) (int, error) {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return 0, fmt.Errorf("sqlite: migrate: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, s.writer, fsys,
		goose.WithDisableGlobalRegistry(true),
		goose.WithSlog(s.logger),
	)
	if err != nil {
		return 0, fmt.Errorf("sqlite: migrate: %w", err)
	}
	n, err := migrate.Apply(ctx, p, to, down)
	if err != nil {
		return 0, fmt.Errorf("sqlite: migrate: %w", err)
	}
	return n, nil
}

// Close implements store.Store. It is safe to call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		var errs []error
		if stmt := s.keyByHash.Load(); stmt != nil {
			errs = append(errs, stmt.Close())
		}
		for _, m := range []*sync.Map{&s.writeStmts, &s.readStmts} {
			m.Range(func(_, stmt any) bool {
				errs = append(errs, stmt.(*sql.Stmt).Close())
				return true
			})
		}
		if s.reader != nil {
			errs = append(errs, s.reader.Close())
		}
		errs = append(errs, s.writer.Close())
		if s.tempDir != "" {
			errs = append(errs, os.RemoveAll(s.tempDir))
		}
		if err := errors.Join(errs...); err != nil {
			s.closeErr = fmt.Errorf("sqlite: close: %w", err)
		}
	})
	return s.closeErr
}

func (s *Store) removeTemp() {
	if s.tempDir != "" {
		os.RemoveAll(s.tempDir)
	}
}
