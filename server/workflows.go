package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/internal/sse"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// registerWorkflows adds the workflow and run API. Every route answers 503
// when the server has no run service (Options.Runs).
func (s *Server) registerWorkflows() {
	routes := []struct {
		pattern string
		perm    identity.Permission
		h       http.HandlerFunc
	}{
		{"GET /api/workflows", identity.PermRead, s.listWorkflows},
		{"POST /api/workflows", identity.PermEdit, s.createWorkflow},
		{"GET /api/workflows/{id}", identity.PermRead, s.getWorkflow},
		{"PUT /api/workflows/{id}", identity.PermEdit, s.saveWorkflow},
		{"DELETE /api/workflows/{id}", identity.PermEdit, s.deleteWorkflow},
		{"GET /api/workflows/{id}/versions", identity.PermRead, s.listWorkflowVersions},
		{"GET /api/workflows/{id}/versions/{version}", identity.PermRead, s.getWorkflowVersion},
		{"POST /api/workflows/{id}/versions/{version}/restore", identity.PermEdit, s.restoreWorkflowVersion},
		{"POST /api/workflows/{id}/runs", identity.PermRun, s.startRun},
		{"GET /api/runs", identity.PermRead, s.listRuns},
		{"GET /api/runs/{id}", identity.PermRead, s.getRun},
		{"GET /api/runs/{id}/checkpoints", identity.PermRead, s.listCheckpoints},
		{"POST /api/runs/{id}/resume", identity.PermRun, s.resumeRun},
		{"POST /api/runs/{id}/cancel", identity.PermRun, s.cancelRun},
		{"POST /api/runs/{id}/rerun", identity.PermRun, s.rerunRun},
		{"GET /api/runs/{id}/events", identity.PermRead, s.runEvents},
		{"GET /api/node-kinds", identity.PermRead, s.listNodeKinds},
		{"POST /api/workflows/check", identity.PermRead, s.checkWorkflow},
		{"POST /api/workflows/yaml", identity.PermRead, s.workflowYAML},
	}
	for _, rt := range routes {
		s.handle(rt.pattern, rt.perm, s.needRuns(rt.h))
	}
}

// needRuns answers 503 when workflows are not configured, so a server
// started without a run service says so instead of failing with a nil
// pointer deep in a handler.
func (s *Server) needRuns(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.opts.Runs == nil {
			apierr.Write(w, &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer, Code: "workflows_not_configured",
				Message: "workflows are not configured on this server: it was started without a workflow run service"})
			return
		}
		h(w, r)
	}
}

// problemBody is an error answer that lists the problems of a definition,
// or carries the run an input hook blocked.
type problemBody struct {
	Error problemDetail `json:"error"`
	Run   *store.Run    `json:"run,omitempty"`
	// Event is the run_blocked event of a blocked run.
	Event *workflow.Event `json:"event,omitempty"`
}

type problemDetail struct {
	apierr.Detail
	Problems []workflow.Problem `json:"problems,omitempty"`
}

func detail(typ, code, message string) problemDetail {
	return problemDetail{Detail: apierr.Detail{Message: message, Type: typ, Code: &code}}
}

// invalidWorkflow answers 422 listing every problem of a definition.
func invalidWorkflow(w http.ResponseWriter, probs []workflow.Problem) {
	d := detail("invalid_workflow", "invalid_workflow", fmt.Sprintf("the workflow definition has %d problem(s); see problems", len(probs)))
	d.Problems = probs
	httpapi.WriteJSON(w, http.StatusUnprocessableEntity, problemBody{Error: d})
}

// workflowError maps the errors of parsing, preparing and running
// workflows, then falls back to storeError.
func workflowError(w http.ResponseWriter, err error) {
	var inv *workflow.InvalidError
	switch {
	case errors.As(err, &inv):
		invalidWorkflow(w, inv.Problems)
	case errors.Is(err, workflow.ErrTooLarge):
		apierr.Write(w, &apierr.Error{Status: http.StatusRequestEntityTooLarge, Type: apierr.TypeInvalidRequest, Code: "request_too_large",
			Message: fmt.Sprintf("workflow definition is larger than %d bytes", workflow.MaxDefinitionSize)})
	case errors.Is(err, controlplane.ErrStorageQuota):
		apierr.Write(w, &apierr.Error{Status: http.StatusUnprocessableEntity, Type: apierr.TypeInvalidRequest, Code: "storage_quota_exceeded",
			Message: err.Error()})
	default:
		storeError(w, err)
	}
}

// definitionFields are the top-level keys of a workflow.Definition.
var definitionFields = []string{"name", "description", "version", "nodes", "edges", "hooks", "settings"}

