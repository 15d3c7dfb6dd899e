package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

const workspaceColumns = `id, name, created_at`

func scanWorkspace(row pgx.Row) (store.Workspace, error) {
	var w store.Workspace
	if err := row.Scan(&w.ID, &w.Name, &w.CreatedAt); err != nil {
		return store.Workspace{}, err
	}
	w.CreatedAt = w.CreatedAt.UTC()
	return w, nil
}

func (d driver) WorkspaceInsert(ctx context.Context, p *store.WorkspaceInsertParams) error {
	query := `INSERT INTO workspaces (` + workspaceColumns + `) VALUES ($1, $2, $3)`
	if p.IfAbsent {
		query += ` ON CONFLICT (name) DO NOTHING`
	}
	w := p.Workspace
	_, err := d.s.pool.Exec(ctx, query, w.ID, w.Name, w.CreatedAt)
	return mapErr(err)
}

func (d driver) WorkspaceGet(ctx context.Context, id string) (store.Workspace, error) {
	w, err := scanWorkspace(d.s.pool.QueryRow(ctx,
		`SELECT `+workspaceColumns+` FROM workspaces WHERE id = $1`, id))
	return w, mapErr(err)
}

func (d driver) WorkspaceGetByName(ctx context.Context, name string) (store.Workspace, error) {
	w, err := scanWorkspace(d.s.pool.QueryRow(ctx,
		`SELECT `+workspaceColumns+` FROM workspaces WHERE name = $1`, name))
	return w, mapErr(err)
}

func (d driver) WorkspaceList(ctx context.Context) ([]store.Workspace, error) {
	return queryList(ctx, d.s, scanWorkspace,
		`SELECT `+workspaceColumns+` FROM workspaces ORDER BY name COLLATE "C"`)
}

func (d driver) WorkspaceRename(ctx context.Context, p *store.WorkspaceRenameParams) (store.Workspace, error) {
	w, err := scanWorkspace(d.s.pool.QueryRow(ctx,
		`UPDATE workspaces SET name = $1 WHERE id = $2 RETURNING `+workspaceColumns, p.Name, p.ID))
	return w, mapErr(err)
}

func (d driver) WorkspaceDelete(ctx context.Context, id string) error {
	tag, err := d.s.pool.Exec(ctx, `DELETE FROM workspaces WHERE id = $1`, id)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}
