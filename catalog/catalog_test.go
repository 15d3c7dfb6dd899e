package catalog_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/agentcraftlab/agentcraft/catalog"
	"github.com/agentcraftlab/agentcraft/secret"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
	"github.com/agentcraftlab/agentcraft/tool"
)

func newStore(t *testing.T) store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return st
}

func newBox(t *testing.T) *secret.Box {
	t.Helper()
	key := make([]byte, secret.KeySize)
	rand.Read(key)
	box, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	return box
}

func names(ts []tool.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name())
	}
	return out
}

// TestSettingsMoveGenerationAndResolve: turning a tool off moves the
// workspace's Generation on (an agent cache rebuilds at once) and not
// another workspace's, and Resolve then leaves the tool out with a
// warning instead of failing the agent.
func TestSettingsMoveGenerationAndResolve(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStore(t)
	var mu sync.Mutex
	var actions []string
	c, err := catalog.New(ctx, st, newBox(t), &catalog.Options{Sync: -1, Audit: func(_ context.Context, e store.AuditEvent) {
		mu.Lock()
		defer mu.Unlock()
		actions = append(actions, e.Action)
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	var ws, other string
	for _, name := range []string{"a", "b"} {
		w, err := st.Workspaces().GetOrCreate(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		ws, other = other, w.ID
	}
	want := []string{"calculator", "current_time"}
	tools, warnings, err := c.Resolve(ws, want, nil, nil)
	if err != nil || !slices.Equal(names(tools), want) || len(warnings) != 0 {
		t.Fatalf("Resolve = %v, %q, %v; want %v and no warnings", names(tools), warnings, err, want)
	}
	genA, genB := c.Generation(ws), c.Generation(other)

	if _, err := c.SetToolSettings(ctx, ws, map[string]bool{"calculator": false}); err != nil {
		t.Fatal(err)
	}
	if c.Generation(ws) == genA {
		t.Error("Generation of the workspace did not change after SetToolSettings")
	}
	if c.Generation(other) != genB {
		t.Error("Generation of another workspace changed after SetToolSettings")
	}
	off, err := c.Disabled(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	if off.Key() != "calculator" {
		t.Errorf("Disabled key = %q, want calculator", off.Key())
	}
	tools, warnings, err = c.Resolve(ws, want, nil, off)
	if err != nil || !slices.Equal(names(tools), []string{"current_time"}) || len(warnings) != 1 {
		t.Errorf("Resolve with calculator off = %v, %q, %v; want current_time and one warning", names(tools), warnings, err)
	}
	mu.Lock()
	if !slices.Equal(actions, []string{"tools.settings"}) {
		t.Errorf("audit actions = %v, want tools.settings", actions)
	}
	mu.Unlock()

	if _, err := c.SetToolSettings(ctx, ws, map[string]bool{"no_such_tool": false}); !errors.Is(err, tool.ErrUnknownTool) {
		t.Errorf("SetToolSettings(no_such_tool) = %v, want tool.ErrUnknownTool", err)
	}
}

// TestCheckIsStrict: a reference to an MCP server that is not configured
// fails Check (a definition to refuse) but only warns in Resolve (an agent
// whose server was removed keeps running without it); kb_search without
// knowledge search is unknown.
func TestCheckIsStrict(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, err := catalog.New(ctx, newStore(t), newBox(t), &catalog.Options{Sync: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	if err := c.Check("ws", []string{"calculator", "mcp:gone"}); !errors.Is(err, tool.ErrUnknownTool) {
		t.Errorf("Check(mcp:gone) = %v, want tool.ErrUnknownTool", err)
	}
	tools, warnings, err := c.Resolve("ws", []string{"calculator", "mcp:gone"}, nil, nil)
	if err != nil || !slices.Equal(names(tools), []string{"calculator"}) || len(warnings) != 1 {
		t.Errorf("Resolve(mcp:gone) = %v, %q, %v; want calculator and one warning", names(tools), warnings, err)
	}
	if err := c.Check("ws", []string{catalog.KBSearchTool}); !errors.Is(err, tool.ErrUnknownTool) {
		t.Errorf("Check(kb_search) without knowledge = %v, want tool.ErrUnknownTool", err)
	}
}

// boundTool is a tool.WorkspaceBound that says which workspace it is
// bound to.
type boundTool struct{ ws string }

func (boundTool) Name() string                       { return "where_am_i" }
func (boundTool) Description() string                { return "Says the workspace it was bound to." }
func (boundTool) Schema() json.RawMessage            { return nil }
func (boundTool) Capability() tool.Capability        { return tool.CapabilityLow }
func (b boundTool) ForWorkspace(ws string) tool.Tool { return boundTool{ws: ws} }
func (b boundTool) Call(context.Context, json.RawMessage) (tool.Result, error) {
	if b.ws == "" {
		return tool.Result{}, errors.New("not bound")
	}
	return tool.Result{Content: b.ws}, nil
}

// TestResolveBindsWorkspaceTools: a registry tool that acts inside a
// workspace reaches each caller bound to the caller's workspace.
func TestResolveBindsWorkspaceTools(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reg := &tool.Registry{}
	if err := reg.Register(boundTool{}); err != nil {
		t.Fatal(err)
	}
	c, err := catalog.New(ctx, newStore(t), newBox(t), &catalog.Options{Sync: -1, Tools: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	for _, ws := range []string{"ws-a", "ws-b"} {
		tools, _, err := c.Resolve(ws, []string{"where_am_i"}, nil, nil)
		if err != nil || len(tools) != 1 {
			t.Fatalf("Resolve(%s) = %v, %v", ws, tools, err)
		}
		res, err := tools[0].Call(ctx, nil)
		if err != nil || res.Content != ws {
			t.Errorf("tool resolved for %s answered %q, %v", ws, res.Content, err)
		}
	}
	if reg, _ := reg.Get("where_am_i"); reg.(boundTool).ws != "" {
		t.Error("binding changed the registered tool")
	}
}
