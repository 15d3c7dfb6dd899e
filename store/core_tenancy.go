package store

import (
	"context"
	"errors"
	"time"
)

// workspaces is Workspaces on a Driver.
type workspaces struct{ c Core }

func (r workspaces) Create(ctx context.Context, w Workspace) (Workspace, error) {
	if err := w.Validate(); err != nil {
		return Workspace{}, r.c.errorf("create workspace: %w", err)
	}
	if w.ID == "" {
		w.ID = NewID()
	}
	w.CreatedAt = now()
	if err := r.c.d.WorkspaceInsert(ctx, &WorkspaceInsertParams{Workspace: w}); err != nil {
		return Workspace{}, r.c.errorf("create workspace %q: %w", w.Name, err)
	}
	return w, nil
}

func (r workspaces) Get(ctx context.Context, id string) (Workspace, error) {
	w, err := r.c.d.WorkspaceGet(ctx, id)
	if err != nil {
		return Workspace{}, r.c.errorf("get workspace %s: %w", id, err)
	}
	return w, nil
}

func (r workspaces) GetByName(ctx context.Context, name string) (Workspace, error) {
	w, err := r.c.d.WorkspaceGetByName(ctx, name)
	if err != nil {
		return Workspace{}, r.c.errorf("get workspace %q: %w", name, err)
	}
	return w, nil
}

func (r workspaces) GetOrCreate(ctx context.Context, name string) (Workspace, error) {
	w := Workspace{Name: name}
	if err := w.Validate(); err != nil {
		return Workspace{}, r.c.errorf("get or create workspace: %w", err)
	}
	if w, err := r.GetByName(ctx, name); !errors.Is(err, ErrNotFound) {
		return w, err
	}
	// IfAbsent makes a concurrent creator's row win; both callers then
	// read the same one.
	w.ID, w.CreatedAt = NewID(), now()
	if err := r.c.d.WorkspaceInsert(ctx, &WorkspaceInsertParams{Workspace: w, IfAbsent: true}); err != nil {
		return Workspace{}, r.c.errorf("get or create workspace %q: %w", name, err)
	}
	return r.GetByName(ctx, name)
}

func (r workspaces) List(ctx context.Context) ([]Workspace, error) {
	out, err := r.c.d.WorkspaceList(ctx)
	if err != nil {
		return nil, r.c.errorf("list workspaces: %w", err)
	}
	return out, nil
}

func (r workspaces) Rename(ctx context.Context, id, name string) (Workspace, error) {
	if err := (Workspace{Name: name}).Validate(); err != nil {
		return Workspace{}, r.c.errorf("rename workspace %s: %w", id, err)
	}
	w, err := r.c.d.WorkspaceRename(ctx, &WorkspaceRenameParams{ID: id, Name: name})
	if err != nil {
		return Workspace{}, r.c.errorf("rename workspace %s to %q: %w", id, name, err)
	}
	return w, nil
}

func (r workspaces) Delete(ctx context.Context, id string) error {
	if err := r.c.d.WorkspaceDelete(ctx, id); err != nil {
		return r.c.errorf("delete workspace %s: %w", id, err)
	}
	return nil
}

// apiKeys is APIKeys on a Driver.
type apiKeys struct{ c Core }

func (r apiKeys) Create(ctx context.Context, k APIKey) (APIKey, error) {
	if err := k.Validate(); err != nil {
		return APIKey{}, r.c.errorf("create api key: %w", err)
	}
	if k.ID == "" {
		k.ID = NewID()
	}
	k.Hash = append([]byte(nil), k.Hash...)
	if k.Role == "" {
		k.Role = RoleMember
	}
	k.CreatedAt = now()
	k.LastUsedAt, k.RevokedAt = nil, nil
	if err := r.c.d.APIKeyInsert(ctx, &APIKeyInsertParams{Key: k}); err != nil {
		return APIKey{}, r.c.errorf("create api key %q: %w", k.Name, r.c.missingParent(ctx, err, k.WorkspaceID, k.UserID))
	}
	return k, nil
}

func (r apiKeys) GetByHash(ctx context.Context, hash []byte) (APIKey, error) {
	k, err := r.c.d.APIKeyGetByHash(ctx, hash)
	if err != nil {
		// Never put the hash in the message: it identifies a live key.
		return APIKey{}, r.c.errorf("get api key by hash: %w", err)
	}
	return k, nil
}

func (r apiKeys) Get(ctx context.Context, workspaceID, id string) (APIKey, error) {
	k, err := r.c.d.APIKeyGet(ctx, workspaceID, id)
	if err != nil {
		return APIKey{}, r.c.errorf("get api key %s: %w", id, err)
	}
	return k, nil
}

func (r apiKeys) List(ctx context.Context, workspaceID string) ([]APIKey, error) {
	out, err := r.c.d.APIKeyList(ctx, workspaceID)
	if err != nil {
		return nil, r.c.errorf("list api keys: %w", err)
	}
	return out, nil
}

func (r apiKeys) Revoke(ctx context.Context, workspaceID, id string) error {
	if err := r.c.d.APIKeyRevoke(ctx, &APIKeyStampParams{WorkspaceID: workspaceID, ID: id, At: now()}); err != nil {
		return r.c.errorf("revoke api key %s: %w", id, err)
	}
	return nil
}

func (r apiKeys) Touch(ctx context.Context, workspaceID, id string, at time.Time) error {
	if err := r.c.d.APIKeyTouch(ctx, &APIKeyStampParams{WorkspaceID: workspaceID, ID: id, At: Timestamp(at)}); err != nil {
		return r.c.errorf("touch api key %s: %w", id, err)
	}
	return nil
}

// credentials is Credentials on a Driver.
type credentials struct{ c Core }

func (r credentials) Put(ctx context.Context, c Credential) (Credential, error) {
	if err := c.Validate(); err != nil {
		return Credential{}, r.c.errorf("put credential: %w", err)
	}
	if c.ID == "" {
		c.ID = NewID()
	}
	c.Ciphertext = append([]byte(nil), c.Ciphertext...)
	t := now()
	c.CreatedAt, c.UpdatedAt = t, t
	got, err := r.c.d.CredentialUpsert(ctx, &CredentialUpsertParams{Credential: c})
	if err != nil {
		return Credential{}, r.c.errorf("put credential for %q: %w", c.Provider, err)
	}
	return got, nil
}

func (r credentials) Get(ctx context.Context, workspaceID, provider string) (Credential, error) {
	c, err := r.c.d.CredentialGet(ctx, workspaceID, provider)
	if err != nil {
		return Credential{}, r.c.errorf("get credential for %q: %w", provider, err)
	}
	return c, nil
}

func (r credentials) List(ctx context.Context, workspaceID string) ([]Credential, error) {
	out, err := r.c.d.CredentialList(ctx, workspaceID)
	if err != nil {
		return nil, r.c.errorf("list credentials: %w", err)
	}
	return out, nil
}

func (r credentials) Delete(ctx context.Context, workspaceID, provider string) error {
	if err := r.c.d.CredentialDelete(ctx, workspaceID, provider); err != nil {
		return r.c.errorf("delete credential for %q: %w", provider, err)
	}
	return nil
}
