package sqlite

import (
	"context"

	"github.com/agentcraftlab/agentcraft/store"
)

// uploadInfoColumns are the columns of Info; Get adds data.
const uploadInfoColumns = `id, workspace_id, name, content_type, size, expires_at, created_at`

func (d driver) UploadInsert(ctx context.Context, p *store.UploadInsertParams) error {
	u := p.Upload
	_, err := d.s.writer.ExecContext(ctx,
		`INSERT INTO uploads (`+uploadInfoColumns+`, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		u.ID, u.WorkspaceID, u.Name, u.ContentType, u.Size, micros(u.ExpiresAt), micros(u.CreatedAt), u.Data)
	return mapErr(err)
}

func (d driver) UploadGet(ctx context.Context, p *store.UploadGetParams) (store.Upload, error) {
	var (
		u                store.Upload
		expires, created int64
	)
	columns, dest := uploadInfoColumns, []any{&u.ID, &u.WorkspaceID, &u.Name, &u.ContentType, &u.Size, &expires, &created}
	if p.Data {
		columns, dest = columns+`, data`, append(dest, &u.Data)
	}
	err := d.s.reader.QueryRowContext(ctx,
		`SELECT `+columns+` FROM uploads WHERE workspace_id = ? AND id = ? AND expires_at > ?`,
		p.WorkspaceID, p.ID, micros(p.Now)).Scan(dest...)
	if err != nil {
		return store.Upload{}, mapErr(err)
	}
	u.ExpiresAt, u.CreatedAt = fromMicros(expires), fromMicros(created)
	return u, nil
}

func (d driver) UploadDelete(ctx context.Context, workspaceID, id string) error {
	res, err := d.s.writer.ExecContext(ctx, `DELETE FROM uploads WHERE workspace_id = ? AND id = ?`, workspaceID, id)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}

func (d driver) UploadDeleteExpired(ctx context.Context, p *store.UploadDeleteExpiredParams) (int, error) {
	res, err := d.s.writer.ExecContext(ctx, `DELETE FROM uploads WHERE expires_at <= ?`, micros(p.Now))
	if err != nil {
		return 0, mapErr(err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
