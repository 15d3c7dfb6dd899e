package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/trigger"
)

// DefaultMaxWebhookBytes caps a webhook body (Options.MaxWebhookBytes).
const DefaultMaxWebhookBytes = 1 << 20

// registerTriggers adds /api/triggers (changed with the workflow edit
// permission) and the public POST /hooks/{id}, whose signature is its
// authentication. Every route answers 503 without Options.Triggers.
func (s *Server) registerTriggers() {
	routes := []struct {
		pattern string
		perm    identity.Permission
		h       http.HandlerFunc
	}{
		{"GET /api/triggers", identity.PermRead, s.listTriggers},
		{"POST /api/triggers", identity.PermEdit, s.createTrigger},
		{"GET /api/triggers/{id}", identity.PermRead, s.getTrigger},
		{"PATCH /api/triggers/{id}", identity.PermEdit, s.updateTrigger},
		{"DELETE /api/triggers/{id}", identity.PermEdit, s.deleteTrigger},
		{"POST /api/triggers/{id}/secret", identity.PermEdit, s.rotateTriggerSecret},
		{"GET /api/triggers/{id}/fires", identity.PermRead, s.listTriggerFires},
	}
	for _, rt := range routes {
		s.handle(rt.pattern, rt.perm, s.needTriggers(rt.h))
	}
	s.handleAccess("POST /hooks/{id}", httpapi.AccessPublic, s.needTriggers(s.deliverWebhook))
}

func (s *Server) needTriggers(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.opts.Triggers == nil {
			apierr.Write(w, &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer, Code: "triggers_not_configured",
				Message: "triggers are not configured on this server: it was started without a trigger service"})
			return
		}
		h(w, r)
	}
}

// triggerView is a trigger in the API: its webhook URL path, when an
// enabled schedule fires next, and the secret in clear on the one answer
// that may show it.
type triggerView struct {
	store.Trigger
	URL      string     `json:"url,omitempty"`
	NextFire *time.Time `json:"next_fire,omitempty"`
	Secret   string     `json:"secret,omitempty"`
}

func viewTrigger(t store.Trigger, secret string) triggerView {
	v := triggerView{Trigger: t, Secret: secret}
	if t.Kind == store.TriggerWebhook {
		v.URL = "/hooks/" + t.ID
	}
	if next, ok := trigger.NextFire(t, time.Now()); ok {
		v.NextFire = &next
	}
	return v
}

// triggerError maps the trigger service's errors, then the store's.
func triggerError(w http.ResponseWriter, err error, name string) {
	var fe *trigger.FieldError
	if errors.As(err, &fe) {
		apierr.Write(w, apierr.BadRequest(fe.Field, fe.Message))
		return
	}
	storeErrorAbout(w, err, "trigger", name)
}

func (s *Server) listTriggers(w http.ResponseWriter, r *http.Request) {
	list, err := s.opts.Triggers.List(r.Context(), workspace(r))
	if err != nil {
		storeError(w, err)
		return
	}
	out := make([]triggerView, len(list))
	for i, t := range list {
		out[i] = viewTrigger(t, "")
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"data": out})
}

func (s *Server) createTrigger(w http.ResponseWriter, r *http.Request) {
	var sp trigger.Spec
	if !s.decodeBody(w, r, &sp) {
		return
	}
	t, secret, err := s.opts.Triggers.Create(r.Context(), workspace(r), sp)
	if err != nil {
		name := ""
		if sp.Name != nil {
			name = *sp.Name
		}
		triggerError(w, err, name)
		return
	}
	httpapi.WriteJSON(w, http.StatusCreated, viewTrigger(t, secret))
}

func (s *Server) getTrigger(w http.ResponseWriter, r *http.Request) {
	t, err := s.opts.Triggers.Get(r.Context(), workspace(r), r.PathValue("id"))
	if err != nil {
		storeError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, viewTrigger(t, ""))
}

func (s *Server) updateTrigger(w http.ResponseWriter, r *http.Request) {
	var sp trigger.Spec
	if !s.decodeBody(w, r, &sp) {
		return
	}
	t, err := s.opts.Triggers.Update(r.Context(), workspace(r), r.PathValue("id"), sp)
	if err != nil {
		name := ""
		if sp.Name != nil {
			name = *sp.Name
		}
		triggerError(w, err, name)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, viewTrigger(t, ""))
}

