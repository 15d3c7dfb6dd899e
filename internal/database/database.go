// Package database opens the one handle on the configured database that
// the store, the search engine and the job queue share.
//
// The composition root parses database.url once (Parse), opens it once
// (Open) and hands the *DB to store/sqlite or store/postgres, to
// search/sqlite or search/postgres and to queue; none of them parses a URL
// or opens connections of its own. Close the DB after everything built on
// it.
//
//	u, err := database.Parse("sqlite://./data/agentcraft.db")
//	db, err := database.Open(ctx, u, nil)
//	defer db.Close()
//	st, err := sqlite.New(db, nil) // store/sqlite
//
// # SQLite
//
// SQLite lets one connection write at a time. A DB on SQLite therefore
// holds two pools on one file: Writer, exactly one connection, through
// which every write of the store, the search index and River goes (writes
// queue in Go instead of failing each other with SQLITE_BUSY), and Reader,
// several query_only connections that in WAL mode read beside the writer.
// Every connection runs with journal_mode=WAL, busy_timeout=5000 (for
// other processes on the same file, such as `agentcraft keys` beside a
// running server), foreign_keys=ON, synchronous=NORMAL (durable at each WAL
// checkpoint, safe against corruption), a 64 MiB page cache, 1 GiB of mmap
// and temporary tables in memory (the search index's postings are read and
// written in many small B-tree steps: without them pread/pwrite took most
// of the time of both indexing and queries). The writer begins its
// transactions with BEGIN IMMEDIATE, so one that cannot get the file's
// write lock waits instead of failing at its first write. A new file is
// created with auto_vacuum=INCREMENTAL (see maintenance.go for WAL
// checkpoints, vacuuming, Stats and Backup).
//
// # PostgreSQL
//
// A DB on PostgreSQL is one pgxpool.Pool. River keeps one of its
// connections for LISTEN and borrows others; the store and the search
// engine borrow the rest. The pool holds Options.MaxConns connections
// (default 16), or pool_max_conns when the URL sets it.
package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// Kind is the database a URL names.
type Kind int

// The kinds of database.
const (
	SQLite Kind = iota + 1
	Postgres
)

// String returns "sqlite" or "postgres".
func (k Kind) String() string {
	switch k {
	case SQLite:
		return "sqlite"
	case Postgres:
		return "postgres"
	}
	return "unknown"
}

// MemoryPath is the SQLite path of a throwaway database: a file in a new
// temporary directory that Close removes. A true in-memory database is
// private to one connection, so it could not be shared by the writer, the
// readers and River.
const MemoryPath = ":memory:"

// URL is a parsed database.url.
type URL struct {
	Kind Kind
	// Path is the SQLite file as written in the URL (relative paths are
	// relative to the working directory), or MemoryPath. Empty on
	// PostgreSQL.
	Path string
	// DSN is the PostgreSQL connection string, the URL itself. Empty on
	// SQLite.
	DSN string
}

// Parse reads a database.url: sqlite://PATH (sqlite://:memory: and
// sqlite://file::memory: for a throwaway database), postgres://… or
// postgresql://….
func Parse(raw string) (URL, error) {
	switch {
	case strings.HasPrefix(raw, "sqlite://"):
		path := strings.TrimPrefix(raw, "sqlite://")
		if i := strings.IndexByte(path, '?'); i >= 0 {
			return URL{}, fmt.Errorf("database url %q: sqlite:// takes a file path without parameters; the connection settings are fixed (see package database)", raw)
		}
		switch path {
		case "":
			return URL{}, errors.New("database url sqlite:// names no file: use sqlite://PATH, e.g. sqlite://./data/agentcraft.db")
		case MemoryPath, "file::memory:":
			path = MemoryPath
		}
		return URL{Kind: SQLite, Path: path}, nil
	case strings.HasPrefix(raw, "postgres://"), strings.HasPrefix(raw, "postgresql://"):
		if _, err := pgxpool.ParseConfig(raw); err != nil {
			// pgx's parse errors redact the password.
			return URL{}, fmt.Errorf("database url: %w", err)
		}
		return URL{Kind: Postgres, DSN: raw}, nil
	}
	return URL{}, fmt.Errorf("database url %q must start with sqlite:// or postgres://", Redact(raw))
}

// String is how messages name the database: the absolute path of a SQLite
// file, a PostgreSQL URL without its password.
func (u URL) String() string {
	switch u.Kind {
	case SQLite:
		if u.Path == MemoryPath {
			return u.Path
		}
		if abs, err := filepath.Abs(u.Path); err == nil {
			return abs
		}
		return u.Path
	case Postgres:
		return Redact(u.DSN)
	}
	return ""
}

// Redact hides the password in a database URL.
func Redact(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return u
	}
	if user, _, hasPass := strings.Cut(rest[:at], ":"); hasPass {
		return scheme + "://" + user + ":xxxxx@" + rest[at+1:]
	}
	return u
}

