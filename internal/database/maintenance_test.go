package database_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/internal/database"
)

// fill creates table blobs with n rows of size bytes on db's writer.
func fill(t *testing.T, db *database.DB, n, size int) {
	t.Helper()
	ctx := t.Context()
	if _, err := db.Writer().ExecContext(ctx, `CREATE TABLE IF NOT EXISTS blobs (id INTEGER PRIMARY KEY, data BLOB)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Writer().ExecContext(ctx, `WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < ?)
		INSERT INTO blobs (data) SELECT randomblob(?) FROM c`, n, size); err != nil {
		t.Fatal(err)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func TestNewFileIsIncrementalAndShrinks(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "a.db")
	db, err := database.OpenSQLite(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if mode, err := db.AutoVacuum(ctx); err != nil || mode != "incremental" {
		t.Fatalf("AutoVacuum() of a new file = %q, %v; want incremental", mode, err)
	}
	fill(t, db, 2000, 4000)
	if _, err := db.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	before := fileSize(t, path)
	if _, err := db.Writer().ExecContext(ctx, `DELETE FROM blobs`); err != nil {
		t.Fatal(err)
	}
	freed, err := db.IncrementalVacuum(ctx)
	if err != nil || freed == 0 {
		t.Fatalf("IncrementalVacuum() = %d, %v; want pages freed", freed, err)
	}
	r, err := db.Checkpoint(ctx)
	if err != nil || r.Busy {
		t.Fatalf("Checkpoint() = %+v, %v", r, err)
	}
	after := fileSize(t, path)
	if wal := fileSize(t, path+"-wal"); wal != 0 {
		t.Errorf("WAL after a TRUNCATE checkpoint = %d bytes, want 0", wal)
	}
	t.Logf("file %d → %d bytes", before, after)
	if after > before/10 {
		t.Errorf("file after delete + incremental vacuum = %d bytes, want under a tenth of %d", after, before)
	}
}

func TestVacuumConvertsAnOldFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "old.db")
	// A file made before auto_vacuum was set: plain SQLite, mode none.
	db, err := database.OpenSQLite(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Writer().ExecContext(ctx, `PRAGMA auto_vacuum = NONE`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Writer().ExecContext(ctx, `VACUUM`); err != nil {
		t.Fatal(err)
	}
	fill(t, db, 10, 100)
	if mode, _ := db.AutoVacuum(ctx); mode != "none" {
		t.Fatalf("setup: mode = %q, want none", mode)
	}
	if _, err := db.IncrementalVacuum(ctx); !errors.Is(err, database.ErrNoIncrementalVacuum) {
		t.Fatalf("IncrementalVacuum() on mode none = %v, want ErrNoIncrementalVacuum", err)
	}
	if err := db.Vacuum(ctx); err != nil {
		t.Fatal(err)
	}
	if mode, _ := db.AutoVacuum(ctx); mode != "incremental" {
		t.Errorf("mode after Vacuum = %q, want incremental", mode)
	}
	db.Close()
}

func TestStats(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "s.db")
	db, err := database.OpenSQLite(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fill(t, db, 300, 1000)
	s, err := db.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tables) == 0 || s.Tables[0].Name != "blobs" || s.Tables[0].Rows != 300 || s.Tables[0].Bytes < 300*1000 {
		t.Fatalf("Stats().Tables = %+v; want blobs first with 300 rows and >= 300000 bytes", s.Tables)
	}
	if s.PageCount == 0 || s.PageSize == 0 || s.AutoVacuum != "incremental" || s.BytesEstimated {
		t.Errorf("Stats() = %+v", s)
	}
}

func TestBackup(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "live.db")
	db, err := database.OpenSQLite(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fill(t, db, 100, 100)
	// A read transaction stays open on another connection: the copy
	// still works (it reads its own snapshot).
	tx, err := db.Reader().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	dst := filepath.Join(dir, "backup.db")
	n, err := database.Backup(ctx, path, dst, false)
	if err != nil || n == 0 {
		t.Fatalf("Backup() = %d, %v", n, err)
	}
	if fi, _ := os.Stat(dst); fi.Mode().Perm() != 0o600 {
		t.Errorf("backup mode = %v, want 0600", fi.Mode().Perm())
	}
	if err := database.Check(ctx, dst); err != nil {
		t.Fatal(err)
	}
	if _, err := database.Backup(ctx, path, dst, false); !errors.Is(err, database.ErrBackupExists) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("Backup() over an existing file = %v, want ErrBackupExists naming --force", err)
	}
	if _, err := database.Backup(ctx, path, dst, true); err != nil {
		t.Errorf("Backup(overwrite) = %v", err)
	}
	copyDB, err := database.OpenSQLite(ctx, dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer copyDB.Close()
	var rows int
	if err := copyDB.Reader().QueryRowContext(ctx, `SELECT count(*) FROM blobs`).Scan(&rows); err != nil || rows != 100 {
		t.Errorf("backup holds %d rows (%v), want 100", rows, err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".backup.db.tmp-*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
	junk := filepath.Join(dir, "junk.db")
	os.WriteFile(junk, []byte(strings.Repeat("not a database ", 500)), 0o600)
	if err := database.Check(ctx, junk); err == nil {
		t.Error("Check() of a text file = nil, want an error")
	}
}

func TestStatsPostgres(t *testing.T) {
	dsn := os.Getenv("AGENTCRAFT_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("set AGENTCRAFT_TEST_POSTGRES_DSN to run on PostgreSQL")
	}
	ctx := t.Context()
	db, err := database.OpenPostgres(ctx, dsn, &database.Options{Schema: "db_stats_test"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.Pool().Exec(ctx, `CREATE SCHEMA IF NOT EXISTS db_stats_test`)
	defer db.Pool().Exec(context.Background(), `DROP SCHEMA db_stats_test CASCADE`)
	if _, err := db.Pool().Exec(ctx, `CREATE TABLE blobs AS SELECT g AS id, repeat('x', 1000) AS data FROM generate_series(1, 500) g`); err != nil {
		t.Fatal(err)
	}
	s, err := db.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tables) != 1 || s.Tables[0].Name != "blobs" || s.Tables[0].Rows != 500 || s.Tables[0].Bytes < 500*1000 || s.FileBytes == 0 {
		t.Errorf("Stats() = %+v", s)
	}
	// The SQLite-only operations do nothing here.
	if _, err := db.Checkpoint(ctx); err != nil {
		t.Error(err)
	}
	if _, err := db.IncrementalVacuum(ctx); err != nil {
		t.Error(err)
	}
}
