// Package postgres implements store.Store on PostgreSQL through pgx, for
// installations that run several `agentcraft serve` and `agentcraft worker`
// processes against one database.
//
//	st, err := postgres.Open(ctx, "postgres://agentcraft@db:5432/agentcraft", nil)
//	if err != nil { ... }
//	defer st.Close()
//	err = st.Migrate(ctx)
//
// Options.Schema puts every table in one schema (it becomes the
// connections' search_path; Migrate creates it when missing), so one
// database can hold several installations, and tests can isolate themselves
// with a schema each. Migrations run under a PostgreSQL advisory lock keyed
// by the schema, so processes starting together migrate once.
//
// Unique violations (SQLSTATE 23505) surface as store.ErrConflict, foreign
// key violations (23503, an unknown workspace) and missing rows as
// store.ErrNotFound. JSON columns are jsonb: they come back as equivalent
// JSON, with PostgreSQL's whitespace and key order.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log/slog"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/agentcraftlab/agentcraft/internal/database"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/internal/migrate"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Options configures Open and New. The zero value (or nil) is the default.
type Options struct {
	// Schema is the schema holding the tables. Empty uses the server's
	// search_path from the DSN or the role (normally "public"). It must be
	// a plain identifier: letters, digits and underscores.
	Schema string
	// MaxConns caps the connection pool Open opens (see
	// database.Options.MaxConns). New uses the DB as opened.
	MaxConns int32
	// Logger receives migration progress at Info. Nil discards.
	Logger *slog.Logger
}

// Store is a store.Store on PostgreSQL. It is safe for concurrent use.
type Store struct {
	// Core implements the aggregates on driver{s}'s SQL verbs.
	store.Core

	db     *database.DB
	ownsDB bool // Open opened db; Close closes it
	pool   *pgxpool.Pool
	schema string // empty when the DSN's search_path is used
	logger *slog.Logger

	closeOnce sync.Once
}

var _ store.Store = (*Store)(nil)

// Open connects to the database at dsn (a URL or key=value string, as
// accepted by pgx), owning the pool: a shorthand of database.OpenPostgres
// and New for tests and tools. It does not migrate; call Migrate.
func Open(ctx context.Context, dsn string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	db, err := database.OpenPostgres(ctx, dsn, &database.Options{Schema: o.Schema, MaxConns: o.MaxConns, Logger: o.Logger})
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s, err := New(db, &o)
	if err != nil {
		db.Close()
		return nil, err
	}
	s.ownsDB = true
	return s, nil
}

// New returns a store on db, a PostgreSQL database the caller keeps owning
// (and closes after the store); the tables live in db's schema. It does
// not migrate; call Migrate. Options.Schema and MaxConns are Open's; New
// refuses a Schema that differs from db's.
func New(db *database.DB, opts *Options) (*Store, error) {
	if db == nil || db.Kind() != database.Postgres {
		return nil, errors.New("postgres: new: db is not a PostgreSQL database; open one with database.Open")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Schema != "" && o.Schema != db.Schema() {
		return nil, fmt.Errorf("postgres: new: Options.Schema %q differs from the database's schema %q; open the database with that schema", o.Schema, db.Schema())
	}
	if o.Logger == nil {
		o.Logger = db.Logger()
	}
	s := &Store{db: db, pool: db.Pool(), schema: db.Schema(), logger: o.Logger}
	s.Core = store.NewCore(driver{s})
	return s, nil
}

// Ping implements store.Store.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: ping: %w", err)
	}
	return nil
}

// Migrate implements store.Store. It creates Options.Schema when missing,
// then applies pending migrations, each in a transaction, holding an
// advisory lock so concurrent callers on the same schema wait for each
// other instead of racing.
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
	if err := s.ensureSchema(ctx); err != nil {
		return 0, fmt.Errorf("postgres: migrate: %w", err)
	}
	var schema string
	if err := s.pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return 0, fmt.Errorf("postgres: migrate: no schema to create tables in (check search_path): %w", err)
	}
	locker, err := lock.NewPostgresSessionLocker(
		lock.WithLockID(migrationLockID(schema)),
		lock.WithLockTimeout(1, 300), // poll each second, give up after 5 minutes
	)
	if err != nil {
		return 0, fmt.Errorf("postgres: migrate: %w", err)
	}
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return 0, fmt.Errorf("postgres: migrate: %w", err)
	}
	// goose speaks database/sql; this handle borrows connections from the
	// pool (so they get the search_path) and closing it leaves the pool open.
	db := stdlib.OpenDBFromPool(s.pool)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys,
		goose.WithDisableGlobalRegistry(true),
		goose.WithSessionLocker(locker),
		goose.WithSlog(s.logger),
	)
	if err != nil {
		return 0, fmt.Errorf("postgres: migrate: %w", err)
	}
	n, err := migrate.Apply(ctx, p, to, down)
	if err != nil {
		return 0, fmt.Errorf("postgres: migrate schema %s: %w", schema, err)
	}
	return n, nil
}

// ensureSchema creates Options.Schema when it does not exist. It looks
// first, because CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege on
// the database even when the schema is already there.
func (s *Store) ensureSchema(ctx context.Context) error {
	if s.schema == "" {
		return nil
	}
	var exists bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, s.schema).Scan(&exists)
	if err != nil {
		return fmt.Errorf("look up schema %s: %w", s.schema, err)
	}
	if exists {
		return nil
	}
	_, err = s.pool.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{s.schema}.Sanitize())
	if err != nil && !errors.Is(mapErr(err), store.ErrConflict) { // created concurrently
		return fmt.Errorf("create schema %s: %w", s.schema, err)
	}
	return nil
}

// migrationLockID is the advisory lock that serializes migrations of one
// schema; other schemas in the same database migrate independently.
func migrationLockID(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("agentcraft/store/postgres migrate " + schema))
	return int64(h.Sum64())
}

// Close implements store.Store. It waits for borrowed connections to come
// back and is safe to call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.ownsDB {
			s.db.Close()
		}
	})
	return nil
}
