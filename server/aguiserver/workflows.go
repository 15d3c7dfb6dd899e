package aguiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/internal/sse"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// interruptReason is the reason of the interrupt a human node raises.
const interruptReason = "input_required"

// serveWorkflow runs, or resumes, one workflow for one RunAgentInput: a
// durable run of package controlplane, the same as POST
// /api/workflows/{id}/runs starts, whose event stream (GET
// /api/runs/{id}/events) is translated to AG-UI events. Everything that
// can be refused before the run starts or resumes is a JSON error; after
// RUN_STARTED, failures are RUN_ERROR events. The run is durable: a
// client that leaves stops only the following, not the run.
func (s *Server) serveWorkflow(w http.ResponseWriter, r *http.Request) {
	if s.runs == nil {
		apierr.Write(w, &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer, Code: "workflows_not_configured",
			Message: "workflows are not configured on this server: it was started without a workflow run service"})
		return
	}
	ctx := r.Context()
	pr, _ := platform.PrincipalFrom(ctx)
	name := r.PathValue("name")
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	in, ae := decodeWorkflowInput(body)
	if ae != nil {
		apierr.Write(w, ae)
		return
	}
	wf, err := s.runs.WorkflowByName(ctx, pr.WorkspaceID, name)
	if errors.Is(err, store.ErrNotFound) {
		apierr.Write(w, apierr.NotFound("workflow_not_found", fmt.Sprintf("unknown workflow %q: the path must name a workflow listed by GET /api/workflows", name)))
		return
	}
	if err != nil {
		s.failWorkflow(w, pr, name, fmt.Errorf("aguiserver: read workflow %q: %w", name, err))
		return
	}
	def, err := workflow.Parse(wf.Definition)
	if err != nil {
		s.failWorkflow(w, pr, name, err)
		return
	}
	if in.Resume != nil {
		s.resumeWorkflow(ctx, w, pr, wf, def, in)
		return
	}
	run, err := s.runs.Start(ctx, controlplane.StartRequest{WorkspaceID: pr.WorkspaceID, WorkflowID: wf.ID, WorkflowVersion: wf.Version,
		Definition: wf.Definition, Input: controlplane.RunInput{Input: in.Input, Vars: in.Vars}})
	if err != nil {
		s.failWorkflow(w, pr, name, err)
		return
	}
	f := newFollower(w, in, wf.Name, run.ID, def)
	s.follow(ctx, f, pr.WorkspaceID, 0)
}

// resumeWorkflow answers the interrupt in.Resume names, exactly once:
// the run must be parked on the node the interrupt was raised at, and
// controlplane's Resume moves it from waiting to queued atomically, so a
// second answer of the same interrupt is refused with 409.
func (s *Server) resumeWorkflow(ctx context.Context, w http.ResponseWriter, pr platform.Principal, wf store.Workflow, def *workflow.Definition, in workflowInput) {
	entry := in.Resume
	runID, key, ok := strings.Cut(entry.InterruptID, ":")
	notFound := apierr.NotFound("interrupt_not_found", fmt.Sprintf("resume[0].interruptId %q names no interrupt of workflow %q: pass the id of the interrupt the previous run finished with", entry.InterruptID, wf.Name))
	if !ok || runID == "" || key == "" {
		apierr.Write(w, notFound)
		return
	}
	run, err := s.runs.Run(ctx, pr.WorkspaceID, runID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && run.WorkflowID != wf.ID) {
		apierr.Write(w, notFound)
		return
	}
	if err != nil {
		s.failWorkflow(w, pr, wf.Name, err)
		return
	}
	if run.Status != store.RunWaiting || run.WaitingNode != key {
		apierr.Write(w, notOpen(entry.InterruptID, run))
		return
	}
	f := newFollower(w, in, wf.Name, run.ID, def)
	after, err := s.replay(ctx, f, pr.WorkspaceID, run.ID)
	if err != nil {
		s.failWorkflow(w, pr, wf.Name, err)
		return
	}
	if entry.Status == resumeCancelled {
		got, err := s.runs.Cancel(ctx, pr.WorkspaceID, run.ID)
		if err != nil {
			s.failWorkflow(w, pr, wf.Name, err)
			return
		}
		if got.Status != store.RunCanceled {
			apierr.Write(w, notOpen(entry.InterruptID, got))
			return
		}
		f.cancelled(key)
		return
	}
	var answer any
	if p := entry.Payload; len(p) > 0 {
		if err := json.Unmarshal(p, &answer); err != nil {
			apierr.Write(w, apierr.BadRequest("resume[0].payload", "resume[0].payload: "+jsonProblem(err)))
			return
		}
	}
	got, err := s.runs.Resume(ctx, pr.WorkspaceID, run.ID, answer)
	switch {
	case errors.Is(err, controlplane.ErrNotWaiting):
		apierr.Write(w, notOpen(entry.InterruptID, got))
		return
	case errors.Is(err, controlplane.ErrDeadlinePassed):
		apierr.Write(w, &apierr.Error{Status: http.StatusConflict, Type: apierr.TypeInvalidRequest, Code: "interrupt_expired",
			Message: fmt.Sprintf("interrupt %q expired: %s", entry.InterruptID, err)})
		return
	case err != nil:
		s.failWorkflow(w, pr, wf.Name, err)
		return
	}
	// The answer is the human node's saved output: the resumed execution
	// replays it without events, so the node is done from here on.
	f.nodes[nodeOfKey(key)] = statusSucceeded
	s.follow(ctx, f, pr.WorkspaceID, after)
}

