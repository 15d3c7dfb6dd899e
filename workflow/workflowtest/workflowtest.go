// Package workflowtest helps test workflows: an AgentResolver whose agents
// talk to a fake LLM server (llm/llmtest) over the real OpenAI wire, and
// an engine with the built-in node kinds.
package workflowtest

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/llm/openai"
	"github.com/agentcraftlab/agentcraft/tool"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/nodes"
)

// Resolver resolves agents onto one fake LLM server. Named agents must be
// added with Add; inline agents get the model and instructions of their
// node.
type Resolver struct {
	LLM   *llmtest.Server
	model *openai.Client
	tools *tool.Registry

	mu    sync.Mutex
	named map[string]string // name → instructions
}

// NewResolver starts a fake OpenAI server with the scripted turns and
// returns a resolver on it.
func NewResolver(t testing.TB, turns ...llmtest.Turn) *Resolver {
	t.Helper()
	srv := llmtest.NewOpenAI(t, turns...)
	m, err := openai.New(&openai.Options{Name: "fake", BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	reg := &tool.Registry{}
	if err := tool.RegisterBuiltins(reg); err != nil {
		t.Fatal(err)
	}
	return &Resolver{LLM: srv, model: m, tools: reg, named: map[string]string{}}
}

// Add defines a named agent.
func (r *Resolver) Add(name, instructions string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.named[name] = instructions
}

// Named implements workflow.AgentResolver.
func (r *Resolver) Named(_ context.Context, _ workflow.AgentCall, name string) (*agent.Agent, error) {
	r.mu.Lock()
	instr, ok := r.named[name]
	r.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("no agent named %q", name)
	}
	return &agent.Agent{Name: name, Model: r.model, ModelID: "fake-model", Instructions: instr}, nil
}

// Inline implements workflow.AgentResolver.
func (r *Resolver) Inline(_ context.Context, _ workflow.AgentCall, spec workflow.InlineAgent) (*agent.Agent, error) {
	a := &agent.Agent{Name: "inline", Model: r.model, ModelID: spec.Model, Instructions: spec.Instructions, Temperature: spec.Temperature, MaxSteps: spec.MaxTurns}
	for _, name := range spec.Tools {
		t, ok := r.tools.Get(name)
		if !ok {
			return nil, fmt.Errorf("unknown tool %q", name)
		}
		a.Tools = append(a.Tools, t)
	}
	return a, nil
}

// Engine returns an engine with the built-in kinds and svc (Agents and HTTP
// as given; Transform defaulted).
func Engine(t testing.TB, svc workflow.Services) *workflow.Engine {
	t.Helper()
	reg := workflow.NewRegistry()
	if err := nodes.RegisterBuiltins(reg); err != nil {
		t.Fatal(err)
	}
	if svc.HTTP == nil {
		svc.HTTP = http.DefaultClient
	}
	return workflow.NewEngine(reg, svc, nil)
}

// Parse parses and prepares a definition, failing the test on error.
func Parse(t testing.TB, e *workflow.Engine, src string) *workflow.Plan {
	t.Helper()
	def, err := workflow.Parse([]byte(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	p, err := e.Prepare(def)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	return p
}

// Recorder collects a run's events.
type Recorder struct {
	mu     sync.Mutex
	Events []workflow.Event
}

// Emit appends ev; pass it as Request.Emit.
func (r *Recorder) Emit(ev workflow.Event) {
	r.mu.Lock()
	r.Events = append(r.Events, ev)
	r.mu.Unlock()
}

// Types lists the event types of node (all when node is "").
func (r *Recorder) Types(node string) []workflow.EventType {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []workflow.EventType
	for _, ev := range r.Events {
		if node == "" || ev.NodeID == node {
			out = append(out, ev.Type)
		}
	}
	return out
}

// MemoryCheckpoints is an in-memory Checkpointer that counts saves.
type MemoryCheckpoints struct {
	mu    sync.Mutex
	Saved map[string]workflow.Saved
	Order []string
}

// Load implements workflow.Checkpointer.
func (m *MemoryCheckpoints) Load(context.Context) (map[string]workflow.Saved, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]workflow.Saved, len(m.Saved))
	for k, v := range m.Saved {
		out[k] = v
	}
	return out, nil
}

// Save implements workflow.Checkpointer; a key saved twice is an error.
func (m *MemoryCheckpoints) Save(_ context.Context, key, _ string, s workflow.Saved) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Saved == nil {
		m.Saved = map[string]workflow.Saved{}
	}
	if _, dup := m.Saved[key]; dup {
		return fmt.Errorf("checkpoint %q saved twice", key)
	}
	m.Saved[key] = s
	m.Order = append(m.Order, key)
	return nil
}
