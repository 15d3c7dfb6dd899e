package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/agentcraftlab/agentcraft/store"
)

// mapErr translates SQLite errors into the store's sentinels.
func mapErr(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			// The driver's text names tables and constraints; it is left
			// out because store errors reach API clients (as "already
			// exists") and the operation wrapping this says what failed.
			return fmt.Errorf("%w: already exists", store.ErrConflict)
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			// Every foreign key in the schema points at workspaces.
			return fmt.Errorf("%w: workspace does not exist", store.ErrNotFound)
		}
	}
	return err
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface {
	Scan(dest ...any) error
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

func fromNullMicros(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}

// rowsAffected turns an update or delete that matched nothing into
// ErrNotFound.
func rowsAffected(res sql.Result) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// queryList runs a query on db and scans every row with scan.
func queryList[T any](ctx context.Context, db *sql.DB, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// writeTx runs fn in a transaction on the writer connection and commits
// when fn returns nil.
func (s *Store) writeTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// nullString stores "" as NULL.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nullJSON stores an empty JSON value as NULL.
func nullJSON(m []byte) any {
	if len(m) == 0 {
		return nil
	}
	return string(m)
}
