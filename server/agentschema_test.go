package server_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.yaml.in/yaml/v3"

	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/store"
)

// fullAgent sets every key an agent of agentcraft.yaml has.
const fullAgent = `{
  "name": "full", "model": "fake/fake-model", "instructions": "Be exact.", "tools": ["calculator"],
  "temperature": 0.3, "max_tokens": 512, "max_steps": 4, "token_budget": 9000,
  "tool_timeout": "90s", "max_tool_result_bytes": 2048, "tool_progress": true, "knowledge_bases": [],
  "memory": {"enabled": true, "history_tokens": 4000, "pii": "redact"}, "skills": ["meeting-notes"],
  "autonomous": {"planner": "fake/fake-model", "max_steps": 6, "max_tokens": 20000, "max_depth": 1, "max_sub_agents": 3, "auto_approve": ["calculator"]},
  "guard": {"injection": true, "rules": [{"name": "secrets", "keywords": ["confidential"], "action": "block"}]},
  "pii": {"locales": ["Global"], "mode": "mask"},
  "rate_limit": {"enabled": true, "rps": 2, "burst": 2},
  "retry": {"max_retries": 1},
  "logging": {"enabled": true}
}`

// yamlKeys lists the keys of t's YAML encoding, inline structs included.
func yamlKeys(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if strings.Contains(opts, "inline") {
			out = append(out, yamlKeys(f.Type)...)
			continue
		}
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// TestAgentBodyTakesEveryFileKey: the API's agent body is agentcraft.yaml's
// agent schema. The same document, read as a file agent and sent to
// POST /api/agents, stores the same agent, and every key the file knows is
// one the API takes.
func TestAgentBodyTakesEveryFileKey(t *testing.T) {
	t.Parallel()
	var doc map[string]any
	if err := json.Unmarshal([]byte(fullAgent), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range yamlKeys(reflect.TypeFor[platform.AgentSpec]()) {
		if _, ok := doc[k]; !ok {
			t.Errorf("the test document lacks the file's key %q: add it", k)
		}
	}

	env, _, c := newEnv(t)
	var got store.Agent
	c.json("POST", "/api/agents", fullAgent, 201, &got)

	// JSON is YAML: the file's decoder reads the same document.
	var spec platform.AgentSpec
	dec := yaml.NewDecoder(strings.NewReader(fullAgent))
	dec.KnownFields(true)
	if err := dec.Decode(&spec); err != nil {
		t.Fatalf("the document is not a valid file agent: %v", err)
	}
	want, err := spec.Row(env.Workspace.ID)
	if err != nil {
		t.Fatal(err)
	}
	want.Source = store.SourceAPI
	ignore := cmpopts.IgnoreFields(store.Agent{}, "ID", "CreatedAt", "UpdatedAt")
	normalize := cmp.Transformer("json", func(m json.RawMessage) map[string]any {
		var v map[string]any
		_ = json.Unmarshal(m, &v)
		return v
	})
	if diff := cmp.Diff(want, got, ignore, normalize, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("API agent differs from the same file agent (-file +api):\n%s", diff)
	}

	// The older spellings still work, one at a time.
	c.json("POST", "/api/agents", `{"name":"old","model":"fake/fake-model","tool_timeout_seconds":30,"middleware":{"tool_progress":true}}`, 201, &got)
	if got.Params.ToolTimeoutSeconds != 30 || !strings.Contains(string(got.Params.Middleware), "tool_progress") {
		t.Errorf("older spellings stored %+v", got.Params)
	}
	resp, out := c.do("POST", "/api/agents", `{"name":"both","model":"fake/fake-model","tool_timeout":"5s","tool_timeout_seconds":5}`)
	if resp.StatusCode != 400 || !strings.Contains(string(out), "tool_timeout_seconds") {
		t.Errorf("both spellings = %d %s, want 400 naming tool_timeout_seconds", resp.StatusCode, out)
	}
	resp, out = c.do("POST", "/api/agents", `{"name":"typo","model":"fake/fake-model","gaurd":{}}`)
	if resp.StatusCode != 400 || !strings.Contains(string(out), "gaurd") {
		t.Errorf("unknown top-level key = %d %s, want 400 naming gaurd", resp.StatusCode, out)
	}
	resp, out = c.do("POST", "/api/agents", `{"name":"auto","model":"fake/fake-model","tools":["calculator"],"autonomous":{"auto_approve":["shell"]}}`)
	if resp.StatusCode != 400 || !strings.Contains(string(out), "autonomous.auto_approve[0]") {
		t.Errorf("auto_approve of a tool the agent lacks = %d %s, want 400 naming autonomous.auto_approve[0]", resp.StatusCode, out)
	}
	resp, out = c.do("POST", "/api/agents", `{"name":"typo2","model":"fake/fake-model","guard":{"injekt":true}}`)
	if resp.StatusCode != 400 || !strings.Contains(string(out), "guard.injekt") {
		t.Errorf("unknown nested key = %d %s, want 400 naming guard.injekt", resp.StatusCode, out)
	}
}
