package nodes

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentcraftlab/agentcraft/autonomous"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// autonomousKind runs an autonomous ReAct agent toward a goal: its own
// steps, sub-agents and tools, within a budget (package autonomous). Its
// model calls, tool calls and answers are journal entries of the node's
// execution, so a run parked on ask_user or an approval — or killed with
// its process — runs the node again from the journal on resume, repeating
// nothing.
func autonomousKind() workflow.Kind {
	return workflow.Kind{
		Type:               "autonomous",
		Title:              "Autonomous agent",
		Category:           workflow.CategoryAgents,
		SideEffects:        true, // through the tools it decides to call
		Rules:              []string{"set agent (a workspace agent's name) or model (an inline agent), not both"},
		Example:            map[string]any{"goal": "Summarise {{input}} in three bullet points", "model": "gpt-4.1-mini"},
		Doc:                "Works toward a goal by itself (ReAct with sub-agents), within a budget; asks a person when it must.",
		Execute:            execAutonomous,
		IsExecutable:       true,
		RequiresImperative: true,
		IsAgentLike:        true,
		Config: []workflow.ConfigKey{
			{Name: "goal", Type: workflow.TypeTemplate, Required: true, Doc: "what the agent must achieve"},
			{Name: "agent", Type: workflow.TypeString, NamesAgent: true, Doc: "workspace agent whose model, instructions and tools the executor uses; or configure one inline with model"},
			{Name: "provider", Type: workflow.TypeString, Doc: "provider of an inline executor"},
			{Name: "model", Type: workflow.TypeString, Doc: "model of an inline executor, such as \"gpt-4.1-mini\""},
			{Name: "instructions", Type: workflow.TypeTemplate, Doc: "system instructions of an inline executor"},
			{Name: "tools", Type: workflow.TypeArray, Elem: &workflow.ConfigKey{Type: workflow.TypeString, Doc: "tool name"}, Doc: "tools of an inline executor"},
			{Name: "planner", Type: workflow.TypeString, Doc: "the planner model (provider/model) that reflects, reviews and summarises; default: the executor's model"},
			{Name: "max_steps", Type: workflow.TypeInteger, Min: atLeast(1), Default: 20, Doc: "most model calls of each agent of the tree"},
			{Name: "max_tokens", Type: workflow.TypeInteger, Min: atLeast(1), Doc: "token budget of the whole tree; default none"},
			{Name: "max_time", Type: workflow.TypeDuration, Doc: "wall-time budget, parked time excluded; default none"},
			{Name: "max_depth", Type: workflow.TypeInteger, Min: atLeast(1), Default: 2, Doc: "deepest sub-agent nesting"},
			{Name: "max_sub_agents", Type: workflow.TypeInteger, Min: atLeast(1), Default: 8, Doc: "most sub-agents started"},
			{Name: "auto_approve", Type: workflow.TypeArray, Elem: &workflow.ConfigKey{Type: workflow.TypeString, Doc: "tool name"}, Doc: "medium or high tools that run without a person's decision — until a tool result is flagged as prompt injection"},
		},
		Check: func(cfg map[string]any, at string) []workflow.Problem {
			_, named := cfg["agent"]
			_, inline := cfg["model"]
			switch {
			case named && inline:
				return []workflow.Problem{{Path: at + ".model", Message: "both agent and model are set", Hint: "use agent for a workspace agent, or model for an inline executor, not both"}}
			case !named && !inline:
				return []workflow.Problem{{Path: at + ".agent", Message: "missing agent or model", Hint: "set agent to a workspace agent's name, or model to configure the executor inline"}}
			}
			return nil
		},
	}
}

