package store

import (
	"context"
	"fmt"
	"time"
)

// Credential is a provider's secret (an API key) sealed by package secret.
// The store only ever holds the ciphertext.
type Credential struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	// Provider is the provider name the secret belongs to; one credential
	// per provider and workspace.
	Provider string `json:"provider"`
	// Ciphertext is the sealed secret. List leaves it nil.
	Ciphertext []byte `json:"-"`
	// KeyID names the master key that sealed Ciphertext, so a key rotation
	// can find the rows still sealed with the old key.
	KeyID     string    `json:"key_id"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Validate reports whether c can be written.
func (c Credential) Validate() error {
	switch {
	case c.WorkspaceID == "":
		return fmt.Errorf("%w: credential workspace id is empty; set Credential.WorkspaceID", ErrInvalid)
	case c.Provider == "":
		return fmt.Errorf("%w: credential provider is empty; set Credential.Provider", ErrInvalid)
	case len(c.Ciphertext) == 0:
		return fmt.Errorf("%w: credential for %q has no ciphertext; seal the secret with secret.Box and set Credential.Ciphertext", ErrInvalid, c.Provider)
	case c.KeyID == "":
		return fmt.Errorf("%w: credential for %q has no key id; set Credential.KeyID to the sealing box's KeyID", ErrInvalid, c.Provider)
	}
	return nil
}

// Credentials stores sealed provider credentials.
type Credentials interface {
	// Put stores c as the credential of c.Provider in c.WorkspaceID,
	// replacing the ciphertext and key id of an existing one while keeping
	// its ID and CreatedAt. An unknown workspace gives ErrNotFound.
	Put(ctx context.Context, c Credential) (Credential, error)
	// Get returns the workspace's credential for provider, ciphertext
	// included, or ErrNotFound.
	Get(ctx context.Context, workspaceID, provider string) (Credential, error)
	// List returns the workspace's credentials ordered by provider, without
	// ciphertext.
	List(ctx context.Context, workspaceID string) ([]Credential, error)
	// Delete removes the workspace's credential for provider, or gives
	// ErrNotFound.
	Delete(ctx context.Context, workspaceID, provider string) error
}
