package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Source says where a row was defined, which decides who may change it.
type Source string

// Sources of agents and providers.
const (
	// SourceConfig rows come from the configuration file and are upserted
	// at every start.
	SourceConfig Source = "config"
	// SourceAPI rows were created through the API or the studio.
	SourceAPI Source = "api"
)

func (s Source) valid() bool { return s == SourceConfig || s == SourceAPI }

// Agent is a named model configuration with instructions and tools.
type Agent struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	// Name is unique within the workspace.
	Name string `json:"name"`
	// Model is "provider/model", such as "openai/gpt-4o".
	Model        string      `json:"model"`
	Instructions string      `json:"instructions,omitempty"`
	Tools        []string    `json:"tools,omitempty"`
	Params       AgentParams `json:"params"`
	Source       Source      `json:"source"`
	CreatedAt    time.Time   `json:"created_at"`
	UpdatedAt    time.Time   `json:"updated_at"`
}

// AgentParams tunes how an agent calls its model. Drivers store it as one
// JSON document, so a field added here needs no migration.
type AgentParams struct {
	// Temperature is nil to use the provider's default.
	Temperature *float64 `json:"temperature,omitempty"`
	// MaxTokens caps each answer; 0 uses the provider's default.
	MaxTokens int `json:"max_tokens,omitempty"`
	// MaxSteps caps the tool-calling loop; 0 uses the agent runtime's default.
	MaxSteps int `json:"max_steps,omitempty"`
	// TokenBudget caps the input plus output tokens of one run; 0: none.
	TokenBudget int `json:"token_budget,omitempty"`
	// ToolTimeoutSeconds bounds each tool call; 0 uses the runtime's
	// default (60 s).
	ToolTimeoutSeconds int `json:"tool_timeout_seconds,omitempty"`
	// MaxToolResultBytes cuts longer tool results (with a note to the
	// model); 0 uses the runtime's default (16 KiB).
	MaxToolResultBytes int `json:"max_tool_result_bytes,omitempty"`
	// Middleware holds per-agent middleware settings (rate limits, retry,
	// guardrails) as a JSON object the middleware decodes itself. It
	// round-trips as equivalent JSON, not byte for byte: PostgreSQL
	// normalizes whitespace and key order.
	Middleware json.RawMessage `json:"middleware,omitempty"`
	// KnowledgeBases names (or ids of) the workspace's knowledge bases the
	// agent answers from: each request searches them and the top passages
	// reach the model with numbered citations (package rag).
	KnowledgeBases []string `json:"knowledge_bases,omitempty"`
	// Memory turns on the agent's memory tools and tunes its
	// conversations (package memory); nil: no memory tools, default
	// history budget.
	Memory *AgentMemory `json:"memory,omitempty"`
	// Skills names the built-in or workspace skills the agent may load
	// (package skill): its system prompt lists their names and
	// descriptions, and its load_skill tool returns their instructions.
	Skills []string `json:"skills,omitempty"`
	// Autonomous makes the agent an autonomous one (package autonomous):
	// a chat with it runs the ReAct executor toward the last user message
	// as a durable run, with these limits; nil: an ordinary agent.
	Autonomous *AgentAutonomous `json:"autonomous,omitempty"`
}

// AgentAutonomous is the autonomous block of an agent, in agentcraft.yaml
// and the API alike; zero fields take the autonomous node's defaults:
//
//	autonomous:
//	  planner: openai/gpt-4.1      # reflects, reviews, summarises; default: the agent's model
//	  max_steps: 15                # model calls of each agent of the tree
//	  auto_approve: [web_fetch]    # medium/high tools run without a decision (until an injection is flagged)
type AgentAutonomous struct {
	Planner      string   `yaml:"planner" json:"planner,omitempty"`
	MaxSteps     int      `yaml:"max_steps" json:"max_steps,omitempty"`
	MaxTokens    int      `yaml:"max_tokens" json:"max_tokens,omitempty"`
	MaxDepth     int      `yaml:"max_depth" json:"max_depth,omitempty"`
	MaxSubAgents int      `yaml:"max_sub_agents" json:"max_sub_agents,omitempty"`
	AutoApprove  []string `yaml:"auto_approve" json:"auto_approve,omitempty"`
}

// AgentMemory is the memory block of an agent, in agentcraft.yaml and the
// API alike:
//
//	memory:
//	  enabled: true        # the recall, remember and forget tools
//	  history_tokens: 8000 # a conversation longer than this is compacted
//	  pii: redact          # keep, redact or block; default: the agent's PII mode
type AgentMemory struct {
	// Enabled gives the agent the recall, remember and forget tools.
	Enabled bool `yaml:"enabled" json:"enabled"`
	// HistoryTokens is the estimated size past which a conversation's
	// older turns are summarised; 0 is package memory's default.
	HistoryTokens int `yaml:"history_tokens,omitempty" json:"history_tokens,omitempty"`
	// PII decides what remember does with personal data: keep (stored
	// as given; the agent's PII layer masks it again before any model
	// sees it), redact (stored as ***), block (refused). Empty follows
	// the agent's PII mode: redact when it redacts, keep otherwise.
	PII string `yaml:"pii,omitempty" json:"pii,omitempty"`
}