func (s *Server) deleteTrigger(w http.ResponseWriter, r *http.Request) {
	if err := s.opts.Triggers.Delete(r.Context(), workspace(r), r.PathValue("id")); err != nil {
		storeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) rotateTriggerSecret(w http.ResponseWriter, r *http.Request) {
	t, secret, err := s.opts.Triggers.RotateSecret(r.Context(), workspace(r), r.PathValue("id"))
	if err != nil {
		triggerError(w, err, "")
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, viewTrigger(t, secret))
}

func (s *Server) listTriggerFires(w http.ResponseWriter, r *http.Request) {
	n, ok := queryLimit(w, r, 100, 1000)
	if !ok {
		return
	}
	fires, err := s.opts.Triggers.Fires(r.Context(), workspace(r), r.PathValue("id"), n)
	if err != nil {
		storeError(w, err)
		return
	}
	if fires == nil {
		fires = []store.TriggerFire{}
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"data": fires})
}

// deliverWebhook answers POST /hooks/{id}: the body is read up to the cap
// (413 past it) before the signature is checked; a good delivery answers
// 202 with the run it started, a redelivery 200 with the first one's run.
func (s *Server) deliverWebhook(w http.ResponseWriter, r *http.Request) {
	limit := s.opts.MaxWebhookBytes
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			apierr.Write(w, &apierr.Error{Status: http.StatusRequestEntityTooLarge, Type: apierr.TypeInvalidRequest, Code: "request_too_large",
				Message: fmt.Sprintf("webhook body is larger than %d bytes", limit)})
			return
		}
		apierr.Write(w, apierr.BadRequest("", "read webhook body: "+err.Error()))
		return
	}
	d, err := s.opts.Triggers.Deliver(r.Context(), r.PathValue("id"), r.Header, body, s.opts.WebhookReplayWindow, time.Now())
	var fe *trigger.FieldError
	switch {
	case err == nil:
	case errors.Is(err, trigger.ErrUnknown):
		apierr.Write(w, apierr.NotFound("not_found", "no webhook at this address"))
		return
	case errors.Is(err, trigger.ErrSignature):
		apierr.Write(w, &apierr.Error{Status: http.StatusUnauthorized, Type: apierr.TypeAuthentication, Code: "invalid_signature",
			Message: "X-AgentCraft-Signature is missing or does not match: send sha256=<hex HMAC-SHA256 of \"<X-AgentCraft-Timestamp>.<body>\"> under the trigger's secret"})
		return
	case errors.Is(err, trigger.ErrStale):
		window := s.opts.WebhookReplayWindow
		if window <= 0 {
			window = trigger.DefaultReplayWindow
		}
		apierr.Write(w, &apierr.Error{Status: http.StatusUnauthorized, Type: apierr.TypeAuthentication, Code: "stale_timestamp",
			Message: "X-AgentCraft-Timestamp is more than " + window.String() + " from the server's clock (a replay, or a clock off); sign again with the current unix time"})
		return
	case errors.Is(err, trigger.ErrPending):
		w.Header().Set("Retry-After", "1")
		apierr.Write(w, &apierr.Error{Status: http.StatusConflict, Type: apierr.TypeInvalidRequest, Code: "delivery_in_progress",
			Message: "the first delivery with this X-AgentCraft-Delivery id is still starting its run; retry shortly", RetryAfter: 1})
		return
	case errors.As(err, &fe):
		apierr.Write(w, apierr.BadRequest(fe.Field, fe.Message))
		return
	default:
		workflowError(w, err)
		return
	}
	status := http.StatusAccepted
	if d.Replay {
		status = http.StatusOK
	}
	w.Header().Set("X-AgentCraft-Run-Id", d.Run.ID)
	httpapi.WriteJSON(w, status, map[string]any{"run_id": d.Run.ID, "status": d.Run.Status, "replay": d.Replay,
		"trigger_id": d.Run.TriggerID, "workspace_id": d.Run.WorkspaceID, "created_at": d.Run.CreatedAt.Format(time.RFC3339Nano),
		"events": "/api/runs/" + d.Run.ID + "/events"})
}
