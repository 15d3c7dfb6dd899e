package server

import (
	"net/http"
	"regexp"
	"strconv"

	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// checkBody is the answer of POST /api/workflows/check.
type checkBody struct {
	// Valid is true when the definition has no error-severity problem:
	// saving it would succeed.
	Valid    bool           `json:"valid"`
	Problems []checkProblem `json:"problems"`
	Strategy checkStrategy  `json:"strategy"`
	// Definition is the parsed definition, as JSON: a YAML body comes back
	// in the studio's own shape (import).
	Definition *workflow.Definition `json:"definition"`
}

// checkProblem is a validation problem or a lint warning, tied to the node
// or edge its path names so the canvas can show it there.
type checkProblem struct {
	NodeID   string `json:"node_id,omitempty"`
	EdgeID   string `json:"edge_id,omitempty"`
	Path     string `json:"path"`
	Message  string `json:"message"`
	Hint     string `json:"hint,omitempty"`
	Severity string `json:"severity"` // error or warning
}

// checkStrategy is the strategy the engine would pick for the graph
// (settings.strategy aside), or why it cannot pick one.
type checkStrategy struct {
	Detected string `json:"detected,omitempty"`
	// Configured is settings.strategy when the definition sets one.
	Configured string `json:"configured,omitempty"`
	Error      string `json:"error,omitempty"`
}

// elementPath finds the node or edge a problem path starts with.
var elementPath = regexp.MustCompile(`^(nodes|edges)\[(\d+)\]`)

// checkWorkflow judges a definition as saving it would, and lints it,
// storing nothing: the canvas calls it as the user edits, so problems show
// on the nodes before a save is refused. It needs only read permission,
// since it changes nothing and tells nothing a reader cannot see.
func (s *Server) checkWorkflow(w http.ResponseWriter, r *http.Request) {
	def, src, ok := s.parseDefinitionBody(w, r)
	if !ok {
		return
	}
	probs, err := s.definitionProblems(r, def, src)
	if err != nil {
		workflowError(w, err)
		return
	}
	reg := s.opts.Runs.Engine().Registry()
	out := checkBody{Valid: len(probs) == 0, Problems: []checkProblem{}, Definition: def}
	for _, p := range probs {
		out.Problems = append(out.Problems, locate(def, p.Path, p.Message, p.Hint, "error"))
	}
	for _, l := range workflow.Lint(def, reg) {
		out.Problems = append(out.Problems, locate(def, l.Path, l.Message, l.Hint, "warning"))
	}
	if st, err := workflow.DetectStrategy(def, reg); err != nil {
		out.Strategy.Error = err.Error()
	} else {
		out.Strategy.Detected = string(st)
	}
	out.Strategy.Configured = string(def.Settings.Strategy)
	httpapi.WriteJSON(w, http.StatusOK, out)
}

// locate ties a problem to the node or edge its path indexes.
func locate(def *workflow.Definition, path, message, hint, severity string) checkProblem {
	p := checkProblem{Path: path, Message: message, Hint: hint, Severity: severity}
	m := elementPath.FindStringSubmatch(path)
	if m == nil {
		return p
	}
	i, err := strconv.Atoi(m[2])
	if err != nil {
		return p
	}
	switch {
	case m[1] == "nodes" && i < len(def.Nodes):
		p.NodeID = def.Nodes[i].ID
	case m[1] == "edges" && i < len(def.Edges):
		p.EdgeID = def.Edges[i].ID
	}
	return p
}

// workflowYAML answers the posted definition (JSON or YAML) as YAML, in
// the field order of the definition, for the studio's export. It parses
// the definition as import does, so what it writes reads back.
func (s *Server) workflowYAML(w http.ResponseWriter, r *http.Request) {
	def, _, ok := s.parseDefinitionBody(w, r)
	if !ok {
		return
	}
	out, err := workflow.MarshalYAML(def)
	if err != nil {
		apierr.Write(w, &apierr.Error{Status: http.StatusInternalServerError, Type: apierr.TypeServer, Code: "internal_error", Message: "write yaml: " + err.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/yaml; charset=utf-8")
	_, _ = w.Write(out)
}
