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
	Hash []byte `json:"-"`
	// Role is the key's power in its workspace; Create makes it
	// RoleMember when empty. Keys made before roles existed are owners
	// (migration 00013), so they keep the power they had.
	Role Role `json:"role"`
	// Scope, when set, narrows the key below its role: one of the
	// APIKeyScope values.
	Scope string `json:"scope,omitempty"`
	// UserID is the user who made the key and on whose behalf it acts;
	// empty for keys made on the command line. The key is deleted with
	// the user.
	UserID     string     `json:"user_id,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
}

// API key scopes: what a key may do at most, whatever its role. The empty
// scope is the role's whole power.
const (
	// APIKeyScopeChat allows reading and chatting only: a key for a chat
	// front end such as Open WebUI.
	APIKeyScopeChat = "chat"
	// APIKeyScopeRead allows reading only: a key for dashboards and
	// exports.
	APIKeyScopeRead = "read"
)

// APIKeyScopes lists the scopes Validate accepts, the empty scope first.
var APIKeyScopes = []string{"", APIKeyScopeChat, APIKeyScopeRead}

// Validate reports whether k can be written. An empty Role is valid (Create
// makes it RoleMember).
func (k APIKey) Validate() error {
	if k.Role != "" {
		if err := k.Role.validate("api key"); err != nil {
			return err
		}
	}
	switch k.Scope {
	case "", APIKeyScopeChat, APIKeyScopeRead:
	default:
		return fmt.Errorf("%w: api key scope %q is not a scope; use \"chat\" (read and chat), \"read\" or none (the role's whole power)", ErrInvalid, k.Scope)
	}
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
	// ErrNotFound, as does an unknown UserID. An empty Role is stored as
	// RoleMember.
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
