package mcpserver

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/kb"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/run"
)

// StdioOptions configure ServeStdio.
type StdioOptions struct {
	// Runs runs workflows; nil offers no workflow tools.
	Runs *controlplane.Service
	// Knowledge searches knowledge bases; nil offers no docsearch.
	Knowledge *kb.Service
	// Logger receives the SDK's logs. Default: discard.
	Logger *slog.Logger
	// Version is reported to the client.
	Version string
	// Runner runs the agents. Default: run.New(p, nil).
	Runner *run.Runner
}

// ServeStdio serves the MCP tools of the workspace over one
// newline-delimited JSON-RPC stream (the stdio transport of desktop
// clients) until the client leaves or ctx ends. There is no
// authentication: whoever runs the command is the local user and sees
// every tool. The tool list is refreshed on every tools/list and
// tools/call, so agents and workflows added meanwhile appear.
func ServeStdio(ctx context.Context, p *platform.Platform, workspaceID string, in io.ReadCloser, out io.WriteCloser, opts *StdioOptions) error {
	var o StdioOptions
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Runner == nil {
		o.Runner = run.New(p, nil)
	}
	caller := run.Principal{WorkspaceID: workspaceID, Actor: run.ActorSystem, ActorID: "mcp-stdio"}
	t := &mcpTools{p: p, runner: o.Runner, runs: o.Runs, knowledge: o.Knowledge, logger: o.Logger, version: o.Version, cache: mcp.NewSchemaCache()}
	srv := mcp.NewServer(&mcp.Implementation{Name: "agentcraft", Title: "AgentCraft", Version: o.Version},
		&mcp.ServerOptions{Logger: o.Logger, SchemaCache: t.cache})
	var (
		mu   sync.Mutex // guards have; requests may be served concurrently
		have []string   // names of the tools srv holds, sorted
	)
	refresh := func(ctx context.Context) error {
		defs, err := t.defs(ctx, caller, scopeSet{all: true})
		if err != nil {
			return err
		}
		want := make([]string, 0, len(defs))
		for _, d := range defs {
			want = append(want, d.name)
		}
		slices.Sort(want)
		mu.Lock()
		defer mu.Unlock()
		// Replace the tool set only when it changed (tools of deleted
		// agents go, new ones come): every change notifies the client,
		// which then lists again.
		if have != nil && slices.Equal(have, want) {
			return nil
		}
		if len(have) > 0 {
			srv.RemoveTools(have...)
		}
		for _, d := range defs {
			d.add(srv)
		}
		have = want
		return nil
	}
	if err := refresh(ctx); err != nil {
		return fmt.Errorf("mcp: list tools: %w", err)
	}
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" || method == "tools/call" {
				if err := refresh(ctx); err != nil {
					o.Logger.Warn("mcp_tools_refresh_failed", "workspace_id", workspaceID, "error", err)
				}
			}
			return next(ctx, method, req)
		}
	})
	return srv.Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
}
