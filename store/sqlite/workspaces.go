package sqlite

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentcraftlab/agentcraft/store"
)

type workspaces struct{ s *Store }

const workspaceColumns = `id, name, created_at`

func scanWorkspace(sc scanner) (store.Workspace, error) {
	var (
		w       store.Workspace
		created int64
	)
	if err := sc.Scan(&w.ID, &w.Name, &created); err != nil {
		return store.Workspace{}, err
	}
	w.CreatedAt = fromMicros(created)
	return w, nil
}

func (r workspaces) Create(ctx context.Context, w store.Workspace) (store.Workspace, error) {
	if err := w.Validate(); err != nil {
		return store.Workspace{}, fmt.Errorf("sqlite: create workspace: %w", err)
	}
	if w.ID == "" {
		w.ID = store.NewID()
	}
	w.CreatedAt = now()
	_, err := r.s.writer.ExecContext(ctx,
		`INSERT INTO workspaces (`+workspaceColumns+`) VALUES (?, ?, ?)`,
		w.ID, w.Name, micros(w.CreatedAt))
	if err != nil {
		return store.Workspace{}, fmt.Errorf("sqlite: create workspace %q: %w", w.Name, mapErr(err))
	}
	return w, nil
}

func (r workspaces) Get(ctx context.Context, id string) (store.Workspace, error) {
	w, err := scanWorkspace(r.s.reader.QueryRowContext(ctx,
		`SELECT `+workspaceColumns+` FROM workspaces WHERE id = ?`, id))
	if err != nil {
		return store.Workspace{}, fmt.Errorf("sqlite: get workspace %s: %w", id, mapErr(err))
	}
	return w, nil
}

func (r workspaces) GetByName(ctx context.Context, name string) (store.Workspace, error) {
	w, err := scanWorkspace(r.s.reader.QueryRowContext(ctx,
		`SELECT `+workspaceColumns+` FROM workspaces WHERE name = ?`, name))
	if err != nil {
		return store.Workspace{}, fmt.Errorf("sqlite: get workspace %q: %w", name, mapErr(err))
	}
	return w, nil
}

func (r workspaces) GetOrCreate(ctx context.Context, name string) (store.Workspace, error) {
	w := store.Workspace{Name: name}
	if err := w.Validate(); err != nil {
		return store.Workspace{}, fmt.Errorf("sqlite: get or create workspace: %w", err)
	}
	if w, err := r.GetByName(ctx, name); !errors.Is(err, store.ErrNotFound) {
		return w, err
	}
	// DO NOTHING makes a concurrent creator's row win; both callers then
	// read the same one.
	_, err := r.s.writer.ExecContext(ctx,
		`INSERT INTO workspaces (`+workspaceColumns+`) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING`,
		store.NewID(), name, micros(now()))
	if err != nil {
		return store.Workspace{}, fmt.Errorf("sqlite: get or create workspace %q: %w", name, mapErr(err))
	}
	return r.GetByName(ctx, name)
}

func (r workspaces) List(ctx context.Context) ([]store.Workspace, error) {
	out, err := queryList(ctx, r.s.reader, scanWorkspace, `SELECT `+workspaceColumns+` FROM workspaces ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list workspaces: %w", err)
	}
	return out, nil
}
