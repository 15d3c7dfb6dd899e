package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentcraftlab/agentcraft/audit"
	"github.com/agentcraftlab/agentcraft/rag"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool"
)

// ToolInfo is a tool of a workspace as GET /api/tools shows it.
type ToolInfo struct {
	// Name is how an agent's tool list names the tool.
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Capability  tool.Capability `json:"capability"`
	// Source is "builtin" for the registry's tools and kb_search,
	// "mcp:<server>" for the tools of a connected MCP server, or
	// "openapi:<name>" for the tools of an OpenAPI document imported into
	// the workspace.
	Source string          `json:"source"`
	Schema json.RawMessage `json:"input_schema"`
	// Enabled reports whether agents of the workspace are given the tool
	// (POST /api/tools/settings); tools are enabled unless turned off.
	Enabled bool `json:"enabled"`
}

// ListTools returns the tools agents of the workspace can name: the
// registry's, kb_search when knowledge search is configured, the tools of
// the MCP servers connected now and the workspace's imported tools, each with whether the workspace has it
// enabled.
func (c *Catalog) ListTools(ctx context.Context, workspaceID string) ([]ToolInfo, error) {
	off, err := c.Disabled(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	out := c.toolCatalog(workspaceID)
	for i := range out {
		out[i].Enabled = !off[out[i].Name]
	}
	return out, nil
}

// toolCatalog lists the tools without their settings.
func (c *Catalog) toolCatalog(workspaceID string) []ToolInfo {
	var out []ToolInfo
	add := func(t tool.Tool, source string) {
		out = append(out, ToolInfo{Name: t.Name(), Description: t.Description(), Capability: t.Capability(), Source: source, Schema: t.Schema()})
	}
	for _, t := range c.tools.List() {
		add(t, "builtin")
	}
	if c.knowledge != nil {
		if _, inRegistry := c.tools.Get(KBSearchTool); !inRegistry {
			add(rag.SearchTool(c.knowledge, workspaceID, nil), "builtin")
		}
	}
	for _, info := range append(c.mcp.List(), c.wsMCP(workspaceID).List()...) {
		add(info.Tool, "mcp:"+info.Server)
	}
	for _, wt := range c.WorkspaceTools(workspaceID) {
		add(wt.Tool, "openapi:"+wt.Group)
	}
	return out
}

// SetToolSettings turns the workspace's tools on (true) or off (false),
// by the names ListTools gives, and returns the updated list. A name that
// is not listed is refused with an error wrapping tool.ErrUnknownTool and
// nothing is changed. Agents of the workspace built before the change are
// rebuilt on their next request.
func (c *Catalog) SetToolSettings(ctx context.Context, workspaceID string, enabled map[string]bool) ([]ToolInfo, error) {
	known := make(map[string]bool)
	for _, t := range c.toolCatalog(workspaceID) {
		known[t.Name] = true
	}
	names := make([]string, 0, len(enabled))
	for n := range enabled {
		names = append(names, n)
	}
	slices.Sort(names)
	var unknown []string
	for _, n := range names {
		if !known[n] {
			unknown = append(unknown, fmt.Sprintf("%q", n))
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("%w %s: use the names GET /api/tools lists (an MCP server's tools are listed while it is connected)",
			tool.ErrUnknownTool, strings.Join(unknown, ", "))
	}
	defer c.touch(workspaceID)
	for _, n := range names {
		if _, err := c.store.ToolSettings().Set(ctx, store.ToolSetting{WorkspaceID: workspaceID, Tool: n, Enabled: enabled[n]}); err != nil {
			return nil, err
		}
	}
	if len(names) > 0 {
		c.audit(ctx, store.AuditEvent{WorkspaceID: workspaceID, Action: "tools.settings", Target: "tools",
			Details: audit.Details(map[string]any{"tools": enabled})})
	}
	return c.ListTools(ctx, workspaceID)
}

// Disabled is the set of tools a workspace has turned off, by name.
type Disabled map[string]bool

// Key is a canonical string of the set, to tell whether it changed: an
// agent cache keeps the key an agent was built with and rebuilds the
// agent when the workspace's key differs.
func (o Disabled) Key() string {
	names := make([]string, 0, len(o))
	for n := range o {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, "\x00")
}

// Disabled reads the workspace's disabled tools from the store, so that a
// change made by another process is seen.
func (c *Catalog) Disabled(ctx context.Context, workspaceID string) (Disabled, error) {
	rows, err := c.store.ToolSettings().List(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	off := Disabled{}
	for _, r := range rows {
		if !r.Enabled {
			off[r.Tool] = true
		}
	}
	return off, nil
}

// withoutDisabled leaves out of tools those the workspace has turned off,
// adding a warning for each: an agent may name a disabled tool, which it
// gets back when the tool is enabled again.
func withoutDisabled(tools []tool.Tool, warnings []string, off Disabled) ([]tool.Tool, []string) {
	if len(off) == 0 {
		return tools, warnings
	}
	kept := make([]tool.Tool, 0, len(tools))
	for _, t := range tools {
		if off[t.Name()] {
			warnings = append(warnings, fmt.Sprintf("tool %s is disabled in this workspace (POST /api/tools/settings), so it is left out", t.Name()))
			continue
		}
		kept = append(kept, t)
	}
	return kept, warnings
}
