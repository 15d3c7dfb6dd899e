package sqlite

import (
	"context"

	"github.com/agentcraftlab/agentcraft/store"
)

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

func (d driver) WorkspaceInsert(ctx context.Context, p *store.WorkspaceInsertParams) error {
	query := `INSERT INTO workspaces (` + workspaceColumns + `) VALUES (?, ?, ?)`
	if p.IfAbsent {
		query += ` ON CONFLICT (name) DO NOTHING`
	}
	w := p.Workspace
	_, err := d.s.writer.ExecContext(ctx, query, w.ID, w.Name, micros(w.CreatedAt))
	return mapErr(err)
}

func (d driver) WorkspaceGet(ctx context.Context, id string) (store.Workspace, error) {
	w, err := scanWorkspace(d.s.reader.QueryRowContext(ctx,
		`SELECT `+workspaceColumns+` FROM workspaces WHERE id = ?`, id))
	return w, mapErr(err)
}

func (d driver) WorkspaceGetByName(ctx context.Context, name string) (store.Workspace, error) {
	w, err := scanWorkspace(d.s.reader.QueryRowContext(ctx,
		`SELECT `+workspaceColumns+` FROM workspaces WHERE name = ?`, name))
	return w, mapErr(err)
}

func (d driver) WorkspaceList(ctx context.Context) ([]store.Workspace, error) {
	return queryList(ctx, d.s.reader, scanWorkspace, `SELECT `+workspaceColumns+` FROM workspaces ORDER BY name`)
}

func (d driver) WorkspaceRename(ctx context.Context, p *store.WorkspaceRenameParams) (store.Workspace, error) {
	w, err := scanWorkspace(d.s.writer.QueryRowContext(ctx,
		`UPDATE workspaces SET name = ? WHERE id = ? RETURNING `+workspaceColumns, p.Name, p.ID))
	return w, mapErr(err)
}

func (d driver) WorkspaceDelete(ctx context.Context, id string) error {
	res, err := d.s.writer.ExecContext(ctx, `DELETE FROM workspaces WHERE id = ?`, id)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}