// readDefinition reads a definition from the body: JSON, or YAML when the
// Content-Type says so. It answers the error itself and returns ok false.
func (s *Server) readDefinition(w http.ResponseWriter, r *http.Request) (*workflow.Definition, bool) {
	def, src, ok := s.parseDefinitionBody(w, r)
	if !ok {
		return nil, false
	}
	probs, err := s.definitionProblems(r, def, src)
	if err != nil {
		workflowError(w, err)
		return nil, false
	}
	if len(probs) > 0 {
		invalidWorkflow(w, probs)
		return nil, false
	}
	return def, true
}

// definitionSource is the body a definition was parsed from.
type definitionSource struct {
	body   []byte
	isYAML bool
}

// parseDefinitionBody reads and parses the body (JSON, or YAML when the
// Content-Type says so) without judging the definition. It answers the
// error itself and returns ok false.
func (s *Server) parseDefinitionBody(w http.ResponseWriter, r *http.Request) (*workflow.Definition, definitionSource, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			apierr.Write(w, &apierr.Error{Status: http.StatusRequestEntityTooLarge, Type: apierr.TypeInvalidRequest, Code: "request_too_large", Message: "request body is too large"})
		} else {
			apierr.Write(w, apierr.BadRequest("", "read request body: "+err.Error()))
		}
		return nil, definitionSource{}, false
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	isYAML := ct == "application/yaml" || ct == "text/yaml" || ct == "application/x-yaml"
	trimmed := bytes.TrimSpace(body)
	switch {
	case len(trimmed) == 0:
		apierr.Write(w, apierr.BadRequest("", "request body is empty: send a workflow definition as JSON, or as YAML with Content-Type: application/yaml"))
		return nil, definitionSource{}, false
	case !isYAML && trimmed[0] != '{':
		apierr.Write(w, apierr.BadRequest("", "request body is not a JSON object: send the definition as JSON, or set Content-Type: application/yaml to send YAML"))
		return nil, definitionSource{}, false
	}
	def, err := workflow.Parse(trimmed)
	if err != nil {
		if errors.Is(err, workflow.ErrTooLarge) {
			workflowError(w, err)
		} else {
			apierr.Write(w, apierr.BadRequest("", err.Error()))
		}
		return nil, definitionSource{}, false
	}
	return def, definitionSource{body: trimmed, isYAML: isYAML}, true
}

// definitionProblems lists everything that keeps def from being saved in
// the request's workspace: unknown top-level fields of src, validation,
// the server's ceilings and agents the workspace lacks. The error is one
// of reading the workspace's agents or of preparing, not a problem.
func (s *Server) definitionProblems(r *http.Request, def *workflow.Definition, src definitionSource) ([]workflow.Problem, error) {
	// A misspelt top-level field ("egdes") would otherwise be dropped
	// silently and the workflow saved without it.
	var top map[string]any
	if src.isYAML && src.body[0] != '{' {
		_ = yaml.Unmarshal(src.body, &top)
	} else {
		_ = json.Unmarshal(src.body, &top)
	}
	var probs []workflow.Problem
	for k := range top {
		// React Flow's own top-level state (viewport) is the studio's to
		// send; it is not kept, and not an error.
		if !slices.Contains(definitionFields, k) && k != "viewport" {
			probs = append(probs, workflow.Problem{Path: k, Message: "unknown field " + strconv.Quote(k),
				Hint: "remove it or use one of: " + strings.Join(definitionFields, ", ")})
		}
	}
	slices.SortFunc(probs, func(a, b workflow.Problem) int { return strings.Compare(a.Path, b.Path) })
	if _, err := s.opts.Runs.Engine().Prepare(def); err != nil {
		var inv *workflow.InvalidError
		if !errors.As(err, &inv) {
			return nil, err
		}
		probs = append(probs, inv.Problems...)
	}
	probs = append(probs, s.opts.Runs.Ceilings().Check(def.Settings)...)
	// Validate cannot know the workspace: an agent node naming an agent
	// it lacks would be saved and fail only when a run reaches it.
	agents, err := s.p.Agents(r.Context(), workspace(r))
	if err != nil {
		return nil, err
	}
	names := make([]string, len(agents))
	for i, a := range agents {
		names[i] = a.Name
	}
	probs = append(probs, workflow.CheckAgents(def, s.opts.Runs.Engine().Registry(), names)...)
	return probs, nil
}

func (s *Server) listWorkflows(w http.ResponseWriter, r *http.Request) {
	list, err := s.opts.Runs.Workflows(r.Context(), workspace(r))
	if err != nil {
		storeError(w, err)
		return
	}
	if list == nil {
		list = []store.Workflow{}
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"data": list})
}

