package store

import (
	"context"
	"slices"
	"time"
)

// uploads is Uploads on a Driver.
type uploads struct{ c Core }

func (r uploads) Put(ctx context.Context, u Upload) (Upload, error) {
	if err := u.Validate(); err != nil {
		return Upload{}, r.c.errorf("put upload: %w", err)
	}
	if u.ID == "" {
		u.ID = NewID()
	}
	u.ExpiresAt = Timestamp(u.ExpiresAt)
	u.CreatedAt = now()
	p := &UploadInsertParams{Upload: u}
	if p.Upload.Data == nil {
		p.Upload.Data = []byte{} // a nil slice would be written as NULL
	}
	if err := r.c.d.UploadInsert(ctx, p); err != nil {
		return Upload{}, r.c.errorf("put upload %q: %w", u.Name, err)
	}
	return u, nil
}

func (r uploads) Get(ctx context.Context, workspaceID, id string) (Upload, error) {
	// Now hides an expired upload that DeleteExpired has not removed yet.
	u, err := r.c.d.UploadGet(ctx, &UploadGetParams{WorkspaceID: workspaceID, ID: id, Now: now(), Data: true})
	if err != nil {
		return Upload{}, r.c.errorf("get upload %s: %w", id, err)
	}
	if u.Data == nil {
		u.Data = []byte{} // Get always fills Data; nil is Info's
	}
	return u, nil
}

func (r uploads) Info(ctx context.Context, workspaceID, id string) (Upload, error) {
	u, err := r.c.d.UploadGet(ctx, &UploadGetParams{WorkspaceID: workspaceID, ID: id, Now: now()})
	if err != nil {
		return Upload{}, r.c.errorf("get upload info %s: %w", id, err)
	}
	u.Data = nil
	return u, nil
}

func (r uploads) Delete(ctx context.Context, workspaceID, id string) error {
	if err := r.c.d.UploadDelete(ctx, workspaceID, id); err != nil {
		return r.c.errorf("delete upload %s: %w", id, err)
	}
	return nil
}

func (r uploads) DeleteExpired(ctx context.Context, at time.Time) (int, error) {
	n, err := r.c.d.UploadDeleteExpired(ctx, &UploadDeleteExpiredParams{Now: Timestamp(at)})
	if err != nil {
		return 0, r.c.errorf("delete expired uploads: %w", err)
	}
	return n, nil
}

// oauthClients is OAuthClients on a Driver.
type oauthClients struct{ c Core }

func (r oauthClients) Create(ctx context.Context, c OAuthClient) (OAuthClient, error) {
	if err := c.Validate(); err != nil {
		return OAuthClient{}, r.c.errorf("create oauth client: %w", err)
	}
	if c.ID == "" {
		c.ID = NewID()
	}
	c.SecretHash = slices.Clone(c.SecretHash)
	c.Scopes = slices.Clone(c.Scopes)
	c.CreatedAt = now()
	c.RevokedAt = nil
	if err := r.c.d.OAuthClientInsert(ctx, &OAuthClientInsertParams{Client: c}); err != nil {
		return OAuthClient{}, r.c.errorf("create oauth client %q: %w", c.Name, err)
	}
	return c, nil
}

func (r oauthClients) Get(ctx context.Context, id string) (OAuthClient, error) {
	c, err := r.c.d.OAuthClientGet(ctx, id)
	if err != nil {
		return OAuthClient{}, r.c.errorf("get oauth client %s: %w", id, err)
	}
	return c, nil
}

func (r oauthClients) List(ctx context.Context, workspaceID string) ([]OAuthClient, error) {
	out, err := r.c.d.OAuthClientList(ctx, workspaceID)
	if err != nil {
		return nil, r.c.errorf("list oauth clients: %w", err)
	}
	return out, nil
}

func (r oauthClients) Revoke(ctx context.Context, workspaceID, id string) error {
	if err := r.c.d.OAuthClientRevoke(ctx, &OAuthClientRevokeParams{WorkspaceID: workspaceID, ID: id, At: now()}); err != nil {
		return r.c.errorf("revoke oauth client %s: %w", id, err)
	}
	return nil
}
