package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

type workspaces struct{ s *Store }

const workspaceColumns = `id, name, created_at`

func scanWorkspace(row pgx.Row) (store.Workspace, error) {
	var w store.Workspace
	if err := row.Scan(&w.ID, &w.Name, &w.CreatedAt); err != nil {
		return store.Workspace{}, err
	}
	w.CreatedAt = w.CreatedAt.UTC()
	return w, nil
}

func (r workspaces) Create(ctx context.Context, w store.Workspace) (store.Workspace, error) {
	if err := w.Validate(); err != nil {
		return store.Workspace{}, fmt.Errorf("postgres: create workspace: %w", err)
	}
	if w.ID == "" {
		w.ID = store.NewID()
	}
	w.CreatedAt = now()
	_, err := r.s.pool.Exec(ctx,
		`INSERT INTO workspaces (`+workspaceColumns+`) VALUES ($1, $2, $3)`, w.ID, w.Name, w.CreatedAt)
	if err != nil {
		return store.Workspace{}, fmt.Errorf("postgres: create workspace %q: %w", w.Name, mapErr(err))
	}
	return w, nil
}

func (r workspaces) Get(ctx context.Context, id string) (store.Workspace, error) {
	w, err := scanWorkspace(r.s.pool.QueryRow(ctx,
		`SELECT `+workspaceColumns+` FROM workspaces WHERE id = $1`, id))
	if err != nil {
		return store.Workspace{}, fmt.Errorf("postgres: get workspace %s: %w", id, mapErr(err))
	}
	return w, nil
}

func (r workspaces) GetByName(ctx context.Context, name string) (store.Workspace, error) {
	w, err := scanWorkspace(r.s.pool.QueryRow(ctx,
		`SELECT `+workspaceColumns+` FROM workspaces WHERE name = $1`, name))
	if err != nil {
		return store.Workspace{}, fmt.Errorf("postgres: get workspace %q: %w", name, mapErr(err))
	}
	return w, nil
}

func (r workspaces) GetOrCreate(ctx context.Context, name string) (store.Workspace, error) {
	w := store.Workspace{Name: name}
	if err := w.Validate(); err != nil {
		return store.Workspace{}, fmt.Errorf("postgres: get or create workspace: %w", err)
	}
	if w, err := r.GetByName(ctx, name); !errors.Is(err, store.ErrNotFound) {
		return w, err
	}
	// DO NOTHING makes a concurrent creator's row win; both callers then
	// read the same one.
	_, err := r.s.pool.Exec(ctx,
		`INSERT INTO workspaces (`+workspaceColumns+`) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`,
		store.NewID(), name, now())
	if err != nil {
		return store.Workspace{}, fmt.Errorf("postgres: get or create workspace %q: %w", name, mapErr(err))
	}
	return r.GetByName(ctx, name)
}

func (r workspaces) List(ctx context.Context) ([]store.Workspace, error) {
	out, err := queryList(ctx, r.s, scanWorkspace,
		`SELECT `+workspaceColumns+` FROM workspaces ORDER BY name COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("postgres: list workspaces: %w", err)
	}
	return out, nil
}