func (s *Server) createWorkflow(w http.ResponseWriter, r *http.Request) {
	def, ok := s.readDefinition(w, r)
	if !ok {
		return
	}
	wf, err := s.opts.Runs.CreateWorkflow(r.Context(), workspace(r), def)
	if err != nil {
		storeErrorAbout(w, err, "workflow", strings.TrimSpace(def.Name))
		return
	}
	httpapi.WriteJSON(w, http.StatusCreated, wf)
}

// getWorkflow answers GET /api/workflows/{id}, where id may also be the
// workflow's name, as for knowledge bases.
func (s *Server) getWorkflow(w http.ResponseWriter, r *http.Request) {
	ws, idOrName := workspace(r), r.PathValue("id")
	wf, err := s.opts.Runs.FindWorkflow(r.Context(), ws, idOrName)
	if err != nil {
		storeErrorAbout(w, err, "workflow", idOrName)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, wf)
}

func (s *Server) saveWorkflow(w http.ResponseWriter, r *http.Request) {
	ws, id := workspace(r), r.PathValue("id")
	// Answer 404 for an unknown workflow before judging the body.
	if _, err := s.opts.Runs.Workflow(r.Context(), ws, id); err != nil {
		storeError(w, err)
		return
	}
	def, ok := s.readDefinition(w, r)
	if !ok {
		return
	}
	wf, err := s.opts.Runs.SaveWorkflow(r.Context(), ws, id, def)
	if errors.Is(err, store.ErrConflict) {
		storeErrorAbout(w, err, "workflow", strings.TrimSpace(def.Name))
		return
	}
	if err != nil {
		storeError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, wf)
}

func (s *Server) deleteWorkflow(w http.ResponseWriter, r *http.Request) {
	if err := s.opts.Runs.DeleteWorkflow(r.Context(), workspace(r), r.PathValue("id")); err != nil {
		storeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) listWorkflowVersions(w http.ResponseWriter, r *http.Request) {
	vs, err := s.opts.Runs.WorkflowVersions(r.Context(), workspace(r), r.PathValue("id"))
	if err != nil {
		storeError(w, err)
		return
	}
	if vs == nil {
		vs = []store.WorkflowVersion{}
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"data": vs})
}

// version reads the {version} path value; it answers 400 itself.
func version(w http.ResponseWriter, r *http.Request) (int, bool) {
	v, err := strconv.Atoi(r.PathValue("version"))
	if err != nil || v < 1 {
		apierr.Write(w, apierr.BadRequest("version", fmt.Sprintf("version %q is not a version number; versions count from 1", r.PathValue("version"))))
		return 0, false
	}
	return v, true
}

func (s *Server) getWorkflowVersion(w http.ResponseWriter, r *http.Request) {
	v, ok := version(w, r)
	if !ok {
		return
	}
	wv, err := s.opts.Runs.WorkflowVersion(r.Context(), workspace(r), r.PathValue("id"), v)
	if err != nil {
		storeError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, wv)
}

// restoreWorkflowVersion saves an old definition as a new version; the old
// versions stay as they are (controlplane.Service.RestoreWorkflow).
func (s *Server) restoreWorkflowVersion(w http.ResponseWriter, r *http.Request) {
	v, ok := version(w, r)
	if !ok {
		return
	}
	wf, err := s.opts.Runs.RestoreWorkflow(r.Context(), workspace(r), r.PathValue("id"), v)
	if errors.Is(err, store.ErrConflict) {
		storeErrorAbout(w, err, "workflow", wf.Name)
		return
	}
	if err != nil {
		workflowError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, wf)
}

// startRunBody is the body of POST /api/workflows/{id}/runs.
type startRunBody struct {
	Input any            `json:"input"`
	Vars  map[string]any `json:"vars"`
	// Version pins an older version; 0 runs the newest.
	Version int `json:"version"`
}

