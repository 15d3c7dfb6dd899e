package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// ToolSetting says whether a tool may be given to the agents of a
// workspace. A tool with no row is enabled.
type ToolSetting struct {
	WorkspaceID string `json:"workspace_id"`
	// Tool is the tool's name as GET /api/tools lists it, such as
	// "calculator" or "files__read_file" for an MCP tool.
	Tool      string    `json:"tool"`
	Enabled   bool      `json:"enabled"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Validate reports whether s can be written.
func (s ToolSetting) Validate() error {
	switch {
	case s.WorkspaceID == "":
		return fmt.Errorf("%w: tool setting workspace id is empty; set ToolSetting.WorkspaceID", ErrInvalid)
	case strings.TrimSpace(s.Tool) == "":
		return fmt.Errorf("%w: tool setting has no tool name; set ToolSetting.Tool", ErrInvalid)
	}
	return nil
}

// ToolSettings stores which tools each workspace has turned on or off.
type ToolSettings interface {
	// Set records whether the workspace's tool is enabled, replacing an
	// earlier setting of the same tool, and returns the row as stored. An
	// unknown workspace gives ErrNotFound.
	Set(ctx context.Context, s ToolSetting) (ToolSetting, error)
	// List returns the workspace's settings ordered by tool name. Tools
	// never set are not listed (they are enabled).
	List(ctx context.Context, workspaceID string) ([]ToolSetting, error)
}
