package platform

import (
	"context"
	"net/http"

	"github.com/agentcraftlab/agentcraft/catalog"
	"github.com/agentcraftlab/agentcraft/tool"
	"github.com/agentcraftlab/agentcraft/tool/mcpclient"
)

// The tool catalog's types and errors, under the names the surfaces use.
type (
	ToolInfo          = catalog.ToolInfo
	MCPServerSpec     = catalog.MCPServerSpec
	MCPServerInfo     = catalog.MCPServerInfo
	MCPServerTest     = catalog.MCPServerTest
	OpenAPIImportSpec = catalog.OpenAPIImportSpec
	WorkspaceTool     = catalog.WorkspaceTool
)

var (
	ErrInvalidMCPServer = catalog.ErrInvalidMCPServer
	ErrInvalidOpenAPI   = catalog.ErrInvalidOpenAPI
	ErrNoHTTPClient     = catalog.ErrNoHTTPClient
)

// KBSearchTool is the name of the knowledge-search tool.
const KBSearchTool = catalog.KBSearchTool

// DefaultToolSync is the default of Options.ToolSync.
const DefaultToolSync = catalog.DefaultToolSync

// Catalog is the tool catalog agents' tools are resolved from.
func (p *Platform) Catalog() *catalog.Catalog { return p.catalog }

// Tools are the built-in tools.
func (p *Platform) Tools() *tool.Registry { return p.catalog.Tools() }

// MCP returns agentcraft.yaml's MCP servers (Options.MCP); nil when none
// are configured. Its methods accept nil.
func (p *Platform) MCP() *mcpclient.Manager { return p.catalog.MCP() }

// EgressClient returns the egress-policy HTTP client of the built-in HTTP
// tools (Options.Builtins.HTTPClient), or nil when none is configured.
func (p *Platform) EgressClient() *http.Client { return p.catalog.EgressClient() }

// ListTools returns the tools agents of the workspace can name, each with
// whether the workspace has it enabled.
func (p *Platform) ListTools(ctx context.Context, workspaceID string) ([]ToolInfo, error) {
	return p.catalog.ListTools(ctx, workspaceID)
}

// SetToolSettings turns the workspace's tools on or off; see
// catalog.Catalog.SetToolSettings.
func (p *Platform) SetToolSettings(ctx context.Context, workspaceID string, enabled map[string]bool) ([]ToolInfo, error) {
	return p.catalog.SetToolSettings(ctx, workspaceID, enabled)
}

// AddMCPServer stores and connects a streamable HTTP MCP server for the
// workspace; see catalog.Catalog.AddMCPServer.
func (p *Platform) AddMCPServer(ctx context.Context, workspaceID string, spec MCPServerSpec) (MCPServerInfo, error) {
	return p.catalog.AddMCPServer(ctx, workspaceID, spec)
}

// DeleteMCPServer removes the workspace's API server named name.
func (p *Platform) DeleteMCPServer(ctx context.Context, workspaceID, name string) error {
	return p.catalog.DeleteMCPServer(ctx, workspaceID, name)
}

// TestMCPServer connects to the workspace's MCP server named name afresh
// and lists its tools; see catalog.Catalog.TestMCPServer.
func (p *Platform) TestMCPServer(ctx context.Context, workspaceID, name string) (MCPServerTest, error) {
	return p.catalog.TestMCPServer(ctx, workspaceID, name)
}

// MCPServers lists the MCP servers agents of the workspace can use, with
// their health.
func (p *Platform) MCPServers(ctx context.Context, workspaceID string) ([]MCPServerInfo, error) {
	return p.catalog.MCPServers(ctx, workspaceID)
}

// MCPStatus reports the health of the MCP servers of agentcraft.yaml and
// of the workspace; nil when there are none.
func (p *Platform) MCPStatus(workspaceID string) []mcpclient.ServerStatus {
	return p.catalog.MCPStatus(workspaceID)
}

// ImportOpenAPI turns an OpenAPI 3 document's operations into tools of the
// workspace and stores the import; see catalog.Catalog.ImportOpenAPI.
func (p *Platform) ImportOpenAPI(ctx context.Context, workspaceID string, spec OpenAPIImportSpec) ([]*tool.OpenAPITool, error) {
	return p.catalog.ImportOpenAPI(ctx, workspaceID, spec)
}

// DeleteOpenAPIImport removes the workspace's import named name and its
// tools, or gives store.ErrNotFound.
func (p *Platform) DeleteOpenAPIImport(ctx context.Context, workspaceID, name string) error {
	return p.catalog.DeleteOpenAPIImport(ctx, workspaceID, name)
}

// SetWorkspaceTools makes tools callable by the agents of workspace ws;
// see catalog.Catalog.SetWorkspaceTools.
func (p *Platform) SetWorkspaceTools(ws, group string, tools []tool.Tool) error {
	return p.catalog.SetWorkspaceTools(ws, group, tools)
}

// WorkspaceTools returns the tools added to workspace ws, sorted by name.
func (p *Platform) WorkspaceTools(ws string) []WorkspaceTool { return p.catalog.WorkspaceTools(ws) }
