package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/server/servertest"
)

// wireKind is one entry of GET /api/node-kinds as a client decodes it.
type wireKind struct {
	Kind        string          `json:"kind"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Category    string          `json:"category"`
	Flags       map[string]any  `json:"flags"`
	Unavailable string          `json:"unavailable"`
	Handles     []string        `json:"handles"`
	HandlesFrom string          `json:"handles_from"`
	Rules       []string        `json:"rules"`
	Schema      json.RawMessage `json:"config_schema"`
}

// TestNodeKinds reads the node registry over HTTP as the studio does: every
// built-in kind, sorted, with its flags, handles and config schema, and an
// example config that the same server accepts in a workflow.
func TestNodeKinds(t *testing.T) {
	t.Parallel()
	e := newWorkflowEnv(t)
	var body struct {
		Kinds []wireKind `json:"kinds"`
	}
	e.c.json("GET", "/api/node-kinds", "", http.StatusOK, &body)
	var names []string
	byKind := map[string]wireKind{}
	for _, k := range body.Kinds {
		names = append(names, k.Kind)
		byKind[k.Kind] = k
	}
	want := []string{"a2a-agent", "agent", "approval", "autonomous", "code", "condition", "contract", "end", "http-request", "human", "image",
		"iteration", "loop", "normalize", "output_check", "parallel", "rag", "router", "start", "tool"}
	if !slices.Equal(names, want) {
		t.Fatalf("kinds = %v, want %v", names, want)
	}

	auto := byKind["autonomous"]
	if auto.Flags["available"] != true || auto.Unavailable != "" {
		t.Errorf("autonomous: available %v, unavailable %q; want available since its executor landed", auto.Flags["available"], auto.Unavailable)
	}
	if h := byKind["human"]; h.Flags["human_in_the_loop"] != true || h.Category != "human" || h.Title != "Human input" {
		t.Errorf("human = %+v", h)
	}
	if l := byKind["loop"]; l.Flags["loops"] != true || l.Flags["compound"] != "loop" || !slices.Equal(l.Handles, []string{"body", "done"}) {
		t.Errorf("loop = %+v", l)
	}
	if r := byKind["router"]; r.HandlesFrom != "routes[].name" || len(r.Handles) != 0 || len(r.Rules) == 0 {
		t.Errorf("router = %+v", r)
	}
	if h := byKind["http-request"]; h.Flags["network"] != true || h.Flags["side_effects"] != true || h.Flags["requires_imperative"] != true {
		t.Errorf("http-request flags = %v", h.Flags)
	}

	// The schema of http-request: required url, a GET default, a closed
	// object, properties in the kind's order (method before url) as a
	// form shows them.
	hr := byKind["http-request"].Schema
	var schema struct {
		Schema     string `json:"$schema"`
		Type       string `json:"type"`
		Required   []string
		Additional *bool `json:"additionalProperties"`
		Properties map[string]struct {
			Type, Format, Description string
			Default                   any
			Enum                      []string
			Minimum                   *float64
		}
		Examples []map[string]any
	}
	if err := json.Unmarshal(hr, &schema); err != nil {
		t.Fatal(err)
	}
	m := schema.Properties["method"]
	if schema.Type != "object" || !strings.Contains(schema.Schema, "2020-12") || !slices.Equal(schema.Required, []string{"url"}) ||
		schema.Additional == nil || *schema.Additional || m.Default != "GET" || !slices.Contains(m.Enum, "POST") || m.Description == "" {
		t.Errorf("http-request config_schema = %s", hr)
	}
	if p := schema.Properties["timeout"]; p.Format != "go-duration" || p.Default != "30s" {
		t.Errorf("timeout property = %+v", p)
	}
	if p := schema.Properties["retries"]; p.Type != "integer" || p.Minimum == nil || *p.Minimum != 0 {
		t.Errorf("retries property = %+v", p)
	}
	if i, j := bytes.Index(hr, []byte(`"method"`)), bytes.Index(hr, []byte(`"url"`)); i < 0 || j < i {
		t.Errorf("properties out of order in %s", hr)
	}

	// The served example of a kind is a config the server's own
	// validation accepts.
	var cond struct {
		Examples []map[string]any `json:"examples"`
	}
	if err := json.Unmarshal(byKind["condition"].Schema, &cond); err != nil || len(cond.Examples) != 1 {
		t.Fatalf("condition examples: %v (%s)", err, byKind["condition"].Schema)
	}
	cfg, _ := json.Marshal(cond.Examples[0])
	e.create(`{"name":"from-example","nodes":[{"id":"start","type":"start"},{"id":"c","type":"condition","config":` + string(cfg) + `},{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"c"},{"id":"e2","source":"c","target":"end","sourceHandle":"true"},{"id":"e3","source":"c","target":"end","sourceHandle":"false"}]}`)
}

// TestNodeKindsNotConfigured: the registry belongs to the run service's
// engine, so a server without one answers 503 here as on every workflow
// route.
func TestNodeKindsNotConfigured(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, nil)
	c := client{t: t, base: env.URL, key: env.Key}
	resp, body := c.do("GET", "/api/node-kinds", "")
	wantError(t, resp, body, http.StatusServiceUnavailable, "workflows_not_configured")
}
