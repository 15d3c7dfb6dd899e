package postgres

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
		return store.Upload{}, fmt.Errorf("postgres: put upload: %w", err)
	}
	if u.ID == "" {
		u.ID = store.NewID()
	}
	u.ExpiresAt = store.Timestamp(u.ExpiresAt)
	u.CreatedAt = now()
	data := u.Data
	if data == nil {
		data = []byte{} // a nil slice would be sent as NULL
	}
	_, err := r.s.pool.Exec(ctx,
		`INSERT INTO uploads (`+uploadInfoColumns+`, data) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		u.ID, u.WorkspaceID, u.Name, u.ContentType, u.Size, u.ExpiresAt, u.CreatedAt, data)
	if err != nil {
		return store.Upload{}, fmt.Errorf("postgres: put upload %q: %w", u.Name, mapErr(err))
	}
	return u, nil
}

func (r uploads) Get(ctx context.Context, workspaceID, id string) (store.Upload, error) {
	var u store.Upload
	// expires_at > now hides an expired upload that DeleteExpired has not
	// removed yet.
	err := r.s.pool.QueryRow(ctx,
		`SELECT `+uploadInfoColumns+`, data FROM uploads WHERE workspace_id = $1 AND id = $2 AND expires_at > $3`,
		workspaceID, id, now()).
		Scan(&u.ID, &u.WorkspaceID, &u.Name, &u.ContentType, &u.Size, &u.ExpiresAt, &u.CreatedAt, &u.Data)
	if err != nil {
		return store.Upload{}, fmt.Errorf("postgres: get upload %s: %w", id, mapErr(err))
	}
	if u.Data == nil {
		u.Data = []byte{} // Get always fills Data; nil is Info's
	}
	u.ExpiresAt, u.CreatedAt = u.ExpiresAt.UTC(), u.CreatedAt.UTC()
	return u, nil
}

func (r uploads) Info(ctx context.Context, workspaceID, id string) (store.Upload, error) {
	var u store.Upload
	err := r.s.pool.QueryRow(ctx,
		`SELECT `+uploadInfoColumns+` FROM uploads WHERE workspace_id = $1 AND id = $2 AND expires_at > $3`,
		workspaceID, id, now()).
		Scan(&u.ID, &u.WorkspaceID, &u.Name, &u.ContentType, &u.Size, &u.ExpiresAt, &u.CreatedAt)
	if err != nil {
		return store.Upload{}, fmt.Errorf("postgres: get upload info %s: %w", id, mapErr(err))
	}
	u.ExpiresAt, u.CreatedAt = u.ExpiresAt.UTC(), u.CreatedAt.UTC()
	return u, nil
}

func (r uploads) Delete(ctx context.Context, workspaceID, id string) error {
	tag, err := r.s.pool.Exec(ctx, `DELETE FROM uploads WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
	if err == nil {
		err = affected(tag)
	}
	if err != nil {
		return fmt.Errorf("postgres: delete upload %s: %w", id, mapErr(err))
	}
	return nil
}

func (r uploads) DeleteExpired(ctx context.Context, at time.Time) (int, error) {
	tag, err := r.s.pool.Exec(ctx, `DELETE FROM uploads WHERE expires_at <= $1`, store.Timestamp(at))
	if err != nil {
		return 0, fmt.Errorf("postgres: delete expired uploads: %w", mapErr(err))
	}
	return int(tag.RowsAffected()), nil
}
