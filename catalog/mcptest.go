package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool/mcpclient"
)

// mcpTestTimeout bounds one TestMCPServer connection attempt (connect,
// token, list), so that a server that never answers gives an answer
// rather than a hung request.
const mcpTestTimeout = 15 * time.Second

// MCPServerTest is what TestMCPServer found.
type MCPServerTest struct {
	Name string `json:"name"`
	// Source is "api" (a fresh connection was made) or "config" (the
	// server of agentcraft.yaml is reported as its live connection has
	// it: its command and credentials stay with the process).
	Source    string `json:"source"`
	Connected bool   `json:"connected"`
	// Error is why the server could not be reached or listed.
	Error string        `json:"error,omitempty"`
	Tools []MCPTestTool `json:"tools"`
}

// MCPTestTool is one tool a tested server offers.
type MCPTestTool struct {
	// Name is how agents name the tool (<server>__<tool>).
	Name string `json:"name"`
	// MCPName is the server's own name for it.
	MCPName     string `json:"mcp_name"`
	Description string `json:"description"`
}

// TestMCPServer connects to the workspace's MCP server named name with its
// stored URL and credentials, through the egress policy, lists its tools
// and disconnects: the answer of "does this server work now?", apart from
// the long-lived connection agents use. A server that cannot be reached
// is a result with Connected false and Error, not a Go error; an unknown
// name is store.ErrNotFound.
func (c *Catalog) TestMCPServer(ctx context.Context, workspaceID, name string) (MCPServerTest, error) {
	rows, err := c.store.MCPServers().List(ctx, workspaceID)
	if err != nil {
		return MCPServerTest{}, err
	}
	for _, r := range rows {
		if r.Name == name {
			return c.testStoredMCP(ctx, r)
		}
	}
	if c.mcp.Owns(mcpclient.ServerPrefix + name) {
		out := MCPServerTest{Name: name, Source: "config", Tools: []MCPTestTool{}}
		for _, st := range c.mcp.Status() {
			if st.Name == name {
				out.Connected, out.Error = st.Connected, st.Error
			}
		}
		for _, ti := range c.mcp.List() {
			if ti.Server == name {
				out.Tools = append(out.Tools, MCPTestTool{Name: ti.Tool.Name(), MCPName: ti.MCPName, Description: ti.Tool.Description()})
			}
		}
		return out, nil
	}
	return MCPServerTest{}, fmt.Errorf("%w: MCP server %q does not exist in this workspace", store.ErrNotFound, name)
}

func (c *Catalog) testStoredMCP(ctx context.Context, r store.MCPServer) (MCPServerTest, error) {
	m, err := c.newMCPManager(r.WorkspaceID, []store.MCPServer{r}, mcpTestTimeout)
	if err != nil {
		return MCPServerTest{}, fmt.Errorf("catalog: test mcp server %q: %w", r.Name, err)
	}
	defer m.Stop()
	ctx, cancel := context.WithTimeout(ctx, mcpTestTimeout+time.Second)
	defer cancel()
	if err := m.Start(ctx); err != nil {
		return MCPServerTest{}, fmt.Errorf("catalog: test mcp server %q: %w", r.Name, err)
	}
	out := MCPServerTest{Name: r.Name, Source: "api", Tools: []MCPTestTool{}}
	if st := m.Status(); len(st) == 1 {
		out.Connected, out.Error = st[0].Connected, st[0].Error
	}
	for _, ti := range m.List() {
		out.Tools = append(out.Tools, MCPTestTool{Name: ti.Tool.Name(), MCPName: ti.MCPName, Description: ti.Tool.Description()})
	}
	return out, nil
}