// execAutonomous runs the ReAct executor with the node's execution as its
// journal. A question or approval parks the run (Wait with the journal
// entry the answer becomes); the answer is the node's output; every step
// of the tree is an agent_step event.
func execAutonomous(ctx context.Context, x *workflow.Exec) (workflow.Result, error) {
	if x.Services.Agents == nil {
		return workflow.Result{}, fmt.Errorf("autonomous nodes need an agent resolver, and none is configured")
	}
	goalV, err := x.ConfigTemplate("goal", "")
	if err != nil {
		return workflow.Result{}, err
	}
	goal, err := textOf(goalV)
	if err != nil {
		return workflow.Result{}, err
	}
	a, err := resolveAgent(ctx, x)
	if err != nil {
		return workflow.Result{}, err
	}
	cfg := autonomous.Config{Agent: a, Journal: x, Limits: autonomous.Limits{
		MaxSteps:     intOr(x.Node.Config["max_steps"], 0),
		MaxTokens:    intOr(x.Node.Config["max_tokens"], 0),
		MaxDepth:     intOr(x.Node.Config["max_depth"], 0),
		MaxSubAgents: intOr(x.Node.Config["max_sub_agents"], 0),
	}, Logger: x.Services.Logger}
	if s, ok := x.Node.Config["max_time"].(string); ok {
		if cfg.Limits.MaxTime, err = time.ParseDuration(s); err != nil {
			return workflow.Result{}, fmt.Errorf("config.max_time: %w", err)
		}
	}
	if ts, ok := x.Node.Config["auto_approve"].([]any); ok {
		for _, t := range ts {
			if s, ok := t.(string); ok {
				cfg.AutoApprove = append(cfg.AutoApprove, s)
			}
		}
	}
	if ref, ok := x.Node.Config["planner"].(string); ok && ref != "" {
		pa, err := x.Services.Agents.Inline(ctx, x.AgentCall(), workflow.InlineAgent{Model: ref})
		if err != nil {
			return workflow.Result{}, fmt.Errorf("config.planner: %w", err)
		}
		cfg.Planner = autonomous.Model{Model: pa.Model, ID: pa.ModelID}
	}
	if x.Emitting() {
		cfg.Emit = func(ev autonomous.Event) {
			x.Emit(workflow.Event{Type: workflow.EventAgentStep, Text: ev.Text, Data: ev})
		}
	}
	if x.Services.Actions != nil {
		cfg.Human = taskHuman{x: x}
	}
	e, err := autonomous.New(cfg)
	if err != nil {
		return workflow.Result{}, err
	}
	out, err := e.Run(ctx, goal)
	if err != nil {
		return workflow.Result{}, err
	}
	if x.Emitting() {
		x.Emit(workflow.Event{Type: workflow.EventUsage, Usage: &out.Usage})
		if len(out.Trace) > 0 {
			x.Emit(workflow.Event{Type: workflow.EventAgentStep, Data: map[string]any{"type": "trace", "trace": out.Trace, "goal": goal}})
		}
	}
	if q := out.Wait; q != nil {
		w := &workflow.Wait{Prompt: q.Prompt, Journal: q.Entry, From: q.Agent, ApprovalID: q.ApprovalID, Deadline: q.Deadline}
		if q.Kind == "approval" {
			w.FormSchema = autonomous.ApprovalForm
		}
		return workflow.Result{Wait: w}, nil
	}
	if out.Status == autonomous.StatusDone && x.Services.Plans != nil {
		// The delegated work of a run that reached its goal, as a plan the
		// next planning for a similar goal gets as its reference.
		if p := autonomous.PlanOfTrace(goal, out.Trace); p != nil {
			raw, err := json.Marshal(p)
			if err == nil {
				err = x.Services.Plans.KeepPlan(ctx, x.WorkspaceID, raw)
			}
			if err != nil {
				x.Services.Logger.WarnContext(ctx, "plan_not_kept", "run_id", x.RunID, "node_id", x.Node.ID, "error", err)
			}
		}
	}
	return workflow.Result{Output: out.Answer}, nil
}

// taskHuman puts the approvals of an autonomous run where every other
// approval is (P0): the task service's approvals, shown in the inbox and
// sent to the task's channel (LINE), decided by a person with the role for
// the capability; the decision resumes the run (task.Service.Decide),
// which asks again and finds it approved. Questions (ask_user) are
// answered through the run: POST /api/runs/{id}/resume.
type taskHuman struct{ x *workflow.Exec }

func (h taskHuman) Answer(ctx context.Context, q *autonomous.Question) (any, bool, error) {
	if q.Kind != "approval" {
		ans, ok := h.x.Recall(q.Entry)
		return ans, ok, nil
	}
	// Only the approval decides, never an answer in the journal: POST
	// /api/runs/{id}/resume needs the run permission, not the approver's
	// role, so whatever it recorded must not approve a call.
	// Actions.Approval is idempotent per step and returns the decision.
	x := h.x
	st, err := x.Services.Actions.Approval(ctx, workflow.ApprovalRequest{WorkspaceID: x.WorkspaceID, RunID: x.RunID, NodeID: x.Node.ID,
		StepKey: x.Key + workflow.JournalSep + q.Entry, Summary: q.Prompt, Capability: q.Capability})
	if err != nil {
		return nil, false, err
	}
	switch st.Status {
	case workflow.ApprovalPending:
		q.ApprovalID, q.Deadline = st.ID, st.ExpiresAt
		return nil, false, nil
	case workflow.ApprovalApproved:
		return map[string]any{"approved": true, "approval_id": st.ID}, true, nil
	}
	return map[string]any{"approved": false, "reason": "the approval was " + st.Status}, true, nil
}
