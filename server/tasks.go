package server

import (
	"cmp"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/run"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/task"
)

// registerTasks adds the task API (package task):
//
//	POST /api/tasks                  {"text": "明日10時に定例を入れて"} or {"intent": {...}} → 201 outcome
//	GET  /api/tasks?source=line&status=done&limit=50&cursor=…
//	GET  /api/tasks/{id}             the task, its runs, steps (evidence), events and approvals
//	GET  /api/tasks/{id}/evidence    its steps only
//	POST /api/tasks/{id}/approve     {"approval_id": "…", "comment": "…"} (the pending one when omitted)
//	POST /api/tasks/{id}/reject      the same
//	POST /api/tasks/{id}/compensate  undo its side effects in reverse order
//	GET  /api/approvals?status=pending  the inbox
//	POST /api/agents/run             {"intent": {...}, "idempotency_key": "…", "agent": "…", "capability_ceiling": "low", "executor": "claude-code"}
//
// and the worker API of external executors (a run made with "executor"):
//
//	POST /api/runs/claim             {"executor": "claude-code", "lease_sec": 60, "run_id": "…"} → 200 {run, task, work} | 204
//	POST /api/runs/{id}/step         {"executor", "key", "tool", "capability", "summary", "input", "output", "undo", "error"}
//	POST /api/runs/{id}/heartbeat    {"executor", "lease_sec"}
//	POST /api/runs/{id}/complete     {"executor", "result"}
//	POST /api/runs/{id}/fail         {"executor", "error", "retryable"}
//
// A step of medium or high capability is refused with 409
// approval_pending (naming the approval) until a person approves it.
//
// Deciding needs approve_low at the route and the permission of the
// approval's capability in the handler (approve_medium for medium,
// approve_high for high): a 403 approval_not_allowed names it.
func (s *Server) registerTasks() {
	for _, rt := range []struct {
		pattern string
		perm    identity.Permission
		h       http.HandlerFunc
	}{
		{"POST /api/tasks", identity.PermRun, s.createTask},
		{"GET /api/tasks", identity.PermRead, s.listTasks},
		{"GET /api/tasks/{id}", identity.PermRead, s.getTask},
		{"GET /api/tasks/{id}/evidence", identity.PermRead, s.taskEvidence},
		{"POST /api/tasks/{id}/approve", identity.PermApproveLow, s.decideTask(true)},
		{"POST /api/tasks/{id}/reject", identity.PermApproveLow, s.decideTask(false)},
		{"POST /api/tasks/{id}/compensate", identity.PermApproveLow, s.compensateTask},
		{"GET /api/approvals", identity.PermRead, s.listApprovals},
		{"POST /api/agents/run", identity.PermRun, s.runAgentTask},
		// The worker API of external executors (task.Service.Claim …).
		{"POST /api/runs/claim", identity.PermRun, s.claimRun},
		{"POST /api/runs/{id}/step", identity.PermRun, s.runStep},
		{"POST /api/runs/{id}/heartbeat", identity.PermRun, s.runHeartbeat},
		{"POST /api/runs/{id}/complete", identity.PermRun, s.runComplete},
		{"POST /api/runs/{id}/fail", identity.PermRun, s.runFail},
	} {
		s.handle(rt.pattern, rt.perm, s.needTasks(rt.h))
	}
}

// needTasks answers 503 when the server runs no task service.
func (s *Server) needTasks(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.opts.Tasks == nil {
			apierr.Write(w, &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer, Code: "tasks_not_configured",
				Message: "tasks are not configured on this server: it was started without a task service"})
			return
		}
		h(w, r)
	}
}

// requester is who calls, as the task service names people.
func requester(r *http.Request) task.Requester {
	pr, _ := platform.PrincipalFrom(r.Context())
	return task.Requester{UserID: pr.UserID, Role: pr.Role, Actor: run.PrincipalOf(pr).ActorString()}
}

