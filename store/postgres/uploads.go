package postgres

import (
	"context"

	"github.com/agentcraftlab/agentcraft/store"
)

// uploadInfoColumns are the columns of Info; Get adds data.
const uploadInfoColumns = `id, workspace_id, name, content_type, size, expires_at, created_at`

func (d driver) UploadInsert(ctx context.Context, p *store.UploadInsertParams) error {
	u := p.Upload
	_, err := d.s.pool.Exec(ctx,
		`INSERT INTO uploads (`+uploadInfoColumns+`, data) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		u.ID, u.WorkspaceID, u.Name, u.ContentType, u.Size, u.ExpiresAt, u.CreatedAt, u.Data)
	return mapErr(err)
}

func (d driver) UploadGet(ctx context.Context, p *store.UploadGetParams) (store.Upload, error) {
	var u store.Upload
	columns, dest := uploadInfoColumns, []any{&u.ID, &u.WorkspaceID, &u.Name, &u.ContentType, &u.Size, &u.ExpiresAt, &u.CreatedAt}
	if p.Data {
		columns, dest = columns+`, data`, append(dest, &u.Data)
	}
	err := d.s.pool.QueryRow(ctx,
		`SELECT `+columns+` FROM uploads WHERE workspace_id = $1 AND id = $2 AND expires_at > $3`,
		p.WorkspaceID, p.ID, p.Now).Scan(dest...)
	if err != nil {
		return store.Upload{}, mapErr(err)
	}
	u.ExpiresAt, u.CreatedAt = u.ExpiresAt.UTC(), u.CreatedAt.UTC()
	return u, nil
}

func (d driver) UploadDelete(ctx context.Context, workspaceID, id string) error {
	tag, err := d.s.pool.Exec(ctx, `DELETE FROM uploads WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}

func (d driver) UploadDeleteExpired(ctx context.Context, p *store.UploadDeleteExpiredParams) (int, error) {
	tag, err := d.s.pool.Exec(ctx, `DELETE FROM uploads WHERE expires_at <= $1`, p.Now)
	if err != nil {
		return 0, mapErr(err)
	}
	return int(tag.RowsAffected()), nil
}
