// Package sqlite implements store.Store on one SQLite file, for the
// single-machine `agentcraft serve`. It uses modernc.org/sqlite (pure Go, no
// cgo).
//
//	db, err := database.OpenSQLite(ctx, "data/agentcraft.db", nil)
//	st, err := sqlite.New(db, nil)
//	err = st.Migrate(ctx)
//
// The connections are package database's (see there for the writer pool of
// one connection, the query_only readers and the pragmas): the composition
// root opens one database.DB and hands it to New, to the search engine and
// to the job queue; Open opens a DB of its own.
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
	"sync"

	"github.com/pressly/goose/v3"

	"github.com/agentcraftlab/agentcraft/internal/database"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/internal/migrate"
)

//go:embed migrations/*.sql
var migrations embed.FS

// MemoryPath is the path that opens a private database in a temporary file,
// removed by Close (database.MemoryPath).
const MemoryPath = database.MemoryPath

// Options configures Open and New. The zero value (or nil) is the default.
type Options struct {
	// Logger receives migration progress at Info. Nil means the DB's
	// logger (New) or discards (Open).
	Logger *slog.Logger
	// MaxReaders caps the connections serving reads of a DB that Open
	// opens. Zero means max(4, GOMAXPROCS). New uses the DB as opened.
	MaxReaders int
}

// Store is a store.Store on a SQLite file. It is safe for concurrent use.
type Store struct {
	// Core implements the aggregates on driver{s}'s SQL verbs.
	store.Core

	db     *database.DB
	ownsDB bool    // Open opened db; Close closes it
	writer *sql.DB // exactly one connection; every write goes through it
	reader *sql.DB // query_only connections for reads
	// writeStmts holds the writer's prepared statements of the run hot
	// path (Runs.Checkpoint, AppendEvents), keyed by SQL text; see
	// writeStmt.
	writeStmts sync.Map // string → *sql.Stmt
	// readStmts holds the reader's prepared statements of the hot reads
	// (APIKeys.GetByHash on every authenticated request, whose per-call
	// parse this skips, 1.5-2x faster by BenchmarkAPIKeyGetByHash,
	// Prepared vs Adhoc; Sessions.GetByHash), keyed by SQL text; see
	// readStmt. Prepared on first use: the tables exist only after
	// Migrate.
	readStmts sync.Map   // string → *sql.Stmt
	prepareMu sync.Mutex // serializes preparing writeStmts and readStmts
	logger    *slog.Logger

	closeOnce sync.Once
	closeErr  error // set once by Close
}

var _ store.Store = (*Store)(nil)

// Open opens (creating when needed) the database at path and its parent
// directory, owning the connections: a shorthand of database.OpenSQLite
// and New for tests and tools. It does not migrate; call Migrate. Pass
// MemoryPath for a throwaway database.
func Open(ctx context.Context, path string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	db, err := database.OpenSQLite(ctx, path, &database.Options{MaxReaders: o.MaxReaders, Logger: o.Logger})
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	s, err := New(db, &o)
	if err != nil {
		db.Close()
		return nil, err
	}
	s.ownsDB = true
	return s, nil
}

// New returns a store on db, a SQLite database the caller keeps owning
// (and closes after the store). It does not migrate; call Migrate.
func New(db *database.DB, opts *Options) (*Store, error) {
	if db == nil || db.Kind() != database.SQLite {
		return nil, errors.New("sqlite: new: db is not a SQLite database; open one with database.Open")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = db.Logger()
	}
	s := &Store{db: db, writer: db.Writer(), reader: db.Reader(), logger: o.Logger}
	s.Core = store.NewCore(driver{s})
	return s, nil
}

// keyByHashStmt returns the prepared statement of APIKeys.GetByHash.
func (s *Store) keyByHashStmt(ctx context.Context) (*sql.Stmt, error) {
	return s.readStmt(ctx, queryKeyByHash)
}

// writeStmt returns query prepared on the writer connection. Call it before
// beginning a transaction: the writer has one connection, and preparing
// while a transaction holds it would wait forever. Inside the transaction,
// tx.StmtContext reuses the statement, as it was prepared on that very
// connection.
func (s *Store) writeStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	return s.prepared(ctx, s.writer, &s.writeStmts, query)
}

// readStmt returns query prepared on the reader pool (database/sql
// re-prepares it on each connection as needed).
func (s *Store) readStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	return s.prepared(ctx, s.reader, &s.readStmts, query)
}

// prepared returns query prepared on pool, from cache after the first
// call.
func (s *Store) prepared(ctx context.Context, pool *sql.DB, cache *sync.Map, query string) (*sql.Stmt, error) {
	if stmt, ok := cache.Load(query); ok {
		return stmt.(*sql.Stmt), nil
	}
	s.prepareMu.Lock()
	defer s.prepareMu.Unlock()
	if stmt, ok := cache.Load(query); ok {
		return stmt.(*sql.Stmt), nil
	}
	stmt, err := pool.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	cache.Store(query, stmt)
	return stmt, nil
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.db.Path() }

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
		for _, m := range []*sync.Map{&s.writeStmts, &s.readStmts} {
			m.Range(func(_, stmt any) bool {
				errs = append(errs, stmt.(*sql.Stmt).Close())
				return true
			})
		}
		if s.ownsDB {
			errs = append(errs, s.db.Close())
		}
		if err := errors.Join(errs...); err != nil {
			s.closeErr = fmt.Errorf("sqlite: close: %w", err)
		}
	})
	return s.closeErr
}