// sourceOf is "web" for a browser session and "api" for a key.
func sourceOf(r *http.Request) string {
	if pr, _ := platform.PrincipalFrom(r.Context()); pr.APIKeyID == "" && pr.UserID != "" {
		return "web"
	}
	return "api"
}

type taskBody struct {
	Text   string       `json:"text"`
	Intent *task.Intent `json:"intent"`
}

func (s *Server) createTask(w http.ResponseWriter, r *http.Request) {
	var b taskBody
	if !s.decodeBody(w, r, &b) {
		return
	}
	s.submit(w, r, task.Request{WorkspaceID: workspace(r), Text: b.Text, Intent: b.Intent, Source: sourceOf(r),
		SourceRef: r.Header.Get("Idempotency-Key"), Requester: requester(r)})
}

type agentRunBody struct {
	Executor          string       `json:"executor"`
	Intent            *task.Intent `json:"intent"`
	Text              string       `json:"text"`
	IdempotencyKey    string       `json:"idempotency_key"`
	Agent             string       `json:"agent"`
	CapabilityCeiling string       `json:"capability_ceiling"`
}

// runAgentTask is the design's orchestrator call: an intent (or text)
// with an idempotency key, which makes the same request twice one task.
func (s *Server) runAgentTask(w http.ResponseWriter, r *http.Request) {
	var b agentRunBody
	if !s.decodeBody(w, r, &b) {
		return
	}
	key := strings.TrimSpace(cmp.Or(b.IdempotencyKey, r.Header.Get("Idempotency-Key")))
	if key == "" {
		apierr.Write(w, apierr.BadRequest("idempotency_key", "idempotency_key is required: the same key makes a repeated request the same task"))
		return
	}
	if len(key) > 200 {
		apierr.Write(w, apierr.BadRequest("idempotency_key", "idempotency_key is longer than 200 characters"))
		return
	}
	s.submit(w, r, task.Request{WorkspaceID: workspace(r), Text: b.Text, Intent: b.Intent, Source: "api", SourceRef: "agents-run:" + key,
		Requester: requester(r), Agent: b.Agent, Ceiling: b.CapabilityCeiling, Executor: b.Executor})
}

func (s *Server) submit(w http.ResponseWriter, r *http.Request, req task.Request) {
	out, err := s.opts.Tasks.Submit(r.Context(), req)
	if err != nil {
		taskError(w, err)
		return
	}
	status := http.StatusCreated
	if out.Duplicate {
		status = http.StatusOK
	}
	httpapi.WriteJSON(w, status, out)
}

func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := store.TaskFilter{Status: store.TaskStatus(q.Get("status")), Source: q.Get("source"), Cursor: q.Get("cursor")}
	if f.Status != "" && !f.Status.Valid() {
		apierr.Write(w, apierr.BadRequest("status", "status "+strconv.Quote(q.Get("status"))+" is not a task status (open, planning, awaiting_approval, running, done, failed, cancelled, expired)"))
		return
	}
	n, ok := queryLimit(w, r, 0, store.MaxListLimit)
	if !ok {
		return
	}
	f.Limit = n
	page, err := s.opts.Tasks.List(r.Context(), workspace(r), f)
	if errors.Is(err, store.ErrInvalid) {
		apierr.Write(w, apierr.BadRequest("cursor", "cursor is malformed: pass the next value of the previous page unchanged"))
		return
	}
	if err != nil {
		storeError(w, err)
		return
	}
	if page.Tasks == nil {
		page.Tasks = []store.Task{}
	}
	httpapi.WriteJSON(w, http.StatusOK, page)
}

func (s *Server) getTask(w http.ResponseWriter, r *http.Request) {
	v, err := s.opts.Tasks.Get(r.Context(), workspace(r), r.PathValue("id"))
	if err != nil {
		storeErrorAbout(w, err, "task", r.PathValue("id"))
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, v)
}

