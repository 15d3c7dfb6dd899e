package server

import (
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/retention"
)

// Retention is what GET and PUT /api/retention serve: the server's
// policy and the workspaces' overrides (package store/retention).
type Retention struct {
	// Server is the configured policy, kind → age as written
	// (agentcraft.yaml retention:).
	Server map[string]string
	// Overrides stores the workspaces' own ages.
	Overrides *retention.Overrides
}

// registerRetention adds the caller's workspace's retention policy:
//
//	GET /api/retention → {"server": {"run_events": "30d"}, "workspace": {"conversations": "keep"},
//	                      "effective": {...}, "per_workspace": ["checkpoints", ...]}
//	PUT /api/retention {"run_events": "7d", "conversations": "keep", "uploads": ""}
//
// PUT sets the kinds it names ("" goes back to the server's policy) and
// leaves the others; only the kinds of per_workspace may be set (usage
// detail, queue jobs and the audit log are the operator's). Both need
// admin_workspace.
func (s *Server) registerRetention() {
	s.handle("GET /api/retention", identity.PermAdminWorkspace, s.getRetention)
	s.handle("PUT /api/retention", identity.PermAdminWorkspace, s.putRetention)
}

type retentionBody struct {
	Server       map[string]string `json:"server"`
	Workspace    map[string]string `json:"workspace"`
	Effective    map[string]string `json:"effective"`
	PerWorkspace []string          `json:"per_workspace"`
}

func (s *Server) retentionOff(w http.ResponseWriter) bool {
	if s.opts.Retention == nil || s.opts.Retention.Overrides == nil {
		apierr.Write(w, &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer, Code: "retention_unavailable",
			Message: "retention policies are not available on this server"})
		return true
	}
	return false
}

func (s *Server) getRetention(w http.ResponseWriter, r *http.Request) {
	if s.retentionOff(w) {
		return
	}
	s.writeRetention(w, r, http.StatusOK)
}

func (s *Server) writeRetention(w http.ResponseWriter, r *http.Request, status int) {
	ws := workspace(r)
	own, err := s.opts.Retention.Overrides.Get(r.Context(), ws)
	if err != nil {
		s.logger.Error("retention_get_failed", "workspace_id", ws, "error", err)
		storeError(w, err)
		return
	}
	b := retentionBody{Server: map[string]string{}, Workspace: map[string]string{}, Effective: map[string]string{}}
	for _, k := range retention.Kinds {
		age := retention.Keep
		if v, ok := s.opts.Retention.Server[string(k)]; ok && v != "" {
			age = v
			b.Server[string(k)] = v
		}
		if v, ok := own[k]; ok {
			age = v
			b.Workspace[string(k)] = v
		}
		b.Effective[string(k)] = age
		if k.PerWorkspace() {
			b.PerWorkspace = append(b.PerWorkspace, string(k))
		}
	}
	httpapi.WriteJSON(w, status, b)
}

func (s *Server) putRetention(w http.ResponseWriter, r *http.Request) {
	if s.retentionOff(w) {
		return
	}
	var body map[string]string
	if !s.decodeBody(w, r, &body) {
		return
	}
	ages := map[retention.Kind]string{}
	for _, k := range slices.Sorted(maps.Keys(body)) {
		kind, v := retention.Kind(k), body[k]
		switch {
		case !kind.Valid():
			apierr.Write(w, apierr.BadRequest(k, "unknown retention kind "+k+"; a workspace sets conversations, uploads, run_events or checkpoints"))
			return
		case !kind.PerWorkspace():
			apierr.Write(w, apierr.BadRequest(k, k+" is "+retention.ErrNotPerWorkspace.Error()))
			return
		}
		if _, err := retention.ParseAge(v); err != nil {
			apierr.Write(w, apierr.BadRequest(k, err.Error()))
			return
		}
		ages[kind] = v
	}
	ws := workspace(r)
	if err := s.opts.Retention.Overrides.Put(r.Context(), ws, ages); err != nil {
		if errors.Is(err, store.ErrInvalid) {
			apierr.Write(w, apierr.BadRequest("body", err.Error()))
			return
		}
		s.logger.Error("retention_put_failed", "workspace_id", ws, "error", err)
		storeError(w, err)
		return
	}
	details, _ := json.Marshal(ages)
	s.p.RecordAudit(r.Context(), store.AuditEvent{Action: "retention.update", Target: ws, Details: details})
	s.writeRetention(w, r, http.StatusOK)
}