// Options configures Open. The zero value (or nil) is the default.
type Options struct {
	// MaxReaders caps SQLite's reader connections. Zero means
	// max(4, GOMAXPROCS).
	MaxReaders int
	// MaxConns caps the PostgreSQL pool. Zero means 16, or pool_max_conns
	// when the URL sets it.
	MaxConns int32
	// Schema is the PostgreSQL schema every connection uses (its
	// search_path), created by the store's migration when missing. Tests
	// use one per test. Empty keeps the URL's search_path. Must be empty on
	// SQLite.
	Schema string
	// Logger is handed to the drivers built on the DB. Nil discards.
	Logger *slog.Logger
}

// defaultMaxConns is the PostgreSQL pool size when neither Options nor the
// URL sets one: River's listener, its producers and completer, and the
// store and search queries of up to ten concurrent runs.
const defaultMaxConns = 16

var schemaName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// DB is the open database. It is safe for concurrent use.
type DB struct {
	url     URL
	path    string // absolute SQLite path
	created bool
	schema  string
	logger  *slog.Logger
	tempDir string // holds a MemoryPath file; Close removes it

	writer, reader *sql.DB       // SQLite
	pool           *pgxpool.Pool // PostgreSQL

	closeOnce sync.Once
	closeErr  error
}

// Open opens the database u names. On SQLite it creates the file (mode
// 0600) and its directory (0700) when missing; Created reports whether it
// did. It does not migrate: each driver built on the DB migrates its own
// tables (see the composition root for the order).
func Open(ctx context.Context, u URL, opts *Options) (*DB, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	switch u.Kind {
	case SQLite:
		if o.Schema != "" {
			return nil, errors.New("database: open: Options.Schema is set but the database is SQLite; leave it empty")
		}
		return openSQLite(ctx, u, &o)
	case Postgres:
		return openPostgres(ctx, u, &o)
	}
	return nil, errors.New("database: open: the URL names no database; build it with Parse")
}

// OpenSQLite opens the SQLite file at path (or MemoryPath); a shorthand of
// Open for drivers and tests.
func OpenSQLite(ctx context.Context, path string, opts *Options) (*DB, error) {
	if path == "" {
		return nil, errors.New("database: open: path is empty; set a file path or \":memory:\"")
	}
	return Open(ctx, URL{Kind: SQLite, Path: path}, opts)
}

// OpenPostgres opens a pool on dsn (a URL or key=value string, as pgx
// accepts); a shorthand of Open for drivers and tests.
func OpenPostgres(ctx context.Context, dsn string, opts *Options) (*DB, error) {
	return Open(ctx, URL{Kind: Postgres, DSN: dsn}, opts)
}

func openSQLite(ctx context.Context, u URL, o *Options) (_ *DB, err error) {
	if o.MaxReaders < 0 {
		return nil, fmt.Errorf("database: open: MaxReaders is %d; set it to 0 (default) or more", o.MaxReaders)
	}
	readers := o.MaxReaders
	if readers == 0 {
		readers = max(4, runtime.GOMAXPROCS(0))
	}
	d := &DB{url: u, logger: o.Logger}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	path := u.Path
	if path == MemoryPath {
		dir, err := os.MkdirTemp("", "agentcraft-db-")
		if err != nil {
			return nil, fmt.Errorf("database: open: create temporary directory: %w", err)
		}
		d.tempDir = dir
		path = filepath.Join(dir, "agentcraft.db")
	} else if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		// 0700: the file holds key hashes and sealed credentials.
		return nil, fmt.Errorf("database: open: create directory: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("database: open %s: %w", path, err)
	}
	d.path = abs
	if d.created, err = createPrivate(abs); err != nil {
		return nil, fmt.Errorf("database: open: %w", err)
	}
	if d.writer, err = sql.Open("sqlite", sqliteDSN(abs, false)); err != nil {
		return nil, fmt.Errorf("database: open %s: %w", abs, err)
	}
	d.writer.SetMaxOpenConns(1)
	d.writer.SetMaxIdleConns(1)
	d.writer.SetConnMaxLifetime(0)
	d.writer.SetConnMaxIdleTime(0)
	// Connect the writer first: it switches the file to WAL, which the
	// query_only readers cannot do.
	if err := d.writer.PingContext(ctx); err != nil {
		return nil, fmt.Errorf("database: open %s: %w", abs, err)
	}
	if d.reader, err = sql.Open("sqlite", sqliteDSN(abs, true)); err != nil {
		return nil, fmt.Errorf("database: open %s: %w", abs, err)
	}
	d.reader.SetMaxOpenConns(readers)
	d.reader.SetMaxIdleConns(readers)
	if err := d.reader.PingContext(ctx); err != nil {
		return nil, fmt.Errorf("database: open %s: %w", abs, err)
	}
	return d, nil
}

