package store

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"
)

// APIKey is a bearer key that authenticates requests to one workspace. The
// store keeps only its SHA-256 hash; the key itself is shown to the user once.
type APIKey struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	Name        string `json:"name"`
	// Prefix is the first characters of the key (such as "ac_ab12cd"),
	// kept in clear so users can tell their keys apart.
	Prefix string `json:"prefix"`
	// Hash is the SHA-256 of the whole key.
	Hash       []byte     `json:"-"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
}

// Validate reports whether k can be written.
func (k APIKey) Validate() error {
	if k.WorkspaceID == "" {
		return fmt.Errorf("%w: api key workspace id is empty; set APIKey.WorkspaceID", ErrInvalid)
	}
	if len(k.Hash) != sha256.Size {
		// A wrong length most likely means the caller passed the key
		// itself, which must never be stored.
		return fmt.Errorf("%w: api key hash is %d bytes; set APIKey.Hash to the SHA-256 (%d bytes) of the key",
			ErrInvalid, len(k.Hash), sha256.Size)
	}
	return nil
}

// APIKeys stores API keys.
type APIKeys interface {
	// Create inserts k and returns it as stored. It assigns an ID when k.ID
	// is empty and stamps CreatedAt; LastUsedAt and RevokedAt start nil. A
	// hash already stored gives ErrConflict; an unknown workspace gives
	// ErrNotFound.
	Create(ctx context.Context, k APIKey) (APIKey, error)
	// GetByHash returns the live key whose hash is hash. A revoked or
	// unknown key gives ErrNotFound. It runs on every authenticated
	// request and is answered from the unique index on the hash.
	GetByHash(ctx context.Context, hash []byte) (APIKey, error)
	// Get returns one key of the workspace, revoked or not, or ErrNotFound.
	Get(ctx context.Context, workspaceID, id string) (APIKey, error)
	// List returns the workspace's keys, revoked ones included, oldest first.
	List(ctx context.Context, workspaceID string) ([]APIKey, error)
	// Revoke marks the key revoked now. Revoking a revoked key keeps the
	// first revocation time and succeeds; an unknown key gives ErrNotFound.
	Revoke(ctx context.Context, workspaceID, id string) error
	// Touch records that the key was used at at. LastUsedAt never moves
	// backwards, so concurrent requests may touch in any order. An unknown
	// key gives ErrNotFound.
	Touch(ctx context.Context, workspaceID, id string, at time.Time) error
}