// notOpen is the 409 of an interrupt that is no longer open.
func notOpen(id string, run store.Run) *apierr.Error {
	msg := fmt.Sprintf("interrupt %q is not open: its run %s is %s", id, run.ID, run.Status)
	if run.Status == store.RunWaiting {
		msg = fmt.Sprintf("interrupt %q is not open: its run %s now waits at node %q; answer the interrupt the last run finished with", id, run.ID, run.WaitingNode)
	} else if run.Status == store.RunQueued || run.Status == store.RunRunning || run.Status.Final() {
		msg += " (the interrupt was answered already, or the run ended)"
	}
	return &apierr.Error{Status: http.StatusConflict, Type: apierr.TypeInvalidRequest, Code: "interrupt_not_open", Message: msg}
}

// nodeOfKey is the node id of an execution key: "l#2/it[3]/draft" →
// "draft".
func nodeOfKey(key string) string {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[i+1:]
	}
	return key
}

// replay brings f's node states up to date with the run's stored events
// and returns the last event's seq. Events ends a read at each
// run_finished (one per execution: a resumed run has several), so it
// reads again from the last seq until nothing is left; the run is
// parked, so its events do not change meanwhile.
func (s *Server) replay(ctx context.Context, f *follower, workspaceID, runID string) (int64, error) {
	var after int64
	for {
		n := 0
		err := s.runs.Events(ctx, workspaceID, runID, after, func(ev workflow.Event) bool {
			n++
			after = ev.Seq
			f.track(ev)
			return true
		})
		if err != nil {
			return after, fmt.Errorf("aguiserver: read run %s events: %w", runID, err)
		}
		if n == 0 {
			return after, nil
		}
	}
}

// follow streams the run's events after seq after as AG-UI events, from
// RUN_STARTED and the state snapshot to RUN_FINISHED or RUN_ERROR.
func (s *Server) follow(ctx context.Context, f *follower, workspaceID string, after int64) {
	if err := f.start(); err != nil {
		return
	}
	defer sse.KeepAlive(f.e.sse, s.keepAliveEvery, &f.mu)()
	var end *workflow.Event
	var werr error
	err := s.runs.Events(ctx, workspaceID, f.runID, after, func(ev workflow.Event) bool {
		if ev.Type == workflow.EventRunFinished {
			end = &ev
			return false
		}
		f.mu.Lock()
		werr = f.event(ev)
		f.mu.Unlock()
		return werr == nil
	})
	if werr != nil || ctx.Err() != nil {
		return // the client left; the run goes on
	}
	if end != nil {
		s.settle(ctx, workspaceID, f.runID)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		s.logger.WarnContext(ctx, "agui_workflow_follow_failed", "run_id", f.runID, "workspace_id", workspaceID, "error", err)
		_ = f.e.runError("the run's events could not be read: "+err.Error(), "internal")
		return
	}
	if end == nil {
		// The stream ended without run_finished (its events were not all
		// saved): the row has the outcome.
		row, err := s.runs.Run(ctx, workspaceID, f.runID)
		if err != nil || (!row.Status.Final() && row.Status != store.RunWaiting) {
			_ = f.e.runError(fmt.Sprintf("the event stream of run %s ended before the run did", f.runID), "internal")
			return
		}
		end = &workflow.Event{Type: workflow.EventRunFinished, Status: string(row.Status), Error: row.Error, Key: row.WaitingNode, NodeID: nodeOfKey(row.WaitingNode)}
		if len(row.Output) > 0 {
			_ = json.Unmarshal(row.Output, &end.Output)
		}
	}
	_ = f.finish(*end)
}

// settle waits (up to settleWait) until the run's row records the
// outcome its run_finished event announced: the executor sends the event
// first and updates the row after, and a client that resumes the
// interrupt the moment it reads RUN_FINISHED must find the run waiting.
func (s *Server) settle(ctx context.Context, workspaceID, runID string) {
	deadline := time.Now().Add(settleWait)
	for {
		run, err := s.runs.Run(ctx, workspaceID, runID)
		if err != nil || run.Status.Final() || run.Status == store.RunWaiting || time.Now().After(deadline) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// settleWait bounds settle: the row is written right after the event.
const settleWait = 5 * time.Second

// failWorkflow answers an error before the stream began.
func (s *Server) failWorkflow(w http.ResponseWriter, pr platform.Principal, name string, err error) {
	ae := workflowAPIError(err)
	apierr.Write(w, ae)
	if ae.Status >= 500 {
		s.logger.Warn("agui_workflow_refused", "workspace_id", pr.WorkspaceID, "workflow", name, "error", err)
	}
}

// workflowAPIError maps the errors of starting or resuming a run.
func workflowAPIError(err error) *apierr.Error {
	var ae *apierr.Error
	var inv *workflow.InvalidError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &inv):
		return &apierr.Error{Status: http.StatusUnprocessableEntity, Type: "invalid_workflow", Code: "invalid_workflow",
			Message: "the stored workflow does not validate; fix it and save it again: " + inv.Error()}
	case errors.Is(err, controlplane.ErrStorageQuota):
		return &apierr.Error{Status: http.StatusUnprocessableEntity, Type: apierr.TypeInvalidRequest, Code: "storage_quota_exceeded", Message: err.Error()}
	}
	return &apierr.Error{Status: http.StatusInternalServerError, Type: apierr.TypeServer, Code: "internal", Message: "internal error"}
}
