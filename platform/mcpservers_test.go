package platform_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentcraftlab/agentcraft/platform"
)

// pingMCPServer serves one MCP tool, ping, over streamable HTTP.
func pingMCPServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "ping", Description: "Ping."},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs
}

// A workspace's MCP servers survive a restart: a new Platform on the same
// store and key connects them again, and only for their workspace.
func TestMCPServersReloadedAtStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hs := pingMCPServer(t)

	st := newStore(t)
	box := newBox(t)
	opts := &platform.Options{OllamaURL: deadURL, Getenv: func(string) string { return "" }}
	p1, err := platform.New(ctx, st, box, opts)
	if err != nil {
		t.Fatal(err)
	}
	ws := p1.DefaultWorkspace().ID
	other, err := st.Workspaces().GetOrCreate(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	info, err := p1.AddMCPServer(ctx, ws, platform.MCPServerSpec{Name: "up", URL: hs.URL, Bearer: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	if !info.Connected || info.Tools != 1 {
		t.Fatalf("AddMCPServer = %+v, want connected with one tool", info)
	}
	_, err = p1.AddMCPServer(ctx, ws, platform.MCPServerSpec{Name: "local", URL: ""})
	if !errors.Is(err, platform.ErrInvalidMCPServer) {
		t.Errorf("AddMCPServer(no url) = %v, want ErrInvalidMCPServer", err)
	}
	p1.Stop()

	p2, err := platform.New(ctx, st, box, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p2.Stop)
	deadline := time.Now().Add(10 * time.Second)
	for {
		infos, err := p2.MCPServers(ctx, ws)
		if err != nil {
			t.Fatal(err)
		}
		if len(infos) == 1 && infos[0].Connected && infos[0].Auth == "bearer" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after restart MCPServers = %+v, want up connected", infos)
		}
		time.Sleep(20 * time.Millisecond)
	}
	mine, err := p2.ListTools(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(mine, func(tl platform.ToolInfo) bool { return tl.Name == "up__ping" && tl.Source == "mcp:up" && tl.Enabled }) {
		t.Errorf("after restart ListTools = %+v, want up__ping from mcp:up", mine)
	}
	tools, err := p2.ListTools(ctx, other.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if tl.Name == "up__ping" {
			t.Error("another workspace lists up__ping")
		}
	}
}
