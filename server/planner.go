package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/autonomous"
	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/internal/sse"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/run"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// registerPlanner adds Flow mode: POST /api/planner/stream plans a goal
// with the planner model, runs the plan as a durable workflow run and
// streams plan, steps and answer; POST /api/runs/{id}/crystallize saves a
// finished run's plan as an ordinary workflow.
func (s *Server) registerPlanner() {
	s.handle("POST /api/planner/stream", identity.PermRun, s.needRuns(s.plannerStream))
	s.handle("POST /api/runs/{id}/crystallize", identity.PermEdit, s.needRuns(s.crystallize))
}

type plannerBody struct {
	// Goal is what the plan must reach; it is also the run's input.
	Goal string `json:"goal"`
	// Model is the executor model of the plan's agent steps
	// ("provider/model"); Planner the strong model that plans (default
	// Model).
	Model   string `json:"model"`
	Planner string `json:"planner"`
	// Tools are the tools the plan's steps may use.
	Tools []string `json:"tools"`
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

// flowName names a plan's workflow after its goal.
func flowName(goal string) string {
	s := strings.Trim(slugRE.ReplaceAllString(strings.ToLower(goal), "-"), "-")
	if len(s) > 48 {
		s = strings.TrimRight(s[:48], "-")
	}
	if s == "" {
		s = "plan"
	}
	return "flow-" + s
}

// plannerStream answers with SSE: "plan" (the checked FlowPlan and its
// repairs, and whether a remembered plan was the reference), "run" (the
// run's id), one "step" per finished step, "waiting" when a human step
// parks the run, then "answer" (status and output), or "error".
func (s *Server) plannerStream(w http.ResponseWriter, r *http.Request) {
	var b plannerBody
	if !s.decodeBody(w, r, &b) {
		return
	}
	b.Goal = strings.TrimSpace(b.Goal)
	switch {
	case b.Goal == "":
		apierr.Write(w, apierr.BadRequest("goal", "goal is required: say what the plan must reach"))
		return
	case !strings.Contains(b.Model, "/"):
		apierr.Write(w, apierr.BadRequest("model", `model is required as "provider/model": the executor model of the plan's agent steps`))
		return
	case b.Planner != "" && !strings.Contains(b.Planner, "/"):
		apierr.Write(w, apierr.BadRequest("planner", `planner must be "provider/model"`))
		return
	}
	ctx := r.Context()
	pr := principal(r)
	planner, err := s.runner.Inline(ctx, run.Caller{Principal: pr, Surface: run.SurfacePlanner}, store.Agent{Model: cmp.Or(b.Planner, b.Model), Source: store.SourceAPI})
	if err != nil {
		apierr.Write(w, apierr.BadRequest("planner", err.Error()))
		return
	}
	var ref *autonomous.FlowPlan
	if s.opts.Plans != nil {
		if ref, err = s.opts.Plans.Closest(ctx, pr.WorkspaceID, b.Goal); err != nil {
			s.logger.WarnContext(r.Context(), "plan_memory_failed", "workspace_id", pr.WorkspaceID, "error", err)
		}
	}
	sw := sse.NewWriter(w)
	// The planner's call and a long step leave the stream quiet; a
	// comment goes out every keep-alive interval, as on /api/runs/{id}/events.
	var mu sync.Mutex // serializes the events and the keep-alives
	defer sse.KeepAlive(sw, s.opts.SSEKeepAlive, &mu)()
	send := func(event string, v any) bool {
		data, _ := json.Marshal(v)
		mu.Lock()
		defer mu.Unlock()
		return sw.WriteEvent(sse.Event{Event: event, Data: data}) == nil
	}
	fail := func(err error) {
		body := map[string]any{"message": err.Error()}
		if pe := (*autonomous.PlanError)(nil); errors.As(err, &pe) {
			body["problems"] = pe.Problems
		}
		send("error", body)
	}
	checked, _, err := autonomous.Plan(ctx, autonomous.Model{Model: directModel{planner}, ID: planner.Def.ModelID}, b.Goal, b.Tools, ref)
	if err != nil {
		fail(err)
		return
	}
	def, err := autonomous.Definition(checked.Plan, flowName(b.Goal), autonomous.ExecutorModel(b.Model), s.opts.Runs.Engine().Registry())
	if err != nil {
		fail(err)
		return
	}
	if !send("plan", map[string]any{"plan": checked.Plan, "repairs": checked.Repairs, "reference": ref != nil}) {
		return
	}
	raw, _ := json.Marshal(def)
	rn, err := s.opts.Runs.Start(ctx, controlplane.StartRequest{WorkspaceID: pr.WorkspaceID, Definition: raw, Input: controlplane.RunInput{Input: b.Goal}})
	if err != nil {
		fail(err)
		return
	}
	if !send("run", map[string]any{"run_id": rn.ID}) {
		return
	}
	kinds := map[string]string{}
	for _, n := range checked.Plan.Nodes {
		kinds[n.ID] = n.Kind
	}
	err = s.opts.Runs.Events(ctx, pr.WorkspaceID, rn.ID, 0, func(ev workflow.Event) bool {
		switch {
		case ev.Type == workflow.EventNodeFinished && kinds[ev.NodeID] != "":
			return send("step", map[string]any{"node_id": ev.NodeID, "kind": kinds[ev.NodeID], "output": ev.Output, "duration_ms": ev.DurationMS})
		case ev.Type == workflow.EventWaiting:
			return send("waiting", map[string]any{"node_id": ev.NodeID, "wait": ev.Data, "run_id": rn.ID})
		case ev.Type == workflow.EventRunFinished:
			return send("answer", map[string]any{"run_id": rn.ID, "status": ev.Status, "output": ev.Output, "error": ev.Error})
		}
		return true
	})
	if err != nil && ctx.Err() == nil {
		fail(err)
	}
}

// directModel is a bound agent's bare model as an llm.Model whose calls
// are metered and recorded as runs of the agent (run.Agent.Direct).
type directModel struct{ a *run.Agent }

func (d directModel) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	res, err := agent.Collect(d.a.Direct(ctx, req, true))
	if err != nil {
		return llm.Response{}, err
	}
	return llm.Response{Message: res.Message, FinishReason: res.FinishReason, Usage: res.Usage}, nil
}

