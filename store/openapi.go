package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// OpenAPIImport is an OpenAPI 3 document imported into a workspace through
// the API (POST /api/tools/openapi); the platform rebuilds its tools from
// it at start. Its bearer token is sealed by package secret before it gets
// here.
type OpenAPIImport struct {
	WorkspaceID string `json:"workspace_id"`
	// Name prefixes the document's tool names; one import per name and
	// workspace.
	Name string `json:"name"`
	// Document is the OpenAPI 3 document, JSON or YAML, as it was sent.
	Document string `json:"document"`
	// BaseURL overrides the document's servers[0].url; empty keeps it.
	BaseURL string `json:"base_url"`
	// Ciphertext is the sealed JSON of the import's credentials; nil when
	// calls carry none.
	Ciphertext []byte `json:"-"`
	// KeyID names the master key that sealed Ciphertext; empty without
	// Ciphertext.
	KeyID     string    `json:"-"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Validate reports whether i can be written.
func (i OpenAPIImport) Validate() error {
	switch {
	case i.WorkspaceID == "":
		return fmt.Errorf("%w: openapi import workspace id is empty; set OpenAPIImport.WorkspaceID", ErrInvalid)
	case strings.TrimSpace(i.Name) == "":
		return fmt.Errorf("%w: openapi import name is empty; set OpenAPIImport.Name", ErrInvalid)
	case strings.TrimSpace(i.Document) == "":
		return fmt.Errorf("%w: openapi import %q has no document; set OpenAPIImport.Document to the OpenAPI 3 text", ErrInvalid, i.Name)
	case len(i.Ciphertext) > 0 && i.KeyID == "":
		return fmt.Errorf("%w: openapi import %q has ciphertext but no key id; set OpenAPIImport.KeyID to the sealing box's KeyID", ErrInvalid, i.Name)
	}
	return nil
}

// OpenAPIImports stores the OpenAPI documents imported into workspaces
// through the API.
type OpenAPIImports interface {
	// Put stores the import, replacing the workspace's import of the same
	// name (which keeps its CreatedAt). An unknown workspace gives
	// ErrNotFound.
	Put(ctx context.Context, i OpenAPIImport) (OpenAPIImport, error)
	// List returns the workspace's imports ordered by name, ciphertext
	// included (the platform opens it to build the tools).
	List(ctx context.Context, workspaceID string) ([]OpenAPIImport, error)
	// ListAll returns the imports of every workspace, ordered by workspace
	// and name, so that a starting server can rebuild them all.
	ListAll(ctx context.Context) ([]OpenAPIImport, error)
	// Delete removes the workspace's import named name, or gives
	// ErrNotFound.
	Delete(ctx context.Context, workspaceID, name string) error
}
