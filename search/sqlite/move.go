package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentcraftlab/agentcraft/internal/database"
)

// MovedSuffix is appended to the name of a standalone search file once
// MoveFrom has copied it: search.db becomes search.db.moved, kept for the
// user to delete.
const MovedSuffix = ".moved"

// movedTables are the engine's tables with their columns, parents first.
var movedTables = []struct{ name, cols string }{
	{"search_indexes", "id, name, docs, total_len, gen"},
	{"search_docs", "id, index_id, ext_id, title, body, metadata, len, terms, vec"},
	{"search_terms", "id, index_id, term, df"},
	{"search_postings", "term_id, first_doc, data"},
}

// MoveFrom brings into db the index that an older install kept in a
// standalone search file at path (data/search.db beside the store), so
// that one database holds everything. When db's tables (created by
// Migrate) are empty it copies the file's rows in one transaction, ids
// included, so documents, terms and postings stay as they were. Then, or
// when db already holds an index (a copy that committed before a crash
// could rename the file), it renames the file to path+MovedSuffix, with
// its -wal and -shm files. It returns the number of documents copied; a
// missing file is no error and copies nothing. A file whose tables do not
// match is left untouched and named in the error.
func MoveFrom(ctx context.Context, db *database.DB, path string) (int64, error) {
	if db == nil || db.Kind() != database.SQLite {
		return 0, errors.New("sqlite search: move: db is not a SQLite database; open one with database.Open")
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	} else if err != nil {
		return 0, fmt.Errorf("sqlite search: move %s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0, fmt.Errorf("sqlite search: move %s: %w", path, err)
	}
	if abs == db.Path() {
		return 0, fmt.Errorf("sqlite search: move %s: that is the database itself", abs)
	}
	n, err := copyTables(ctx, db, abs)
	if err != nil {
		return 0, fmt.Errorf("sqlite search: move the index of %s into %s (the file is unchanged; fix or remove it and start again): %w", abs, db.Path(), err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		err := os.Rename(abs+suffix, abs+MovedSuffix+suffix)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return n, fmt.Errorf("sqlite search: moved the index of %s but could not rename it: %w", abs, err)
		}
	}
	return n, nil
}

// copyTables attaches the file at abs to the writer's connection and
// copies its tables into db's when those are empty, returning the
// documents copied.
func copyTables(ctx context.Context, db *database.DB, abs string) (n int64, err error) {
	conn, err := db.Writer().Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `ATTACH DATABASE ? AS moving`, abs); err != nil {
		return 0, fmt.Errorf("attach: %w", err)
	}
	defer func() {
		// Detaching closes the file, which checkpoints its WAL into it
		// before the rename.
		if _, derr := conn.ExecContext(context.WithoutCancel(ctx), `DETACH DATABASE moving`); derr != nil && err == nil {
			err = fmt.Errorf("detach: %w", derr)
		}
	}()
	var have int64
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM main.search_indexes`).Scan(&have); err != nil {
		return 0, err
	}
	if have > 0 {
		return 0, nil
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	for _, t := range movedTables {
		q := "INSERT INTO main." + t.name + " (" + t.cols + ") SELECT " + t.cols + " FROM moving." + t.name
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return 0, fmt.Errorf("copy %s: %w", t.name, err)
		}
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM main.search_docs`).Scan(&n); err != nil {
		return 0, err
	}
	return n, tx.Commit()
}