func openPostgres(ctx context.Context, u URL, o *Options) (*DB, error) {
	if o.MaxConns < 0 {
		return nil, fmt.Errorf("database: open: MaxConns is %d; set it to 0 (default) or more", o.MaxConns)
	}
	if o.Schema != "" && !schemaName.MatchString(o.Schema) {
		return nil, fmt.Errorf("database: open: schema %q is not a plain identifier; use letters, digits and underscores", o.Schema)
	}
	cfg, err := pgxpool.ParseConfig(u.DSN)
	if err != nil {
		// pgx's parse errors redact the password.
		return nil, fmt.Errorf("database: open: %w", err)
	}
	switch {
	case o.MaxConns > 0:
		cfg.MaxConns = o.MaxConns
	case !strings.Contains(u.DSN, "pool_max_conns"):
		cfg.MaxConns = defaultMaxConns
	}
	if o.Schema != "" {
		cfg.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{o.Schema}.Sanitize()
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("database: open: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("database: open %s: %w", u, err)
	}
	return &DB{url: u, schema: o.Schema, logger: o.Logger, pool: pool}, nil
}

// createPrivate creates the database file at path with mode 0600 unless it
// exists, and reports whether it created it. SQLite would create it 0644
// less the umask, and gives its -wal and -shm files the mode of the
// database file, so this keeps all three private whatever the umask.
func createPrivate(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("create %s: %w", path, err)
	}
	defer f.Close()
	// The umask may have taken bits from 0600 (as 0277 would): set it exactly.
	if err := f.Chmod(0o600); err != nil {
		return true, fmt.Errorf("create %s: %w", path, err)
	}
	return true, nil
}

// sqliteDSN is the driver's connection string for the file at abs (see
// the package comment for the pragmas). A file: URI keeps characters such
// as '?' and '#' in the path from being read as the start of the
// parameters.
func sqliteDSN(abs string, readOnly bool) string {
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
	b.WriteString("&_pragma=foreign_keys(1)")
	b.WriteString("&_pragma=synchronous(NORMAL)")
	b.WriteString("&_pragma=cache_size(-65536)")
	b.WriteString("&_pragma=mmap_size(1073741824)")
	b.WriteString("&_pragma=temp_store(MEMORY)")
	if readOnly {
		b.WriteString("&_pragma=query_only(1)")
	} else {
		// Before journal_mode, and before any table exists: auto_vacuum
		// takes effect only on a new file (an existing one keeps its mode
		// until a VACUUM, see Vacuum), and lets IncrementalVacuum give the
		// pages freed by pruning back to the file system.
		b.WriteString("&_pragma=auto_vacuum(INCREMENTAL)")
		b.WriteString("&_pragma=journal_mode(WAL)")
		b.WriteString("&_txlock=immediate")
	}
	return b.String()
}

// Kind returns the kind of database.
func (d *DB) Kind() Kind { return d.url.Kind }

// URL returns the parsed URL the DB was opened from.
func (d *DB) URL() URL { return d.url }

// Path returns the absolute path of the SQLite file (a temporary file for
// MemoryPath), "" on PostgreSQL.
func (d *DB) Path() string { return d.path }

// Created reports whether Open created the SQLite file: a command run from
// the wrong directory says so.
func (d *DB) Created() bool { return d.created }

// Writer returns SQLite's one-connection writer pool, nil on PostgreSQL.
// Prepare statements on it before beginning a transaction, never inside
// one: the transaction holds the only connection.
func (d *DB) Writer() *sql.DB { return d.writer }

// Reader returns SQLite's query_only reader pool, nil on PostgreSQL.
func (d *DB) Reader() *sql.DB { return d.reader }

// Pool returns the PostgreSQL pool, nil on SQLite.
func (d *DB) Pool() *pgxpool.Pool { return d.pool }

// Schema returns Options.Schema: the PostgreSQL schema of every
// connection, "" for the URL's search_path.
func (d *DB) Schema() string { return d.schema }

// Logger returns Options.Logger, never nil.
func (d *DB) Logger() *slog.Logger { return d.logger }

// Close closes the connections (and removes a MemoryPath file). Close
// what was built on the DB first. It is safe to call more than once.
func (d *DB) Close() error {
	d.closeOnce.Do(func() {
		var errs []error
		if d.reader != nil {
			errs = append(errs, d.reader.Close())
		}
		if d.writer != nil {
			errs = append(errs, d.writer.Close())
		}
		if d.pool != nil {
			d.pool.Close()
		}
		if d.tempDir != "" {
			errs = append(errs, os.RemoveAll(d.tempDir))
		}
		if err := errors.Join(errs...); err != nil {
			d.closeErr = fmt.Errorf("database: close: %w", err)
		}
	})
	return d.closeErr
}