func (s *Server) taskEvidence(w http.ResponseWriter, r *http.Request) {
	steps, err := s.opts.Tasks.Evidence(r.Context(), workspace(r), r.PathValue("id"))
	if err != nil {
		storeErrorAbout(w, err, "task", r.PathValue("id"))
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"task_id": r.PathValue("id"), "steps": steps})
}

type decideBody struct {
	ApprovalID string `json:"approval_id"`
	Comment    string `json:"comment"`
}

func (s *Server) decideTask(approve bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var b decideBody
		if !s.decodeBody(w, r, &b) {
			return
		}
		ws, id := workspace(r), r.PathValue("id")
		if b.ApprovalID == "" {
			if _, err := s.opts.Tasks.Task(r.Context(), ws, id); err != nil {
				storeErrorAbout(w, err, "task", id)
				return
			}
			as, err := s.opts.Tasks.Approvals(r.Context(), ws, store.ApprovalFilter{TaskID: id, Status: store.ApprovalPending})
			if err != nil {
				storeErrorAbout(w, err, "task", id)
				return
			}
			if len(as) != 1 {
				apierr.Write(w, &apierr.Error{Status: http.StatusConflict, Type: apierr.TypeInvalidRequest, Code: "no_pending_approval",
					Message: "task " + strconv.Quote(id) + " has " + strconv.Itoa(len(as)) + " pending approvals; name one with approval_id"})
				return
			}
			b.ApprovalID = as[0].ID
		}
		a, err := s.opts.Tasks.Decide(r.Context(), task.Decision{WorkspaceID: ws, TaskID: id, ApprovalID: b.ApprovalID, Approve: approve,
			Approver: requester(r), Comment: b.Comment})
		if errors.Is(err, store.ErrNotFound) {
			apierr.Write(w, apierr.NotFound("not_found", "approval "+strconv.Quote(b.ApprovalID)+" of task "+strconv.Quote(id)+" does not exist in this workspace"))
			return
		}
		if err != nil {
			taskError(w, err)
			return
		}
		httpapi.WriteJSON(w, http.StatusOK, a)
	}
}

func (s *Server) compensateTask(w http.ResponseWriter, r *http.Request) {
	ws, id := workspace(r), r.PathValue("id")
	t, err := s.opts.Tasks.Task(r.Context(), ws, id)
	if err != nil {
		storeErrorAbout(w, err, "task", id)
		return
	}
	// Undoing is as weighty as doing: the role that may approve the
	// task's capability may undo it.
	req := requester(r)
	perm := task.ApprovePermission(t.Capability)
	if !identity.Allows(req.Role, perm) {
		apierr.Write(w, &apierr.Error{Status: http.StatusForbidden, Type: apierr.TypePermission, Code: "approval_not_allowed", Param: string(perm),
			Message: "compensating a " + string(t.Capability) + "-capability task needs " + string(perm)})
		return
	}
	rep, err := s.opts.Tasks.Compensate(r.Context(), ws, id, req.Actor)
	if err != nil {
		taskError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, rep)
}

func (s *Server) listApprovals(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := store.ApprovalFilter{Status: store.ApprovalStatus(q.Get("status")), TaskID: q.Get("task_id")}
	if f.Status != "" && !f.Status.Valid() {
		apierr.Write(w, apierr.BadRequest("status", "status "+strconv.Quote(q.Get("status"))+" is not pending, approved, rejected or expired"))
		return
	}
	as, err := s.opts.Tasks.Approvals(r.Context(), workspace(r), f)
	if err != nil {
		storeError(w, err)
		return
	}
	if as == nil {
		as = []store.Approval{}
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"data": as})
}

type workerBody struct {
	Executor string          `json:"executor"`
	LeaseSec int             `json:"lease_sec"`
	RunID    string          `json:"run_id"`
	Result   json.RawMessage `json:"result"`
	Error    string          `json:"error"`
	Retry    bool            `json:"retryable"`
}

func (b workerBody) lease() time.Duration {
	if b.LeaseSec == 0 {
		return 60 * time.Second
	}
	return time.Duration(b.LeaseSec) * time.Second
}

