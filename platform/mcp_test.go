package platform_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool"
	"github.com/agentcraftlab/agentcraft/tool/mcpclient"
)

// TestMCPToolsLeftOutWhenServerDown: an agent whose tools name a working
// MCP server and one that is down answers with the tools that work, and
// its events say what was left out and why.
func TestMCPToolsLeftOutWhenServerDown(t *testing.T) {
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	type echoIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echo."},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)

	m, err := mcpclient.New([]mcpclient.ServerConfig{
		{Name: "up", URL: hs.URL},
		{Name: "down", URL: "http://127.0.0.1:1/mcp"},
	}, &mcpclient.Options{MinBackoff: time.Hour, ConnectTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)

	fake := llmtest.NewOpenAI(t, llmtest.Turn{Text: "Answered without the search."})
	helper := platform.AgentSpec{Name: "helper", Model: "fake/fake-model", Tools: []string{"calculator", "mcp:up", "down__search"}}
	p := newPlatform(t, newStore(t), platformOptions(fake, helper, m))
	ws := p.DefaultWorkspace()

	a, err := p.Agent(ctx, ws.ID, "helper")
	if err != nil {
		t.Fatalf("an agent must not fail because an MCP server is down: %v", err)
	}
	var names []string
	for _, tl := range a.Runtime.Tools {
		names = append(names, tl.Name())
	}
	slices.Sort(names)
	if want := []string{"calculator", "up__echo"}; !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v", names, want)
	}
	var warnings []string
	var answer strings.Builder
	for ev, err := range a.Runtime.Run(ctx, agent.Input{Messages: []llm.Message{llm.Text(llm.RoleUser, "search")}}) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case agent.EventWarning:
			warnings = append(warnings, ev.Text)
		case agent.EventTextDelta:
			answer.WriteString(ev.Text)
		}
	}
	if answer.String() != "Answered without the search." {
		t.Errorf("answer = %q", answer.String())
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], `MCP server "down" is down`) || !strings.Contains(warnings[0], "down__search") {
		t.Errorf("warnings = %q, want one saying down__search is left out because its server is down", warnings)
	}

	// Agents may name MCP tools of configured servers even while they
	// are down; a server nobody configured is an unknown tool.
	if _, err := p.CreateAgent(ctx, store.Agent{WorkspaceID: ws.ID, Name: "later", Model: "fake/fake-model", Tools: []string{"down__search"}}); err != nil {
		t.Errorf("CreateAgent with a tool of a server that is down: %v", err)
	}
	if _, err := p.CreateAgent(ctx, store.Agent{WorkspaceID: ws.ID, Name: "typo", Model: "fake/fake-model", Tools: []string{"nowhere__search"}}); !errors.Is(err, tool.ErrUnknownTool) {
		t.Errorf("CreateAgent with an unconfigured server's tool = %v, want ErrUnknownTool", err)
	}

	// A tool the server adds reaches the agent without waiting for the
	// agent's recheck interval.
	mcp.AddTool(srv, &mcp.Tool{Name: "shout", Description: "Shout."},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.ToUpper(in.Text)}}}, nil, nil
		})
	deadline := time.Now().Add(5 * time.Second)
	for {
		a, err := p.Agent(ctx, ws.ID, "helper")
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(a.Runtime.Tools, func(tl tool.Tool) bool { return tl.Name() == "up__shout" }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the agent did not get the tool the MCP server added")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func platformOptions(fake *llmtest.Server, a platform.AgentSpec, m *mcpclient.Manager) platform.Options {
	return platform.Options{Providers: []platform.ProviderConfig{fakeProvider("fake", fake, "k")}, Agents: []platform.AgentSpec{a}, MCP: m}
}