func (s *Server) startRun(w http.ResponseWriter, r *http.Request) {
	var b startRunBody
	if !s.decodeBody(w, r, &b) {
		return
	}
	if b.Version < 0 {
		apierr.Write(w, apierr.BadRequest("version", "version must be 1 or more, or left out to run the newest"))
		return
	}
	ctx, ws, id := r.Context(), workspace(r), r.PathValue("id")
	wf, err := s.opts.Runs.Workflow(ctx, ws, id)
	if err != nil {
		storeError(w, err)
		return
	}
	req := controlplane.StartRequest{WorkspaceID: ws, WorkflowID: wf.ID, WorkflowVersion: wf.Version, Definition: wf.Definition,
		Input: controlplane.RunInput{Input: b.Input, Vars: b.Vars}}
	if b.Version != 0 && b.Version != wf.Version {
		wv, err := s.opts.Runs.WorkflowVersion(ctx, ws, id, b.Version)
		if err != nil {
			storeError(w, err)
			return
		}
		req.WorkflowVersion, req.Definition = wv.Version, wv.Definition
	}
	plan, err := s.opts.Runs.Plan(req.Definition)
	if err != nil {
		workflowError(w, err)
		return
	}
	if reason := plan.Blocked(b.Input); reason != "" {
		s.blockRun(w, r, req, plan, reason)
		return
	}
	run, err := s.opts.Runs.Start(ctx, req)
	if err != nil {
		workflowError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusAccepted, run)
}

// blockRun records a run that the input hook's block_pattern refused
// (controlplane.Service.Block) and answers 422.
func (s *Server) blockRun(w http.ResponseWriter, r *http.Request, req controlplane.StartRequest, plan *workflow.Plan, reason string) {
	ctx := context.WithoutCancel(r.Context()) // record the refusal even if the client left
	if _, err := json.Marshal(req.Input); err != nil {
		apierr.Write(w, apierr.BadRequest("input", "input cannot be encoded: "+err.Error()))
		return
	}
	run, evs, err := s.opts.Runs.Block(ctx, req, plan, reason)
	if err != nil {
		storeError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusUnprocessableEntity, problemBody{Error: detail("run_blocked", "run_blocked", reason), Run: &run, Event: &evs[1]})
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := store.RunFilter{Status: store.RunStatus(q.Get("status")), WorkflowID: q.Get("workflow_id"), TriggerID: q.Get("trigger_id")}
	if f.Status != "" && !f.Status.Valid() {
		apierr.Write(w, apierr.BadRequest("status", fmt.Sprintf("status %q is unknown; use one of: %s", f.Status, strings.Join(runStatuses, ", "))))
		return
	}
	n, ok := queryLimit(w, r, 0, 1000)
	if !ok {
		return
	}
	f.Limit = n
	runs, err := s.opts.Runs.Runs(r.Context(), workspace(r), f)
	if err != nil {
		storeError(w, err)
		return
	}
	if runs == nil {
		runs = []store.Run{}
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"data": runs})
}

var runStatuses = []string{
	string(store.RunQueued), string(store.RunRunning), string(store.RunWaiting), string(store.RunSucceeded),
	string(store.RunFailed), string(store.RunFailedContract), string(store.RunCanceled), string(store.RunBlocked),
}

