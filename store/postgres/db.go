package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentcraftlab/agentcraft/store"
)

// SQLSTATE codes the store maps.
const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
)

// mapErr translates PostgreSQL errors into the store's sentinels.
func mapErr(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrNotFound
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case uniqueViolation:
			// The driver's text names tables and constraints; it is left
			// out because store errors reach API clients (as "already
			// exists") and the operation wrapping this says what failed.
			return fmt.Errorf("%w: already exists", store.ErrConflict)
		case foreignKeyViolation:
			// Every foreign key in the schema points at workspaces.
			return fmt.Errorf("%w: workspace does not exist", store.ErrNotFound)
		}
	}
	return err
}

// utc converts a time read from the server (pgx returns local time) to UTC.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// affected turns an update or delete that matched nothing into ErrNotFound.
func affected(tag pgconn.CommandTag) error {
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// queryList runs a query and scans every row with scan. It returns nil
// when there are no rows, as the SQLite driver does.
func queryList[T any](ctx context.Context, s *Store, scan func(pgx.Row) (T, error), query string, args ...any) ([]T, error) {
	rows, err := s.pool.Query(ctx, query, args...)
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
