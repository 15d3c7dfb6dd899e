package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentcraftlab/agentcraft/a2a"
	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/run"
)

// a2aAgents publishes the agents of the API key's workspace over A2A. The
// cards, like the rest of the API, need the key: the workspace whose agents
// they describe is known only from it, and agent names are workspace data.
// The cards declare the bearer scheme so that A2A clients know to send it.
type a2aAgents struct {
	p      *platform.Platform
	runner *run.Runner
}

func (a a2aAgents) workspace(ctx context.Context) string {
	pr, _ := platform.PrincipalFrom(ctx)
	return pr.WorkspaceID
}

func (a a2aAgents) List(ctx context.Context) ([]a2a.AgentInfo, error) {
	rows, err := a.p.Agents(ctx, a.workspace(ctx))
	if err != nil {
		return nil, err
	}
	out := make([]a2a.AgentInfo, 0, len(rows))
	for _, r := range rows {
		out = append(out, a2a.AgentInfo{Name: r.Name, Description: agentDescription(r.Name, r.Model)})
	}
	return out, nil
}

func (a a2aAgents) Get(ctx context.Context, name string) (*agent.Agent, a2a.AgentInfo, error) {
	pr, _ := platform.PrincipalFrom(ctx)
	ag, err := a.runner.Agent(ctx, run.Caller{Principal: run.PrincipalOf(pr), Surface: run.SurfaceA2A}, name)
	if errors.Is(err, run.ErrUnknownAgent) {
		return nil, a2a.AgentInfo{}, fmt.Errorf("%w %q", a2a.ErrUnknownAgent, name)
	}
	if err != nil {
		return nil, a2a.AgentInfo{}, err
	}
	// The runtime is bound to the caller: the task runs detached from
	// the request, and its usage is still the key's.
	return ag.Runtime, a2a.AgentInfo{Name: name, Description: agentDescription(name, ag.Def.Row.Model)}, nil
}

func (a a2aAgents) Scope(ctx context.Context) string { return a.workspace(ctx) }

// agentDescription describes an agent without its instructions, which may
// hold what the workspace keeps to itself.
func agentDescription(name, model string) string {
	return "AgentCraft agent " + name + " (" + model + ")"
}