// checkpoint is a checkpoint in the API: its run is the enclosing one.
type checkpoint struct {
	Key       string          `json:"key"`
	NodeID    string          `json:"node_id"`
	Output    json.RawMessage `json:"output"`
	Handle    string          `json:"handle,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
}

// getRun answers the run with the first page of its checkpoints
// (?limit=, default 100, at most 1000) and, when there are more, the
// cursor of the next page in "next" for GET /api/runs/{id}/checkpoints.
// A run with 161k checkpoints once answered 15 MB here.
func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	ctx, ws, id := r.Context(), workspace(r), r.PathValue("id")
	limit, ok := queryLimit(w, r, store.DefaultCheckpointPage, store.MaxCheckpointPage)
	if !ok {
		return
	}
	run, err := s.opts.Runs.Run(ctx, ws, id)
	if err != nil {
		storeError(w, err)
		return
	}
	page, next, err := s.checkpointPage(ctx, ws, id, 0, limit)
	if err != nil {
		storeError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, struct {
		store.Run
		Checkpoints []checkpoint `json:"checkpoints"`
		Next        string       `json:"next,omitempty"`
	}{run, page, next})
}

// listCheckpoints answers a page of a run's checkpoints, in the order
// they were saved: ?cursor= is the "next" of the previous page (empty:
// from the first), ?limit= as for getRun.
func (s *Server) listCheckpoints(w http.ResponseWriter, r *http.Request) {
	ctx, ws, id := r.Context(), workspace(r), r.PathValue("id")
	limit, ok := queryLimit(w, r, store.DefaultCheckpointPage, store.MaxCheckpointPage)
	if !ok {
		return
	}
	var cursor int64
	if v := r.URL.Query().Get("cursor"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			apierr.Write(w, apierr.BadRequest("cursor", fmt.Sprintf("cursor %q is not one this API gave: pass the \"next\" of the previous page, or leave it out for the first", v)))
			return
		}
		cursor = n
	}
	page, next, err := s.checkpointPage(ctx, ws, id, cursor, limit)
	if err != nil {
		storeError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, struct {
		Data []checkpoint `json:"data"`
		Next string       `json:"next,omitempty"`
	}{page, next})
}

func (s *Server) checkpointPage(ctx context.Context, ws, runID string, cursor int64, limit int) ([]checkpoint, string, error) {
	cps, next, err := s.opts.Runs.CheckpointPage(ctx, ws, runID, cursor, limit)
	if err != nil {
		return nil, "", err
	}
	out := make([]checkpoint, 0, len(cps))
	for _, cp := range cps {
		out = append(out, checkpoint{Key: cp.Key, NodeID: cp.NodeID, Output: cp.Output, Handle: cp.Handle, CreatedAt: cp.CreatedAt})
	}
	var cur string
	if next > 0 {
		cur = strconv.FormatInt(next, 10)
	}
	return out, cur, nil
}

// resumedRun is a run with whether the request resumed it.
type resumedRun struct {
	store.Run
	Resumed bool `json:"resumed"`
}

func (s *Server) resumeRun(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Input any `json:"input"`
	}
	if !s.decodeBody(w, r, &b) {
		return
	}
	run, err := s.opts.Runs.Resume(r.Context(), workspace(r), r.PathValue("id"), b.Input)
	switch {
	case errors.Is(err, controlplane.ErrNotWaiting):
		// A second answer (a retried request, a double click) is harmless:
		// the run is shown as it is.
		httpapi.WriteJSON(w, http.StatusOK, resumedRun{Run: run, Resumed: false})
	case err != nil:
		storeError(w, err)
	default:
		httpapi.WriteJSON(w, http.StatusAccepted, resumedRun{Run: run, Resumed: true})
	}
}

func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	run, err := s.opts.Runs.Cancel(r.Context(), workspace(r), r.PathValue("id"))
	if err != nil {
		storeError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, run)
}

func (s *Server) rerunRun(w http.ResponseWriter, r *http.Request) {
	from := r.URL.Query().Get("from")
	if from == "" {
		apierr.Write(w, apierr.BadRequest("from", "from is required: the id of the node to re-run from, as in ?from=draft"))
		return
	}
	run, err := s.opts.Runs.Rerun(r.Context(), workspace(r), r.PathValue("id"), from)
	if err != nil {
		workflowError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusAccepted, run)
}

// runEvents streams a run's events as SSE: id is the event's seq, event its
// type, data the workflow.Event as JSON. A client that reconnects with
// Last-Event-ID (or ?after=) gets only the events after it. The stream ends
// with the run's run_finished event, or at once when the run waits or is
// final and nothing more is stored.
func (s *Server) runEvents(w http.ResponseWriter, r *http.Request) {
	ctx, ws, id := r.Context(), workspace(r), r.PathValue("id")
	var after int64
	param, v := "Last-Event-ID", r.Header.Get("Last-Event-ID")
	if v == "" {
		param, v = "after", r.URL.Query().Get("after")
	}
	if v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			apierr.Write(w, apierr.BadRequest(param, fmt.Sprintf("%s %q must be an event id (a number of 0 or more)", param, v)))
			return
		}
		after = n
	}
	// Unknown runs get a JSON 404, before the response becomes a stream.
	if _, err := s.opts.Runs.Run(ctx, ws, id); err != nil {
		storeError(w, err)
		return
	}
	sw := sse.NewWriter(w)
	// Send the headers now: a client (EventSource) sees the stream open
	// even while the run's first event is still minutes away.
	if err := sw.WriteComment("run " + id); err != nil {
		return
	}
	// A quiet node (a long model call, a slow API) would leave the
	// connection silent long enough for proxies to cut it: a comment goes
	// out every keep-alive interval.
	var mu sync.Mutex // serializes writes of the events and the keep-alives
	stopKeepAlive := sse.KeepAlive(sw, s.opts.SSEKeepAlive, &mu)
	var werr error
	err := s.opts.Runs.Events(ctx, ws, id, after, func(ev workflow.Event) bool {
		data, err := json.Marshal(ev)
		if err != nil {
			werr = err
			return false
		}
		mu.Lock()
		werr = sw.WriteEvent(sse.Event{ID: strconv.FormatInt(ev.Seq, 10), Event: string(ev.Type), Data: data})
		mu.Unlock()
		return werr == nil
	})
	stopKeepAlive()
	if err == nil {
		err = werr
	}
	if err != nil && ctx.Err() == nil {
		s.logger.WarnContext(r.Context(), "run_events_stream_failed", "run_id", id, "workspace_id", ws, "error", err)
	}
}
