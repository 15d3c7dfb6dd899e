package database

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Maintenance
//
// A SQLite file grows in two ways the database does not undo by itself:
// its WAL, which SQLite's automatic checkpoints reset but never truncate
// (and cannot reset at all while readers keep old snapshots open), and its
// pages, which deleted rows free but which stay in the file as free pages
// unless auto_vacuum gives them back. Checkpoint truncates the WAL;
// IncrementalVacuum returns free pages when the file's auto_vacuum mode
// is incremental (every file this package creates), and Vacuum rewrites
// an older file once so that it is. Stats says what takes the space, and
// Backup copies a live database consistently with VACUUM INTO.

// CheckpointResult is what PRAGMA wal_checkpoint reported.
type CheckpointResult struct {
	// Busy is true when the checkpoint could not finish because a reader
	// still used an older snapshot; the WAL was then not truncated.
	Busy bool
	// Frames is the number of frames the WAL held, Checkpointed how many
	// of them reached the database file.
	Frames, Checkpointed int64
}

// Checkpoint copies the WAL into the database file and truncates it to
// zero bytes (PRAGMA wal_checkpoint(TRUNCATE)) through the writer, so no
// write of this process runs meanwhile. It waits up to the busy timeout
// for readers of older snapshots. On PostgreSQL it does nothing.
func (d *DB) Checkpoint(ctx context.Context) (CheckpointResult, error) {
	if d.writer == nil {
		return CheckpointResult{}, nil
	}
	var busy int
	var r CheckpointResult
	if err := d.writer.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &r.Frames, &r.Checkpointed); err != nil {
		return CheckpointResult{}, fmt.Errorf("database: wal checkpoint: %w", err)
	}
	r.Busy = busy != 0
	return r, nil
}

// AutoVacuum returns the SQLite file's auto_vacuum mode: "none", "full"
// or "incremental"; "" on PostgreSQL.
func (d *DB) AutoVacuum(ctx context.Context) (string, error) {
	if d.writer == nil {
		return "", nil
	}
	var mode int
	if err := d.writer.QueryRowContext(ctx, "PRAGMA auto_vacuum").Scan(&mode); err != nil {
		return "", fmt.Errorf("database: read auto_vacuum: %w", err)
	}
	return autoVacuumName(mode), nil
}

func autoVacuumName(mode int) string {
	switch mode {
	case 0:
		return "none"
	case 1:
		return "full"
	case 2:
		return "incremental"
	}
	return fmt.Sprintf("unknown (%d)", mode)
}

// ErrNoIncrementalVacuum is IncrementalVacuum's error on a file whose
// auto_vacuum mode is not incremental: a file created before AgentCraft
// set the mode. Vacuum converts it once.
var ErrNoIncrementalVacuum = errors.New("database: the file's auto_vacuum mode is not incremental; run `agentcraft db vacuum` once (with serve stopped) to convert it")

// IncrementalVacuum gives the file's free pages back to the file system
// (PRAGMA incremental_vacuum) and reports how many it freed. The file
// shrinks once the WAL holding the change is checkpointed (Checkpoint).
// It returns ErrNoIncrementalVacuum when the mode does not allow it, and
// does nothing on PostgreSQL, whose autovacuum reuses dead space itself.
func (d *DB) IncrementalVacuum(ctx context.Context) (int64, error) {
	if d.writer == nil {
		return 0, nil
	}
	mode, err := d.AutoVacuum(ctx)
	if err != nil {
		return 0, err
	}
	if mode != "incremental" {
		return 0, ErrNoIncrementalVacuum
	}
	before, err := d.freelist(ctx)
	if err != nil {
		return 0, err
	}
	// The pragma returns no rows but does its work step by step as they
	// are read: Exec runs it to the end.
	if _, err := d.writer.ExecContext(ctx, "PRAGMA incremental_vacuum"); err != nil {
		return 0, fmt.Errorf("database: incremental vacuum: %w", err)
	}
	after, err := d.freelist(ctx)
	if err != nil {
		return 0, err
	}
	return before - after, nil
}

