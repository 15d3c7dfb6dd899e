package platform_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool"
)

func toolNames(a *platform.Agent) []string {
	var out []string
	for _, t := range a.Runtime.Tools {
		out = append(out, t.Name())
	}
	return out
}

// A setting written by another process reaches a cached agent at its next
// recheck; one written through the platform reaches it at once.
func TestToolSettingsReachCachedAgents(t *testing.T) { // not parallel: SetAgentRecheck
	ctx := context.Background()
	fake := llmtest.NewOpenAI(t)
	st := newStore(t)
	p := newPlatform(t, st, platform.Options{Providers: []platform.ProviderConfig{fakeProvider("fake", fake, "k")}})
	ws := p.DefaultWorkspace().ID
	if _, err := p.CreateAgent(ctx, store.Agent{WorkspaceID: ws, Name: "writer", Model: "fake/m", Tools: []string{"calculator", "current_time"}}); err != nil {
		t.Fatal(err)
	}
	platform.SetAgentRecheck(t, time.Hour)
	a, err := p.Agent(ctx, ws, "writer")
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(a); !slices.Equal(got, []string{"calculator", "current_time"}) {
		t.Fatalf("tools = %v, want calculator and current_time", got)
	}

	if _, err := p.SetToolSettings(ctx, ws, map[string]bool{"calculator": false}); err != nil {
		t.Fatal(err)
	}
	a, err = p.Agent(ctx, ws, "writer")
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(a); !slices.Equal(got, []string{"current_time"}) || len(a.Runtime.Warnings) != 1 {
		t.Errorf("after SetToolSettings, tools = %v, warnings %q; want current_time only and one warning", got, a.Runtime.Warnings)
	}

	// Another process turns current_time off too.
	if _, err := st.ToolSettings().Set(ctx, store.ToolSetting{WorkspaceID: ws, Tool: "current_time", Enabled: false}); err != nil {
		t.Fatal(err)
	}
	if a, _ = p.Agent(ctx, ws, "writer"); !slices.Equal(toolNames(a), []string{"current_time"}) {
		t.Errorf("within the recheck interval, tools = %v, want the cached current_time", toolNames(a))
	}
	platform.SetAgentRecheck(t, 0)
	if a, _ = p.Agent(ctx, ws, "writer"); len(toolNames(a)) != 0 || len(a.Runtime.Warnings) != 2 {
		t.Errorf("after the recheck interval, tools = %v, warnings %q; want none and two warnings", toolNames(a), a.Runtime.Warnings)
	}
	again, _ := p.Agent(ctx, ws, "writer")
	if again != a {
		t.Error("an agent with unchanged settings was rebuilt on recheck")
	}

	// Inline agents follow the settings too.
	inline, err := p.InlineAgent(ctx, ws, store.Agent{Model: "fake/m", Tools: []string{"calculator", "json_query"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(inline); !slices.Equal(got, []string{"json_query"}) {
		t.Errorf("inline agent tools = %v, want json_query only", got)
	}
}

func TestSetToolSettingsUnknown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStore(t)
	p := newPlatform(t, st, platform.Options{})
	ws := p.DefaultWorkspace().ID
	_, err := p.SetToolSettings(ctx, ws, map[string]bool{"calculator": false, "nope": true})
	if !errors.Is(err, tool.ErrUnknownTool) {
		t.Fatalf("SetToolSettings(unknown) = %v, want tool.ErrUnknownTool", err)
	}
	tools, err := p.ListTools(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range tools {
		if !ti.Enabled {
			t.Errorf("tool %s disabled after a refused request", ti.Name)
		}
	}
}
