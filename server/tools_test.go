package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/server/servertest"
)

// toolList is the answer of GET /api/tools and POST /api/tools/settings.
type toolList struct {
	Data []toolItem
}

// toolItem is one tool of a toolList.
type toolItem struct {
	Name    string
	Source  string
	Enabled bool
}

// enabled maps tool name to enabled.
func (l toolList) enabled() map[string]bool {
	out := make(map[string]bool)
	for _, t := range l.Data {
		out[t.Name] = t.Enabled
	}
	return out
}

// offeredTools returns the tool names of the last request the fake
// provider received.
func offeredTools(t *testing.T, fake *llmtest.Server) []string {
	t.Helper()
	reqs := fake.Requests()
	if len(reqs) == 0 {
		t.Fatal("the fake provider received no request")
	}
	var body struct {
		Tools []struct {
			Function struct{ Name string }
		}
	}
	if err := json.Unmarshal(reqs[len(reqs)-1].Body, &body); err != nil {
		t.Fatalf("decode request body: %v", err)
	}
	names := []string{}
	for _, tl := range body.Tools {
		names = append(names, tl.Function.Name)
	}
	return names
}

func TestToolSettings(t *testing.T) {
	t.Parallel()
	env, fake, c := newEnv(t, helper)
	ctx := context.Background()
	wsB, err := env.Store.Workspaces().GetOrCreate(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	cb := client{t: t, base: env.URL, key: servertest.CreateKey(t, env.Store, wsB.ID)}
	cb.json("POST", "/api/agents", `{"name":"helper","model":"fake/fake-model","instructions":"Help.","tools":["calculator"]}`, http.StatusCreated, nil)

	var list toolList
	c.json("GET", "/api/tools", "", http.StatusOK, &list)
	if len(list.Data) == 0 {
		t.Fatal("GET /api/tools lists no tools")
	}
	for name, on := range list.enabled() {
		if !on {
			t.Errorf("tool %s is disabled before any setting; tools are enabled by default", name)
		}
	}

	// The agent is cached with calculator before the change.
	chat := `{"model":"helper","messages":[{"role":"user","content":"hi"}]}`
	fake.Push(llmtest.Turn{Text: "one"})
	c.json("POST", "/v1/chat/completions", chat, http.StatusOK, nil)
	if got := offeredTools(t, fake); !slices.Contains(got, "calculator") {
		t.Fatalf("before the change the agent is offered %v, want calculator among them", got)
	}

	c.json("POST", "/api/tools/settings", `{"tools":{"calculator":false,"current_time":true}}`, http.StatusOK, &list)
	got := list.enabled()
	if got["calculator"] || !got["current_time"] || !got["json_query"] {
		t.Errorf("POST /api/tools/settings answer = %v, want calculator off and the others on", got)
	}
	c.json("GET", "/api/tools", "", http.StatusOK, &list)
	if diff := cmp.Diff(got, list.enabled()); diff != "" {
		t.Errorf("GET /api/tools after the change (-posted +got):\n%s", diff)
	}
	cb.json("GET", "/api/tools", "", http.StatusOK, &list)
	if !list.enabled()["calculator"] {
		t.Error("calculator is disabled in workspace b; settings must stay in their workspace")
	}

	// The cached agent of workspace a no longer offers calculator, and
	// says why; workspace b's still does.
	fake.Push(llmtest.Turn{Text: "two"})
	c.json("POST", "/v1/chat/completions", chat, http.StatusOK, nil)
	if got := offeredTools(t, fake); slices.Contains(got, "calculator") {
		t.Errorf("after disabling, the agent is offered %v, want no calculator", got)
	}
	a, err := env.Platform.Agent(ctx, env.Workspace.ID, "helper")
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Runtime.Warnings) != 1 || !strings.Contains(a.Runtime.Warnings[0], "calculator is disabled") {
		t.Errorf("agent warnings = %q, want one saying calculator is disabled", a.Runtime.Warnings)
	}
	fake.Push(llmtest.Turn{Text: "three"})
	cb.json("POST", "/v1/chat/completions", chat, http.StatusOK, nil)
	if got := offeredTools(t, fake); !slices.Contains(got, "calculator") {
		t.Errorf("workspace b's agent is offered %v, want calculator among them", got)
	}

	// An agent may still name a disabled tool: it gets it back when the
	// tool is enabled again.
	c.json("POST", "/api/agents", `{"name":"second","model":"fake/fake-model","tools":["calculator"]}`, http.StatusCreated, nil)
	c.json("POST", "/api/tools/settings", `{"tools":{"calculator":true}}`, http.StatusOK, &list)
	fake.Push(llmtest.Turn{Text: "four"})
	c.json("POST", "/v1/chat/completions", chat, http.StatusOK, nil)
	if got := offeredTools(t, fake); !slices.Contains(got, "calculator") {
		t.Errorf("after enabling again, the agent is offered %v, want calculator among them", got)
	}
	rows, err := env.Store.ToolSettings().List(ctx, env.Workspace.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Tool != "calculator" || !rows[0].Enabled {
		t.Errorf("stored settings = %+v, want calculator and current_time, both enabled", rows)
	}
}

func TestToolSettingsErrors(t *testing.T) {
	t.Parallel()
	env, _, c := newEnv(t)
	for _, tc := range []struct {
		name, body, want string
	}{
		{"unknown tool", `{"tools":{"calculator":false,"no_such_tool":false}}`, "no_such_tool"},
		{"empty", `{"tools":{}}`, "tools is required"},
		{"misspelt field", `{"tool":{"calculator":false}}`, "unknown field"},
		{"not a bool", `{"tools":{"calculator":"off"}}`, "not valid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := c.do("POST", "/api/tools/settings", tc.body)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), tc.want) {
				t.Errorf("POST %s = %d %s, want 400 containing %s", tc.body, resp.StatusCode, body, tc.want)
			}
		})
	}
	// A refused request changes nothing, not even the known names in it.
	rows, err := env.Store.ToolSettings().List(context.Background(), env.Workspace.ID)
	if err != nil || len(rows) != 0 {
		t.Errorf("stored settings after refused requests = %+v, %v; want none", rows, err)
	}
}
