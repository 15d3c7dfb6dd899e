package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// MCPServer is a streamable-HTTP MCP server added to a workspace through
// the API (POST /api/mcp/servers). Its credentials (a bearer token or an
// OAuth client) are sealed by package secret before they get here.
type MCPServer struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	// Name prefixes the server's tool names; one server per name and
	// workspace.
	Name string `json:"name"`
	// URL is the server's streamable HTTP endpoint.
	URL string `json:"url"`
	// Ciphertext is the sealed JSON of the server's credentials; nil when
	// the server needs none.
	Ciphertext []byte `json:"-"`
	// KeyID names the master key that sealed Ciphertext; empty without
	// Ciphertext.
	KeyID     string    `json:"-"`
	CreatedAt time.Time `json:"created_at"`
}

// Validate reports whether s can be written.
func (s MCPServer) Validate() error {
	switch {
	case s.WorkspaceID == "":
		return fmt.Errorf("%w: mcp server workspace id is empty; set MCPServer.WorkspaceID", ErrInvalid)
	case strings.TrimSpace(s.Name) == "":
		return fmt.Errorf("%w: mcp server name is empty; set MCPServer.Name", ErrInvalid)
	case !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://"):
		return fmt.Errorf("%w: mcp server %q url %q must start with http:// or https://", ErrInvalid, s.Name, s.URL)
	case len(s.Ciphertext) > 0 && s.KeyID == "":
		return fmt.Errorf("%w: mcp server %q has ciphertext but no key id; set MCPServer.KeyID to the sealing box's KeyID", ErrInvalid, s.Name)
	}
	return nil
}

// MCPServers stores the MCP servers added to workspaces through the API.
type MCPServers interface {
	// Create stores a new server. A second server of the same name in the
	// workspace gives ErrConflict; an unknown workspace ErrNotFound.
	Create(ctx context.Context, s MCPServer) (MCPServer, error)
	// List returns the workspace's servers ordered by name, ciphertext
	// included (the platform opens it to connect).
	List(ctx context.Context, workspaceID string) ([]MCPServer, error)
	// ListAll returns the servers of every workspace, ordered by workspace
	// and name, so that a starting server can connect them all.
	ListAll(ctx context.Context) ([]MCPServer, error)
	// Delete removes the workspace's server named name, or gives
	// ErrNotFound.
	Delete(ctx context.Context, workspaceID, name string) error
}
