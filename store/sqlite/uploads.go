package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

// Uploads implements store.Store.
func (s *Store) Uploads() store.Uploads { return uploads{s} }

type uploads struct{ s *Store }

// uploadInfoColumns are the columns of Info; Get adds data.
const uploadInfoColumns = `id, workspace_id, name, content_type, size, expires_at, created_at`

func (r uploads) Put(ctx context.Context, u store.Upload) (store.Upload, error) {
	if err := u.Validate(); err != nil {
		return store.Upload{}, fmt.Errorf("sqlite: put upload: %w", err)
	}
	if u.ID == "" {
		u.ID = store.NewID()
	}
	u.ExpiresAt = store.Timestamp(u.ExpiresAt)
	u.CreatedAt = now()
	data := u.Data
	if data == nil {
		data = []byte{} // a nil slice would bind as NULL
	}
	_, err := r.s.writer.ExecContext(ctx,
		`INSERT INTO uploads (`+uploadInfoColumns+`, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		u.ID, u.WorkspaceID, u.Name, u.ContentType, u.Size, micros(u.ExpiresAt), micros(u.CreatedAt), data)
	if err != nil {
		return store.Upload{}, fmt.Errorf("sqlite: put upload %q: %w", u.Name, mapErr(err))
	}
	return u, nil
}

func (r uploads) Get(ctx context.Context, workspaceID, id string) (store.Upload, error) {
	var (
		u                store.Upload
		expires, created int64
	)
	// expires_at > now hides an expired upload that DeleteExpired has not
	// removed yet.
	err := r.s.reader.QueryRowContext(ctx,
		`SELECT `+uploadInfoColumns+`, data FROM uploads WHERE workspace_id = ? AND id = ? AND expires_at > ?`,
		workspaceID, id, micros(now())).
		Scan(&u.ID, &u.WorkspaceID, &u.Name, &u.ContentType, &u.Size, &expires, &created, &u.Data)
	if err != nil {
		return store.Upload{}, fmt.Errorf("sqlite: get upload %s: %w", id, mapErr(err))
	}
	if u.Data == nil {
		u.Data = []byte{} // Get always fills Data; nil is Info's
	}
	u.ExpiresAt, u.CreatedAt = fromMicros(expires), fromMicros(created)
	return u, nil
}

func (r uploads) Info(ctx context.Context, workspaceID, id string) (store.Upload, error) {
	var (
		u                store.Upload
		expires, created int64
	)
	err := r.s.reader.QueryRowContext(ctx,
		`SELECT `+uploadInfoColumns+` FROM uploads WHERE workspace_id = ? AND id = ? AND expires_at > ?`,
		workspaceID, id, micros(now())).
		Scan(&u.ID, &u.WorkspaceID, &u.Name, &u.ContentType, &u.Size, &expires, &created)
	if err != nil {
		return store.Upload{}, fmt.Errorf("sqlite: get upload info %s: %w", id, mapErr(err))
	}
	u.ExpiresAt, u.CreatedAt = fromMicros(expires), fromMicros(created)
	return u, nil
}

func (r uploads) Delete(ctx context.Context, workspaceID, id string) error {
	res, err := r.s.writer.ExecContext(ctx, `DELETE FROM uploads WHERE workspace_id = ? AND id = ?`, workspaceID, id)
	if err == nil {
		err = rowsAffected(res)
	}
	if err != nil {
		return fmt.Errorf("sqlite: delete upload %s: %w", id, mapErr(err))
	}
	return nil
}

func (r uploads) DeleteExpired(ctx context.Context, at time.Time) (int, error) {
	res, err := r.s.writer.ExecContext(ctx, `DELETE FROM uploads WHERE expires_at <= ?`, micros(store.Timestamp(at)))
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete expired uploads: %w", mapErr(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete expired uploads: %w", err)
	}
	return int(n), nil
}