func (s *Server) claimRun(w http.ResponseWriter, r *http.Request) {
	var b workerBody
	if !s.decodeBody(w, r, &b) {
		return
	}
	c, err := s.opts.Tasks.Claim(r.Context(), workspace(r), b.Executor, b.RunID, b.lease())
	if errors.Is(err, task.ErrNoWork) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if err != nil {
		taskError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, c)
}

func (s *Server) runStep(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Executor string `json:"executor"`
		task.ExternalStep
	}
	if !s.decodeBody(w, r, &b) {
		return
	}
	st, err := s.opts.Tasks.RecordStep(r.Context(), workspace(r), r.PathValue("id"), b.Executor, b.ExternalStep)
	if err != nil {
		taskError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, st)
}

func (s *Server) runHeartbeat(w http.ResponseWriter, r *http.Request) {
	var b workerBody
	if !s.decodeBody(w, r, &b) {
		return
	}
	run, err := s.opts.Tasks.Heartbeat(r.Context(), workspace(r), r.PathValue("id"), b.Executor, b.lease())
	if err != nil {
		taskError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, run)
}

func (s *Server) runComplete(w http.ResponseWriter, r *http.Request) {
	var b workerBody
	if !s.decodeBody(w, r, &b) {
		return
	}
	run, err := s.opts.Tasks.Complete(r.Context(), workspace(r), r.PathValue("id"), b.Executor, b.Result)
	if err != nil {
		taskError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, run)
}

func (s *Server) runFail(w http.ResponseWriter, r *http.Request) {
	var b workerBody
	if !s.decodeBody(w, r, &b) {
		return
	}
	run, err := s.opts.Tasks.Fail(r.Context(), workspace(r), r.PathValue("id"), b.Executor, b.Error, b.Retry)
	if err != nil {
		taskError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, run)
}

// taskError maps the task service's errors.
func taskError(w http.ResponseWriter, err error) {
	var e *apierr.Error
	var pend *task.ApprovalPendingError
	switch {
	case errors.As(err, &pend):
		e = &apierr.Error{Status: http.StatusConflict, Type: apierr.TypeInvalidRequest, Code: "approval_pending", Param: pend.ApprovalID, Message: err.Error()}
	case errors.Is(err, task.ErrLeaseLost):
		e = &apierr.Error{Status: http.StatusConflict, Type: apierr.TypeInvalidRequest, Code: "lease_lost", Message: err.Error()}
	case errors.Is(err, task.ErrUnknownAgent):
		e = apierr.BadRequest("agent", err.Error())
	case errors.Is(err, task.ErrInvalid):
		e = apierr.BadRequest("", strings.TrimPrefix(err.Error(), task.ErrInvalid.Error()+": "))
	case errors.Is(err, task.ErrNoModel):
		e = &apierr.Error{Status: http.StatusUnprocessableEntity, Type: apierr.TypeInvalidRequest, Code: "tasks_model_not_configured", Message: err.Error()}
	case errors.Is(err, task.ErrNotAllowed):
		e = &apierr.Error{Status: http.StatusForbidden, Type: apierr.TypePermission, Code: "approval_not_allowed", Message: err.Error()}
	case errors.Is(err, task.ErrSelfApproval):
		e = &apierr.Error{Status: http.StatusForbidden, Type: apierr.TypePermission, Code: "self_approval", Message: err.Error()}
	case errors.Is(err, task.ErrExpired):
		e = &apierr.Error{Status: http.StatusConflict, Type: apierr.TypeInvalidRequest, Code: "approval_expired", Message: err.Error()}
	case errors.Is(err, store.ErrConflict):
		e = &apierr.Error{Status: http.StatusConflict, Type: apierr.TypeInvalidRequest, Code: "already_decided", Message: "the approval was decided the other way already"}
	default:
		e = storeAPIError(err, "", "")
	}
	apierr.Write(w, e)
}