func (d *DB) freelist(ctx context.Context) (int64, error) {
	var n int64
	if err := d.writer.QueryRowContext(ctx, "PRAGMA freelist_count").Scan(&n); err != nil {
		return 0, fmt.Errorf("database: read freelist_count: %w", err)
	}
	return n, nil
}

// Vacuum rewrites the whole SQLite file (VACUUM) with
// auto_vacuum=INCREMENTAL, which is the only way an existing file changes
// its mode, and truncates the WAL after it. It needs free disk space of
// about the file's size and blocks every write meanwhile, so the CLI runs
// it only while no server holds the database. PostgreSQL: VACUUM of the
// current schema's tables is left to autovacuum; this does nothing.
func (d *DB) Vacuum(ctx context.Context) error {
	if d.writer == nil {
		return nil
	}
	if _, err := d.writer.ExecContext(ctx, "PRAGMA auto_vacuum = INCREMENTAL"); err != nil {
		return fmt.Errorf("database: vacuum: %w", err)
	}
	if _, err := d.writer.ExecContext(ctx, "VACUUM"); err != nil {
		return fmt.Errorf("database: vacuum: %w", err)
	}
	if _, err := d.Checkpoint(ctx); err != nil {
		return err
	}
	return nil
}

// TableStats is the space one table takes.
type TableStats struct {
	Name string `json:"name"`
	// Rows is the table's row count (on PostgreSQL the planner's estimate
	// when it has one, see Stats.RowsEstimated).
	Rows int64 `json:"rows"`
	// Bytes is the size of the table's own pages, IndexBytes that of its
	// indexes (PostgreSQL: TOAST included in Bytes).
	Bytes      int64 `json:"bytes"`
	IndexBytes int64 `json:"index_bytes"`
}

// Stats is what takes the space in the database.
type Stats struct {
	Kind string `json:"kind"`
	// Database is the SQLite file or the PostgreSQL URL without password.
	Database string `json:"database"`
	// FileBytes is the SQLite file's size, WALBytes its -wal file's;
	// on PostgreSQL FileBytes is pg_database_size.
	FileBytes int64 `json:"file_bytes"`
	WALBytes  int64 `json:"wal_bytes"`
	// PageSize, PageCount and FreelistPages are SQLite's; free pages are
	// inside the file but hold nothing (IncrementalVacuum returns them).
	PageSize      int64  `json:"page_size,omitempty"`
	PageCount     int64  `json:"page_count,omitempty"`
	FreelistPages int64  `json:"freelist_pages,omitempty"`
	AutoVacuum    string `json:"auto_vacuum,omitempty"`
	// BytesEstimated is set when SQLite lacks the dbstat table and table
	// bytes are not measured (they are then 0); RowsEstimated when
	// PostgreSQL's row counts are the planner's estimates.
	BytesEstimated bool `json:"bytes_estimated,omitempty"`
	RowsEstimated  bool `json:"rows_estimated,omitempty"`
	// Tables, largest first.
	Tables []TableStats `json:"tables"`
}

