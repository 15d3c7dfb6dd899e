package retention

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/internal/database"
)

// conn runs the pruner's SQL on either database. Queries are written with
// ? placeholders and SQLite's function names where the two differ in
// one place (instr/strpos); pg rebinds them.
type conn struct {
	db *database.DB
	pg bool
}

func newConn(db *database.DB) conn { return conn{db: db, pg: db.Kind() == database.Postgres} }

// ts is a timestamp as the store writes it: INTEGER microseconds on
// SQLite, timestamptz on PostgreSQL.
func (c conn) ts(t time.Time) any {
	if c.pg {
		return t.UTC()
	}
	return t.UnixMicro()
}

// rebind turns ? into $1, $2, … on PostgreSQL.
func (c conn) rebind(q string) string {
	if !c.pg {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// contains is the SQL of "text column col contains the value of the
// placeholder", as instr or strpos.
func (c conn) contains(col, needle string) string {
	if c.pg {
		return "strpos(" + col + "::text, " + needle + ") > 0"
	}
	return "instr(" + col + ", " + needle + ") > 0"
}

func (c conn) exec(ctx context.Context, q string, args ...any) (int64, error) {
	q = c.rebind(q)
	if c.pg {
		tag, err := c.db.Pool().Exec(ctx, q, args...)
		return tag.RowsAffected(), err
	}
	res, err := c.db.Writer().ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (c conn) count(ctx context.Context, q string, args ...any) (int64, error) {
	var n int64
	q = c.rebind(q)
	var err error
	if c.pg {
		err = c.db.Pool().QueryRow(ctx, q, args...).Scan(&n)
	} else {
		err = c.db.Reader().QueryRowContext(ctx, q, args...).Scan(&n)
	}
	return n, err
}

// keyed is a row of a batch: its id and the sort key that follows it.
type keyed struct {
	id  string
	key any
}

// batch runs a query selecting (id, sort key) rows.
func (c conn) batch(ctx context.Context, q string, args ...any) ([]keyed, error) {
	q = c.rebind(q)
	var out []keyed
	if c.pg {
		rows, err := c.db.Pool().Query(ctx, q, args...)
		if err != nil {
			return nil, err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (keyed, error) {
			var k keyed
			var at time.Time
			err := r.Scan(&k.id, &at)
			k.key = at
			return k, err
		})
		return out, err
	}
	rows, err := c.db.Reader().QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k keyed
		var at int64
		if err := rows.Scan(&k.id, &at); err != nil {
			return nil, err
		}
		k.key = at
		out = append(out, k)
	}
	return out, rows.Err()
}

// removed runs a DELETE … RETURNING workspace_id, id on the writer and
// returns the rows it removed.
func (c conn) removed(ctx context.Context, q string, args ...any) ([]RemovedRow, error) {
	q = c.rebind(q)
	var out []RemovedRow
	if c.pg {
		rows, err := c.db.Pool().Query(ctx, q, args...)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, func(r pgx.CollectableRow) (RemovedRow, error) {
			var x RemovedRow
			return x, r.Scan(&x.WorkspaceID, &x.ID)
		})
	}
	rows, err := c.db.Writer().QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var x RemovedRow
		if err := rows.Scan(&x.WorkspaceID, &x.ID); err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

// in is "col IN (?, ?, …)" with its arguments, or "col = ANY(?)" on
// PostgreSQL.
func (c conn) in(col string, ids []string) (string, []any) {
	if c.pg {
		return col + " = ANY(?)", []any{ids}
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return col + " IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ") + ")", args
}

// tx runs fn in one transaction: the writer's on SQLite.
func (c conn) tx(ctx context.Context, fn func(exec func(q string, args ...any) (int64, error)) error) error {
	if c.pg {
		tx, err := c.db.Pool().Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		err = fn(func(q string, args ...any) (int64, error) {
			tag, err := tx.Exec(ctx, c.rebind(q), args...)
			return tag.RowsAffected(), err
		})
		if err != nil {
			return err
		}
		return tx.Commit(ctx)
	}
	tx, err := c.db.Writer().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	err = fn(func(q string, args ...any) (int64, error) {
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	})
	if err != nil {
		return err
	}
	return tx.Commit()
}

// scope is which workspaces a pass covers: one, or all but some.
type scope struct {
	workspace string
	except    []string
}

// where is the scope's condition on col with its arguments.
func (c conn) where(s scope, col string) (string, []any) {
	if s.workspace != "" {
		return " AND " + col + " = ?", []any{s.workspace}
	}
	if len(s.except) == 0 {
		return "", nil
	}
	if c.pg {
		return " AND NOT (" + col + " = ANY(?))", []any{s.except}
	}
	q, args := c.in(col, s.except)
	return " AND NOT " + q, args
}

func wrap(kind Kind, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("retention: %s: %w", kind, err)
}
