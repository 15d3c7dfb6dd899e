package server

import (
	"context"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// agentResolver gives workflow agent nodes the platform's agents: named
// ones from the workspace, inline ones built on its providers and tools,
// with the same middleware chain as chat.
type agentResolver struct{ p *platform.Platform }

// NewAgentResolver returns the workflow.AgentResolver of p.
func NewAgentResolver(p *platform.Platform) workflow.AgentResolver { return agentResolver{p} }

func (r agentResolver) Named(ctx context.Context, workspaceID, name string) (*agent.Agent, error) {
	a, err := r.p.Agent(ctx, workspaceID, name)
	if err != nil {
		return nil, err
	}
	return a.Runtime, nil
}

func (r agentResolver) Inline(ctx context.Context, workspaceID string, spec workflow.InlineAgent) (*agent.Agent, error) {
	model := spec.Model
	if spec.Provider != "" {
		model = spec.Provider + "/" + spec.Model
	}
	a, err := r.p.InlineAgent(ctx, workspaceID, store.Agent{Model: model, Instructions: spec.Instructions, Tools: spec.Tools,
		Source: store.SourceAPI, Params: store.AgentParams{Temperature: spec.Temperature, MaxSteps: spec.MaxTurns}})
	if err != nil {
		return nil, err
	}
	return a.Runtime, nil
}
