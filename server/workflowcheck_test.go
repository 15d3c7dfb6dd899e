package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/workflow"
)

// checkAnswer is POST /api/workflows/check as the studio decodes it.
type checkAnswer struct {
	Valid    bool `json:"valid"`
	Problems []struct {
		NodeID   string `json:"node_id"`
		EdgeID   string `json:"edge_id"`
		Path     string `json:"path"`
		Message  string `json:"message"`
		Hint     string `json:"hint"`
		Severity string `json:"severity"`
	} `json:"problems"`
	Strategy struct {
		Detected, Configured, Error string
	} `json:"strategy"`
	Definition *workflow.Definition `json:"definition"`
}

func (e workflowEnv) check(contentType, body string) checkAnswer {
	e.c.t.Helper()
	resp, b := e.c.send("POST", "/api/workflows/check", contentType, body)
	if resp.StatusCode != http.StatusOK {
		e.c.t.Fatalf("POST /api/workflows/check = %d %s", resp.StatusCode, b)
	}
	var a checkAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		e.c.t.Fatalf("decode %s: %v", b, err)
	}
	return a
}

// TestWorkflowCheck checks a definition as the canvas does while the user
// edits: problems tied to the node or edge they name, lint warnings apart
// from errors, the detected strategy, and nothing stored.
func TestWorkflowCheck(t *testing.T) {
	t.Parallel()
	e := newWorkflowEnv(t)

	ok := e.check("application/json", simpleFlow)
	if !ok.Valid || len(ok.Problems) != 0 || ok.Strategy.Detected != "single" || ok.Definition == nil || len(ok.Definition.Nodes) != 3 {
		t.Errorf("valid flow: %+v", ok)
	}

	// A node nothing reaches, an edge to a missing node, a lint warning.
	bad := `{"name":"broken","nodes":[{"id":"start","type":"start"},
{"id":"draft","type":"agent","config":{"model":"m","prompt":"Draft: {{input}}"}},
{"id":"lonely","type":"code","config":{"mode":"javascript","script":"input.title || \"Untitled\""}},
{"id":"end","type":"end"}],
"edges":[{"id":"e1","source":"start","target":"draft"},{"id":"e2","source":"draft","target":"end"},{"id":"e3","source":"draft","target":"ghost"}]}`
	a := e.check("application/json", bad)
	if a.Valid {
		t.Errorf("broken flow is valid: %+v", a)
	}
	var lonelyErr, lonelyWarn, ghostEdge bool
	for _, p := range a.Problems {
		switch {
		case p.NodeID == "lonely" && p.Severity == "error" && strings.HasPrefix(p.Path, "nodes[2]"):
			lonelyErr = true
		case p.NodeID == "lonely" && p.Severity == "warning" && p.Path == "nodes[2].config.script":
			lonelyWarn = true
		case p.EdgeID == "e3" && p.Severity == "error" && strings.HasPrefix(p.Path, "edges[2]"):
			ghostEdge = true
		}
		if p.Message == "" {
			t.Errorf("problem without message: %+v", p)
		}
	}
	if !lonelyErr || !lonelyWarn || !ghostEdge {
		t.Errorf("problems = %+v; want an error and a warning on node lonely and an error on edge e3", a.Problems)
	}

	// YAML in, the studio's JSON shape out (import).
	y := e.check("application/yaml", simpleFlowYAML)
	if !y.Valid || y.Definition == nil || y.Definition.Name != "memo-yaml" || len(y.Definition.Edges) != 2 {
		t.Errorf("yaml check = %+v", y)
	}

	// Nothing was stored.
	var list struct {
		Workflows []json.RawMessage `json:"data"`
	}
	e.c.json("GET", "/api/workflows", "", http.StatusOK, &list)
	if len(list.Workflows) != 0 {
		t.Errorf("check stored %d workflow(s)", len(list.Workflows))
	}
}

// TestWorkflowCheckBadBody gets a clear 4xx JSON error for what is not a
// definition, so an import of a wrong file says why.
func TestWorkflowCheckBadBody(t *testing.T) {
	t.Parallel()
	e := newWorkflowEnv(t)
	for _, tc := range []struct {
		name, ct, body string
		status         int
		code, contains string
	}{
		{"empty", "application/json", "", http.StatusBadRequest, "invalid_request", "empty"},
		{"not an object", "application/json", `[1,2]`, http.StatusBadRequest, "invalid_request", "not a json object"},
		{"broken json", "application/json", `{"name":`, http.StatusBadRequest, "invalid_request", "json"},
		{"broken yaml", "application/yaml", "name: [unclosed", http.StatusBadRequest, "invalid_request", "yaml"},
		{"yaml list", "application/yaml", "- a\n- b\n", http.StatusBadRequest, "invalid_request", "mapping"},
		{"too large", "application/json", `{"name":"` + strings.Repeat("x", 9<<20) + `"}`, http.StatusRequestEntityTooLarge, "request_too_large", "too large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := e.c.send("POST", "/api/workflows/check", tc.ct, tc.body)
			d := wantError(t, resp, body, tc.status, tc.code)
			if !strings.Contains(strings.ToLower(d.Message), tc.contains) {
				t.Errorf("message %q does not mention %q", d.Message, tc.contains)
			}
		})
	}
}

// TestWorkflowYAML exports a definition as block YAML that parses back to
// the same definition (the studio's YAML export and import).
func TestWorkflowYAML(t *testing.T) {
	t.Parallel()
	e := newWorkflowEnv(t)
	resp, body := e.c.send("POST", "/api/workflows/yaml", "application/json", simpleFlow)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/yaml") {
		t.Fatalf("POST /api/workflows/yaml = %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	text := string(body)
	if !strings.HasPrefix(text, "name: memo\n") || strings.Contains(text, "{") && !strings.Contains(text, "{{input}}") {
		t.Errorf("not block YAML in definition order:\n%s", text)
	}
	back, err := workflow.Parse(body)
	if err != nil {
		t.Fatalf("exported YAML does not parse: %v\n%s", err, text)
	}
	want, _ := workflow.Parse([]byte(simpleFlow))
	bj, _ := json.Marshal(back)
	wj, _ := json.Marshal(want)
	if string(bj) != string(wj) {
		t.Errorf("round trip:\n got %s\nwant %s", bj, wj)
	}
}