func (d directModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	resp, err := d.Generate(ctx, req)
	if err != nil {
		return func(yield func(llm.Event, error) bool) { yield(llm.Event{}, err) }
	}
	return llm.Events(resp)
}

type crystallizeBody struct {
	// Name is the new workflow's; default: the run's definition's name.
	Name string `json:"name"`
}

// crystallize saves the definition of a succeeded run as a new workflow
// (version 1): a Flow run becomes an ordinary, editable workflow that runs
// again with no planner call. Its plan is kept in the execution memory.
func (s *Server) crystallize(w http.ResponseWriter, r *http.Request) {
	var b crystallizeBody
	if r.ContentLength != 0 && !s.decodeBody(w, r, &b) {
		return
	}
	ctx, ws, id := r.Context(), workspace(r), r.PathValue("id")
	rn, err := s.opts.Runs.Run(ctx, ws, id)
	if err != nil {
		storeError(w, err)
		return
	}
	if rn.Status != store.RunSucceeded {
		apierr.Write(w, &apierr.Error{Status: http.StatusConflict, Type: apierr.TypeInvalidRequest, Code: "run_not_succeeded",
			Message: fmt.Sprintf("run %s is %s: only a succeeded run can be crystallized into a workflow", rn.ID, rn.Status)})
		return
	}
	def, err := workflow.Parse(rn.Definition)
	if err != nil {
		workflowError(w, err)
		return
	}
	if b.Name != "" {
		def.Name = b.Name
	}
	def.Version = "1"
	wf, err := s.opts.Runs.CreateWorkflow(ctx, ws, def)
	if err != nil {
		storeErrorAbout(w, err, "workflow", def.Name)
		return
	}
	if s.opts.Plans != nil && def.Description != "" {
		if err := s.opts.Plans.Remember(ctx, ws, autonomous.PlanOfDefinition(def)); err != nil {
			s.logger.WarnContext(r.Context(), "plan_memory_failed", "workspace_id", ws, "error", err)
		}
	}
	httpapi.WriteJSON(w, http.StatusCreated, wf)
}
