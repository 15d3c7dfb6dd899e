package server

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/store"
)

// registerAudit adds GET /api/audit-logs, the caller's workspace's audit
// log, newest first:
//
//	GET /api/audit-logs?action=guard.&since=2026-01-01T00:00:00Z&limit=50
//	→ {"events": [...], "next": "<cursor>"}
//
// Query parameters (all optional): action (exact; a prefix ending in "."
// selects a family, and so does a bare family name without a dot:
// action=pii is action=pii., every action being family.verb), actor,
// target, since and until (RFC 3339; since <= created_at <
// until), limit (1-1000, default 100), cursor (the next of the previous
// page). A bad value is a 400 naming the parameter.
func (s *Server) registerAudit() {
	s.handle("GET /api/audit-logs", identity.PermAdminWorkspace, s.listAuditLogs)
}

func (s *Server) listAuditLogs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := store.AuditFilter{
		WorkspaceID: workspace(r),
		Action:      auditAction(q.Get("action")),
		Actor:       q.Get("actor"),
		Target:      q.Get("target"),
		Cursor:      q.Get("cursor"),
	}
	for _, p := range []struct {
		name string
		dst  *time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			apierr.Write(w, apierr.BadRequest(p.name, p.name+" "+strconv.Quote(v)+" is not an RFC 3339 time; use e.g. 2026-01-02T15:04:05Z"))
			return
		}
		*p.dst = t
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		apierr.Write(w, apierr.BadRequest("until", "until must be later than since"))
		return
	}
	n, ok := queryLimit(w, r, 0, store.MaxAuditLimit)
	if !ok {
		return
	}
	f.Limit = n
	page, err := s.p.AuditLog(r.Context(), f)
	if errors.Is(err, store.ErrInvalid) {
		apierr.Write(w, apierr.BadRequest("cursor", "cursor is malformed: pass the next value of the previous page unchanged"))
		return
	}
	if err != nil {
		s.logger.ErrorContext(r.Context(), "audit_list_failed", "workspace_id", f.WorkspaceID, "error", err)
		storeError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, page)
}

// auditAction turns the action parameter into the store's filter: every
// recorded action is family.verb (guard.block, pii.detected), so a name
// without a dot can only mean its family, which people type as "pii"
// rather than "pii.".
func auditAction(v string) string {
	if v != "" && !strings.Contains(v, ".") {
		return v + "."
	}
	return v
}
