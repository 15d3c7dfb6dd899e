package retention

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/database"
	"github.com/agentcraftlab/agentcraft/store"
)

// Overrides are workspaces' own retention ages for the kinds that belong
// to them (Kind.PerWorkspace), stored in retention_policies (migration
// 00020). An override replaces the server's age for that workspace,
// shorter or longer; "keep" keeps the kind forever there.
type Overrides struct {
	c   conn
	now func() time.Time
}

// NewOverrides returns the overrides stored in db, which the store has
// migrated.
func NewOverrides(db *database.DB) *Overrides {
	return &Overrides{c: newConn(db), now: time.Now}
}

// ErrNotPerWorkspace is Put's error for a kind only the server's policy
// sets.
var ErrNotPerWorkspace = errors.New("set only in the server's retention policy (agentcraft.yaml retention:)")

// Get returns the workspace's overrides, kind → age as written ("30d",
// "keep").
func (o *Overrides) Get(ctx context.Context, workspaceID string) (map[Kind]string, error) {
	all, err := o.list(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	return all[workspaceID], nil
}

// Put replaces the workspace's overrides with ages: kind → age; a kind
// mapped to "" goes back to the server's policy. A kind that is unknown
// or not PerWorkspace, or a malformed age, is a store.ErrInvalid error
// naming the kind; an unknown workspace is store.ErrNotFound.
func (o *Overrides) Put(ctx context.Context, workspaceID string, ages map[Kind]string) error {
	for k, v := range ages {
		switch {
		case !k.Valid():
			return fmt.Errorf("%w: %s: unknown kind; use one of conversations, uploads, run_events, checkpoints", store.ErrInvalid, k)
		case !k.PerWorkspace():
			return fmt.Errorf("%w: %s: %w", store.ErrInvalid, k, ErrNotPerWorkspace)
		}
		if _, err := ParseAge(v); err != nil {
			return fmt.Errorf("%w: %s: %w", store.ErrInvalid, k, err)
		}
	}
	n, err := o.c.count(ctx, `SELECT count(*) FROM workspaces WHERE id = ?`, workspaceID)
	if err != nil {
		return fmt.Errorf("retention: put overrides: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("retention: workspace %s: %w", workspaceID, store.ErrNotFound)
	}
	return o.c.tx(ctx, func(exec func(string, ...any) (int64, error)) error {
		for k, v := range ages {
			if _, err := exec(`DELETE FROM retention_policies WHERE workspace_id = ? AND kind = ?`, workspaceID, string(k)); err != nil {
				return fmt.Errorf("retention: put overrides: %w", err)
			}
			if v == "" {
				continue
			}
			d, _ := ParseAge(v)
			if _, err := exec(`INSERT INTO retention_policies (workspace_id, kind, age, updated_at) VALUES (?, ?, ?, ?)`,
				workspaceID, string(k), FormatAge(d), o.c.ts(o.now())); err != nil {
				return fmt.Errorf("retention: put overrides: %w", err)
			}
		}
		return nil
	})
}

// list returns workspace → kind → age, for one workspace or all ("").
func (o *Overrides) list(ctx context.Context, workspaceID string) (map[string]map[Kind]string, error) {
	q := `SELECT workspace_id, kind, age FROM retention_policies`
	var args []any
	if workspaceID != "" {
		q += ` WHERE workspace_id = ?`
		args = append(args, workspaceID)
	}
	out := map[string]map[Kind]string{}
	add := func(ws, kind, age string) {
		if out[ws] == nil {
			out[ws] = map[Kind]string{}
		}
		out[ws][Kind(kind)] = age
	}
	q = o.c.rebind(q)
	if o.c.pg {
		rows, err := o.c.db.Pool().Query(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("retention: list overrides: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var ws, kind, age string
			if err := rows.Scan(&ws, &kind, &age); err != nil {
				return nil, fmt.Errorf("retention: list overrides: %w", err)
			}
			add(ws, kind, age)
		}
		return out, rows.Err()
	}
	rows, err := o.c.db.Reader().QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("retention: list overrides: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var ws, kind, age string
		if err := rows.Scan(&ws, &kind, &age); err != nil {
			return nil, fmt.Errorf("retention: list overrides: %w", err)
		}
		add(ws, kind, age)
	}
	return out, rows.Err()
}
