package run

import (
	"context"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// WorkflowAgents is the workflow.AgentResolver of r: agent and router nodes
// get the workspace's agents (or inline ones built on its providers and
// tools) bound to the run, so their usage is recorded with surface
// "workflow", the run's id and actor "system:<actorID>" on whichever
// process executes the run. actorID names that process (its worker id);
// "" is "workflow". A run that acts for someone else (AgentCall.Actor,
// such as "trigger:<id>" for a run a trigger started) is accounted to
// "system:<that>" instead.
func (r *Runner) WorkflowAgents(actorID string) workflow.AgentResolver {
	if actorID == "" {
		actorID = "workflow"
	}
	return workflowAgents{r: r, actorID: actorID}
}

type workflowAgents struct {
	r       *Runner
	actorID string
}

func (w workflowAgents) caller(at workflow.AgentCall) Caller {
	id := w.actorID
	if at.Actor != "" {
		id = at.Actor
	}
	return Caller{Principal: Principal{WorkspaceID: at.WorkspaceID, Actor: ActorSystem, ActorID: id},
		Surface: SurfaceWorkflow, RunID: at.RunID, Workflow: at.Workflow}
}

func (w workflowAgents) Named(ctx context.Context, at workflow.AgentCall, name string) (*agent.Agent, error) {
	a, err := w.r.Agent(ctx, w.caller(at), name)
	if err != nil {
		return nil, err
	}
	return a.Runtime, nil
}

func (w workflowAgents) Inline(ctx context.Context, at workflow.AgentCall, spec workflow.InlineAgent) (*agent.Agent, error) {
	model := spec.Model
	if spec.Provider != "" {
		model = spec.Provider + "/" + spec.Model
	}
	a, err := w.r.Inline(ctx, w.caller(at), store.Agent{Model: model, Instructions: spec.Instructions, Tools: spec.Tools,
		Source: store.SourceAPI, Params: store.AgentParams{Temperature: spec.Temperature, MaxSteps: spec.MaxTurns}})
	if err != nil {
		return nil, err
	}
	return a.Runtime, nil
}
