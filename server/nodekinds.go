package server

import (
	"net/http"

	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// nodeKindsBody is the answer of GET /api/node-kinds.
type nodeKindsBody struct {
	Kinds []workflow.KindDescription `json:"kinds"`
}

// listNodeKinds answers the node kinds of the registry the run service's
// engine validates and runs with, sorted by kind: the studio builds its
// palette and config forms from it, so they cannot drift from validation.
// The registry lives in that engine, so without a run service the route
// answers 503 like the rest of the workflow API (registerWorkflows wraps it
// in needRuns).
func (s *Server) listNodeKinds(w http.ResponseWriter, _ *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, nodeKindsBody{Kinds: s.opts.Runs.Engine().Registry().Describe()})
}
