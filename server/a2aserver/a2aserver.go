// Package a2aserver publishes the agents of the caller's workspace over
// A2A (package a2a's Server) at /a2a: GET /a2a lists them, /a2a/{agent} is
// one agent's JSON-RPC endpoint and /a2a/{agent}/.well-known/agent-card.json
// its card. Every route needs the API key: its Mounts ask the server to
// put them behind its API-key authentication, and the caller's workspace
// comes from that key. Agents run through package run as on every
// surface, with the key as actor.
//
//	a, err := a2aserver.New(p, &a2aserver.Options{Runner: runner})
//	defer a.Stop()
//	srv, err := server.New(p, &server.Options{Mounts: a.Mounts()})
package a2aserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/agentcraftlab/agentcraft/a2a"
	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/run"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
)

// Options configure a Server.
type Options struct {
	// Auth is the serving server's authentication mode,
	// httpapi.AuthAPIKey (default) or httpapi.AuthNone; the agent cards
	// declare the bearer scheme unless it is none.
	Auth string
	// Runner runs the agents. Default: run.New(p, nil).
	Runner *run.Runner
	// MaxBodyBytes caps a request. Default 8 MiB.
	MaxBodyBytes int64
	// Version is the agents' version in their cards.
	Version string
	// Logger receives failures. Default: discard.
	Logger *slog.Logger
}

// Server is the A2A handler of /a2a; stop it on shutdown to end the tasks
// still running.
type Server struct {
	a2a *a2a.Server
}

// New returns the A2A server of p's agents.
func New(p *platform.Platform, opts *Options) (*Server, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Runner == nil {
		o.Runner = run.New(p, nil)
	}
	srv, err := a2a.NewServer(&a2a.ServerOptions{Agents: a2aAgents{p: p, runner: o.Runner}, Bearer: o.Auth != httpapi.AuthNone,
		MaxBodyBytes: o.MaxBodyBytes, Version: o.Version, Logger: o.Logger})
	if err != nil {
		return nil, fmt.Errorf("a2aserver: %w", err)
	}
	return &Server{a2a: srv}, nil
}

// ServeHTTP serves /a2a and below; the request must carry the caller's
// platform.Principal (the API-key middleware sets it).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.a2a.ServeHTTP(w, r) }

// Mounts are /a2a and /a2a/, both behind the API key.
func (s *Server) Mounts() []httpapi.Mount {
	return []httpapi.Mount{{Pattern: "/a2a", Handler: s, Permission: identity.PermChat}, {Pattern: "/a2a/", Handler: s, Permission: identity.PermChat}}
}

// Stop ends the tasks still running and waits for them. Idempotent.
func (s *Server) Stop() { s.a2a.Stop() }

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

// Describe reads the agent from the platform, not through the Runner: a
// card describes an agent and runs nothing, so a workspace that has spent
// its budget still reads it (the Runner refuses such a workspace when it
// asks to run one, in Get).
func (a a2aAgents) Describe(ctx context.Context, name string) (a2a.AgentInfo, error) {
	def, err := a.p.Agent(ctx, a.workspace(ctx), name)
	if errors.Is(err, run.ErrUnknownAgent) {
		return a2a.AgentInfo{}, fmt.Errorf("%w %q", a2a.ErrUnknownAgent, name)
	}
	if err != nil {
		return a2a.AgentInfo{}, err
	}
	return a2a.AgentInfo{Name: name, Description: agentDescription(name, def.Row.Model)}, nil
}

func (a a2aAgents) Get(ctx context.Context, name string) (*agent.Agent, a2a.AgentInfo, error) {
	pr, _ := platform.PrincipalFrom(ctx)
	ag, err := a.runner.Agent(ctx, run.Caller{Principal: run.PrincipalOf(pr), Surface: run.SurfaceA2A}, name)
	if errors.Is(err, run.ErrUnknownAgent) {
		return nil, a2a.AgentInfo{}, fmt.Errorf("%w %q", a2a.ErrUnknownAgent, name)
	}
	if err != nil && llm.KindOf(err) == llm.KindQuota { // a spent budget: 429 with its message, as on /v1
		ae := apierr.FromLLM(err)
		return nil, a2a.AgentInfo{}, &a2a.RefusalError{Status: ae.Status, Message: ae.Message, Err: err}
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