// Stats measures the database. On SQLite it reads the dbstat virtual
// table and counts every table's rows (a full scan of each: run it
// beside a server, not in a hot loop).
func (d *DB) Stats(ctx context.Context) (Stats, error) {
	s := Stats{Kind: d.url.Kind.String(), Database: d.url.String()}
	var err error
	switch {
	case d.writer != nil:
		s.Database = d.path
		err = d.sqliteStats(ctx, &s)
	case d.pool != nil:
		err = d.postgresStats(ctx, &s)
	}
	if err != nil {
		return Stats{}, fmt.Errorf("database: stats: %w", err)
	}
	slices.SortFunc(s.Tables, func(a, b TableStats) int {
		if c := (b.Bytes + b.IndexBytes) - (a.Bytes + a.IndexBytes); c != 0 {
			if c > 0 {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return s, nil
}

func (d *DB) sqliteStats(ctx context.Context, s *Stats) error {
	db := d.reader
	for _, p := range []struct {
		pragma string
		dst    *int64
	}{{"page_size", &s.PageSize}, {"page_count", &s.PageCount}, {"freelist_count", &s.FreelistPages}} {
		if err := db.QueryRowContext(ctx, "PRAGMA "+p.pragma).Scan(p.dst); err != nil {
			return fmt.Errorf("pragma %s: %w", p.pragma, err)
		}
	}
	var mode int
	if err := db.QueryRowContext(ctx, "PRAGMA auto_vacuum").Scan(&mode); err != nil {
		return fmt.Errorf("pragma auto_vacuum: %w", err)
	}
	s.AutoVacuum = autoVacuumName(mode)
	if fi, err := os.Stat(d.path); err == nil {
		s.FileBytes = fi.Size()
	}
	if fi, err := os.Stat(d.path + "-wal"); err == nil {
		s.WALBytes = fi.Size()
	}
	// Tables and the table each index belongs to.
	rows, err := db.QueryContext(ctx, `SELECT type, name, tbl_name FROM sqlite_schema WHERE type IN ('table', 'index')`)
	if err != nil {
		return err
	}
	owner := map[string]string{} // b-tree name → table
	var tables []string
	for rows.Next() {
		var typ, name, tbl string
		if err := rows.Scan(&typ, &name, &tbl); err != nil {
			rows.Close()
			return err
		}
		owner[name] = tbl
		if typ == "table" {
			tables = append(tables, name)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	byName := map[string]*TableStats{}
	for _, t := range tables {
		ts := &TableStats{Name: t}
		// Virtual tables (none of ours) and internal ones count too.
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM `+quoteIdent(t)).Scan(&ts.Rows); err != nil {
			ts.Rows = -1
		}
		byName[t] = ts
	}
	sizes, err := db.QueryContext(ctx, `SELECT name, sum(pgsize) FROM dbstat GROUP BY name`)
	if err != nil {
		// modernc.org/sqlite builds with dbstat; a build without it still
		// reports the pages and row counts.
		s.BytesEstimated = true
	} else {
		for sizes.Next() {
			var name string
			var n int64
			if err := sizes.Scan(&name, &n); err != nil {
				sizes.Close()
				return err
			}
			ts := byName[owner[name]]
			switch {
			case ts == nil:
				// sqlite_schema itself and other b-trees without a table row.
				ts = &TableStats{Name: name, Rows: -1}
				byName[name] = ts
				ts.Bytes += n
			case owner[name] != name:
				ts.IndexBytes += n
			default:
				ts.Bytes += n
			}
		}
		sizes.Close()
		if err := sizes.Err(); err != nil {
			return err
		}
	}
	for _, ts := range byName {
		s.Tables = append(s.Tables, *ts)
	}
	return nil
}

func (d *DB) postgresStats(ctx context.Context, s *Stats) error {
	if err := d.pool.QueryRow(ctx, `SELECT pg_database_size(current_database())`).Scan(&s.FileBytes); err != nil {
		return err
	}
	rows, err := d.pool.Query(ctx, `
		SELECT c.relname, c.reltuples::bigint, pg_table_size(c.oid), pg_indexes_size(c.oid)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p') AND n.nspname = current_schema()`)
	if err != nil {
		return err
	}
	tables, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (TableStats, error) {
		var t TableStats
		err := r.Scan(&t.Name, &t.Rows, &t.Bytes, &t.IndexBytes)
		return t, err
	})
	if err != nil {
		return err
	}
	for i := range tables {
		if tables[i].Rows >= 0 {
			s.RowsEstimated = true
			continue
		}
		// Never analysed: count.
		if err := d.pool.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{tables[i].Name}.Sanitize()).Scan(&tables[i].Rows); err != nil {
			return err
		}
	}
	s.Tables = tables
	return nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// ErrBackupExists is Backup's error when the destination exists and
// overwrite was not asked for.
var ErrBackupExists = errors.New("the backup file exists")

// Backup writes a consistent copy of the SQLite database at src into the
// new file dst with VACUUM INTO, on a connection of its own: it reads one
// snapshot while writers carry on (WAL), needs no lock of the server,
// and the copy is compact and holds no WAL. The copy is made under a
// temporary name in dst's directory, synced and then moved into place,
// so dst is either absent or complete; an existing dst is refused with
// ErrBackupExists unless overwrite. It returns the copy's size.
func Backup(ctx context.Context, src, dst string, overwrite bool) (_ int64, err error) {
	abs, err := filepath.Abs(src)
	if err != nil {
		return 0, fmt.Errorf("database: backup: %w", err)
	}
	if _, err := os.Stat(abs); err != nil {
		// Opening a missing file would create an empty database.
		return 0, fmt.Errorf("database: backup: %w", err)
	}
	if !overwrite {
		if _, err := os.Lstat(dst); err == nil {
			return 0, fmt.Errorf("database: backup: %s: %w; pass --force to replace it", dst, ErrBackupExists)
		}
	}
	dir := filepath.Dir(dst)
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, "."+filepath.Base(dst)+".tmp-"+hex.EncodeToString(rnd[:]))
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	// Not query_only: that refuses VACUUM INTO too. The connection only
	// reads the source.
	db, err := sql.Open("sqlite", sqliteDSN(abs, false))
	if err != nil {
		return 0, fmt.Errorf("database: backup: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", tmp); err != nil {
		return 0, fmt.Errorf("database: backup %s: %w", abs, err)
	}
	f, err := os.OpenFile(tmp, os.O_RDWR, 0)
	if err != nil {
		return 0, fmt.Errorf("database: backup: %w", err)
	}
	err = f.Chmod(0o600) // the copy holds key hashes and sealed credentials
	if err == nil {
		err = f.Sync()
	}
	fi, statErr := f.Stat()
	if cerr := f.Close(); err == nil {
		err = errors.Join(cerr, statErr)
	}
	if err != nil {
		return 0, fmt.Errorf("database: backup: %w", err)
	}
	if overwrite {
		err = os.Rename(tmp, dst)
	} else {
		// A link fails if dst appeared meanwhile: never overwritten.
		if err = os.Link(tmp, dst); err == nil {
			err = os.Remove(tmp)
		} else if errors.Is(err, fs.ErrExist) {
			err = fmt.Errorf("%s: %w; pass --force to replace it", dst, ErrBackupExists)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("database: backup: %w", err)
	}
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	return fi.Size(), nil
}

// Check opens the SQLite file at path read-only and runs PRAGMA
// integrity_check, returning its first problems. It does not create a
// missing file.
func Check(ctx context.Context, path string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("database: check: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("database: check: %w", err)
	}
	db, err := sql.Open("sqlite", sqliteDSN(abs, true))
	if err != nil {
		return fmt.Errorf("database: check: %w", err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "PRAGMA integrity_check(10)")
	if err != nil {
		return fmt.Errorf("database: check %s: %w", abs, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fmt.Errorf("database: check %s: %w", abs, err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("database: check %s: %w", abs, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("database: check %s: integrity_check failed: %s", abs, strings.Join(problems, "; "))
	}
	return nil
}

// OpenReadOnly opens the existing SQLite file at path on one query_only
// connection, for commands that inspect a file that is not the
// configured database (a backup before it is restored). It does not
// create a missing file.
func OpenReadOnly(path string) (*sql.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("database: open: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("database: open: %w", err)
	}
	db, err := sql.Open("sqlite", sqliteDSN(abs, true))
	if err != nil {
		return nil, fmt.Errorf("database: open %s: %w", abs, err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}
