package server

import (
	"net/http"

	"github.com/agentcraftlab/agentcraft/budget"
	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/pricing"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
)

// registerBudget adds the workspace budget routes: anyone who reads the
// workspace sees its budget; changing or resetting it is an admin's.
func (s *Server) registerBudget() {
	s.handle("GET /api/budget", identity.PermRead, s.getBudget)
	s.handle("PUT /api/budget", identity.PermAdminWorkspace, s.putBudget)
	s.handle("DELETE /api/budget", identity.PermAdminWorkspace, s.deleteBudget)
	s.handle("POST /api/budget/reset", identity.PermAdminWorkspace, s.resetBudget)
}

// getBudget serves GET /api/budget: the month's limits in force, whether
// they are the workspace's own or the default, what the month has used
// and when it resets.
func (s *Server) getBudget(w http.ResponseWriter, r *http.Request) {
	st, err := s.p.Budget(r.Context(), workspace(r))
	if err != nil {
		storeError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, st)
}

// budgetBody is the body of PUT /api/budget: monthly limits, 0 for none.
type budgetBody struct {
	Tokens *int64         `json:"tokens"`
	Cost   *pricing.Money `json:"cost"`
}

// putBudget serves PUT /api/budget {"tokens": 1000000, "cost": 50.00}:
// the workspace's own monthly limits in place of the default. A field
// left out is no limit.
func (s *Server) putBudget(w http.ResponseWriter, r *http.Request) {
	var b budgetBody
	if !s.decodeBody(w, r, &b) {
		return
	}
	if b.Tokens == nil && b.Cost == nil {
		apierr.Write(w, apierr.BadRequest("tokens", `give tokens, cost or both: {"tokens": 1000000, "cost": 50.00} (0 is no limit; DELETE /api/budget returns to the default)`))
		return
	}
	var l budget.Limits
	if b.Tokens != nil {
		if *b.Tokens < 0 {
			apierr.Write(w, apierr.BadRequest("tokens", "tokens must be 0 (no limit) or a positive number of tokens per month"))
			return
		}
		l.Tokens = *b.Tokens
	}
	if b.Cost != nil {
		l.Cost = *b.Cost // Money refuses negative amounts when decoding
	}
	st, err := s.p.SetBudget(r.Context(), workspace(r), l)
	if err != nil {
		storeError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, st)
}

// deleteBudget serves DELETE /api/budget: the configuration's default
// applies again.
func (s *Server) deleteBudget(w http.ResponseWriter, r *http.Request) {
	st, err := s.p.DefaultBudget(r.Context(), workspace(r))
	if err != nil {
		storeError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, st)
}

// resetBudget serves POST /api/budget/reset: the month's count starts
// afresh from now, so a workspace refused with 429 runs again.
func (s *Server) resetBudget(w http.ResponseWriter, r *http.Request) {
	st, err := s.p.ResetBudget(r.Context(), workspace(r))
	if err != nil {
		storeError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, st)
}
