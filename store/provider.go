package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Provider is a configured model provider: where to reach it and how. Its
// API key is not here but in a Credential with the same name.
type Provider struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	// Name is unique within the workspace; agents refer to it as the
	// "provider" part of "provider/model".
	Name string `json:"name"`
	// Type selects the adapter: "openai" (also for OpenAI-compatible
	// servers) or "anthropic".
	Type string `json:"type"`
	// BaseURL overrides the adapter's default endpoint when set.
	BaseURL string `json:"base_url,omitempty"`
	// Settings holds adapter-specific options as JSON (nil when unset). It
	// round-trips as equivalent JSON, not byte for byte.
	Settings  json.RawMessage `json:"settings,omitempty"`
	Source    Source          `json:"source"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// Validate reports whether p can be written.
func (p Provider) Validate() error {
	switch {
	case p.WorkspaceID == "":
		return fmt.Errorf("%w: provider workspace id is empty; set Provider.WorkspaceID", ErrInvalid)
	case p.Name == "":
		return fmt.Errorf("%w: provider name is empty; set Provider.Name", ErrInvalid)
	case p.Type == "":
		return fmt.Errorf("%w: provider %q has no type; set Provider.Type (such as \"openai\" or \"anthropic\")", ErrInvalid, p.Name)
	case !p.Source.valid():
		return fmt.Errorf("%w: provider %q has source %q; set Provider.Source to %q or %q",
			ErrInvalid, p.Name, p.Source, SourceConfig, SourceAPI)
	case len(p.Settings) > 0 && !json.Valid(p.Settings):
		return fmt.Errorf("%w: provider %q settings are not valid JSON", ErrInvalid, p.Name)
	}
	return nil
}

// Providers stores providers. Its methods mirror Agents.
type Providers interface {
	// Create inserts p and returns it as stored. A name taken in the
	// workspace gives ErrConflict; an unknown workspace gives ErrNotFound.
	Create(ctx context.Context, p Provider) (Provider, error)
	// Get returns the workspace's provider with the given id, or ErrNotFound.
	Get(ctx context.Context, workspaceID, id string) (Provider, error)
	// GetByName returns the workspace's provider with the given name, or
	// ErrNotFound.
	GetByName(ctx context.Context, workspaceID, name string) (Provider, error)
	// List returns the workspace's providers ordered by name.
	List(ctx context.Context, workspaceID string) ([]Provider, error)
	// Update replaces every field of the provider identified by
	// p.WorkspaceID and p.ID except CreatedAt and stamps UpdatedAt. An
	// unknown provider gives ErrNotFound; a taken name gives ErrConflict.
	Update(ctx context.Context, p Provider) (Provider, error)
	// Delete removes the workspace's provider, or gives ErrNotFound. Its
	// credential, if any, stays until deleted through Credentials.
	Delete(ctx context.Context, workspaceID, id string) error
	// Upsert creates the provider named p.Name in p.WorkspaceID, or
	// replaces the fields of the existing one, keeping ID and CreatedAt.
	Upsert(ctx context.Context, p Provider) (Provider, error)
}