// Memory PII modes (AgentMemory.PII).
const (
	MemoryPIIKeep   = "keep"
	MemoryPIIRedact = "redact"
	MemoryPIIBlock  = "block"
)

// The range of AgentParams.Temperature: what OpenAI accepts (Anthropic's
// is 0 to 1 and its API refuses more). A value outside it would reach
// the provider unchecked and fail every call.
const (
	MinTemperature = 0.0
	MaxTemperature = 2.0
)

// Validate reports whether a can be written.
func (a Agent) Validate() error {
	switch {
	case a.WorkspaceID == "":
		return fmt.Errorf("%w: agent workspace id is empty; set Agent.WorkspaceID", ErrInvalid)
	case a.Name == "":
		return fmt.Errorf("%w: agent name is empty; set Agent.Name", ErrInvalid)
	case a.Model == "":
		return fmt.Errorf("%w: agent %q has no model; set Agent.Model to \"provider/model\"", ErrInvalid, a.Name)
	case !a.Source.valid():
		return fmt.Errorf("%w: agent %q has source %q; set Agent.Source to %q or %q",
			ErrInvalid, a.Name, a.Source, SourceConfig, SourceAPI)
	case a.Params.Temperature != nil && !(*a.Params.Temperature >= MinTemperature && *a.Params.Temperature <= MaxTemperature):
		return fmt.Errorf("%w: agent %q has temperature %v; use a value from %v to %v, or leave it out for the provider's default",
			ErrInvalid, a.Name, *a.Params.Temperature, MinTemperature, MaxTemperature)
	case a.Params.MaxTokens < 0:
		return fmt.Errorf("%w: agent %q has max_tokens %d; set it to 0 (default) or more", ErrInvalid, a.Name, a.Params.MaxTokens)
	case a.Params.TokenBudget < 0 || a.Params.ToolTimeoutSeconds < 0 || a.Params.MaxToolResultBytes < 0:
		return fmt.Errorf("%w: agent %q has a negative token_budget, tool_timeout_seconds or max_tool_result_bytes; use 0 for the default", ErrInvalid, a.Name)
	case a.Params.MaxSteps < 0:
		return fmt.Errorf("%w: agent %q has max_steps %d; set it to 0 (default) or more", ErrInvalid, a.Name, a.Params.MaxSteps)
	case a.Params.Memory != nil && a.Params.Memory.HistoryTokens < 0:
		return fmt.Errorf("%w: agent %q has memory.history_tokens %d; set it to 0 (default) or more", ErrInvalid, a.Name, a.Params.Memory.HistoryTokens)
	case a.Params.Memory != nil && !validMemoryPII(a.Params.Memory.PII):
		return fmt.Errorf("%w: agent %q has memory.pii %q; use keep, redact, block or leave it out", ErrInvalid, a.Name, a.Params.Memory.PII)
	case len(a.Params.Middleware) > 0 && !json.Valid(a.Params.Middleware):
		return fmt.Errorf("%w: agent %q middleware settings are not valid JSON", ErrInvalid, a.Name)
	}
	return nil
}

func validMemoryPII(m string) bool {
	return m == "" || m == MemoryPIIKeep || m == MemoryPIIRedact || m == MemoryPIIBlock
}

// Agents stores agents.
type Agents interface {
	// Create inserts a and returns it as stored. It assigns an ID when a.ID
	// is empty and stamps CreatedAt and UpdatedAt. A name taken in the
	// workspace gives ErrConflict; an unknown workspace gives ErrNotFound.
	Create(ctx context.Context, a Agent) (Agent, error)
	// Get returns the workspace's agent with the given id, or ErrNotFound.
	Get(ctx context.Context, workspaceID, id string) (Agent, error)
	// GetByName returns the workspace's agent with the given name, or
	// ErrNotFound.
	GetByName(ctx context.Context, workspaceID, name string) (Agent, error)
	// List returns the workspace's agents ordered by name.
	List(ctx context.Context, workspaceID string) ([]Agent, error)
	// Update replaces every field of the agent identified by a.WorkspaceID
	// and a.ID except CreatedAt, stamps UpdatedAt and returns the stored
	// row. An unknown agent gives ErrNotFound; renaming onto a taken name
	// gives ErrConflict.
	Update(ctx context.Context, a Agent) (Agent, error)
	// Delete removes the workspace's agent, or gives ErrNotFound.
	Delete(ctx context.Context, workspaceID, id string) error
	// Upsert creates the agent named a.Name in a.WorkspaceID, or replaces
	// the fields of the existing one, keeping its ID and CreatedAt. It is
	// how configuration-file agents are loaded at start.
	Upsert(ctx context.Context, a Agent) (Agent, error)
}
