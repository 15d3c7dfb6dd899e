package platform

import (
	"time"

	"github.com/agentcraftlab/agentcraft/llm/middleware"
	"github.com/agentcraftlab/agentcraft/provider"
	"github.com/agentcraftlab/agentcraft/store"
)

// ProviderConfig is one LLM provider as agentcraft.yaml defines it.
type ProviderConfig = provider.Config

// ProviderInfo describes a provider as the API shows it: never its key.
type ProviderInfo = provider.Info

// Provider origins (ProviderInfo.Origin).
const (
	OriginConfig    = provider.OriginConfig
	OriginDetected  = provider.OriginDetected
	OriginWorkspace = provider.OriginWorkspace
)

// ErrUnknownProvider reports a model reference to a provider that does
// not exist.
var ErrUnknownProvider = provider.ErrUnknown

// AgentSpec is an agent as agentcraft.yaml defines it: the file's agents
// are held in memory by the process that reads the file (Options.Agents).
type AgentSpec struct {
	Name         string   `yaml:"name"`
	Model        string   `yaml:"model"`
	Instructions string   `yaml:"instructions"`
	Tools        []string `yaml:"tools"`
	Temperature  *float64 `yaml:"temperature"`
	MaxTokens    int      `yaml:"max_tokens"`
	// MaxSteps bounds tool-loop steps. Default 10.
	MaxSteps int `yaml:"max_steps"`
	// TokenBudget caps the input plus output tokens of one run (all its
	// steps); the run then ends with a clear message. Default none.
	TokenBudget int `yaml:"token_budget"`
	// ToolTimeout bounds each tool call. Default 60s.
	ToolTimeout time.Duration `yaml:"tool_timeout"`
	// MaxToolResultBytes cuts longer tool results, with a note to the
	// model. Default 16384.
	MaxToolResultBytes int `yaml:"max_tool_result_bytes"`
	// ToolProgress streams the agent's internal tool calls as
	// reasoning_content so chat UIs can show them. Default false.
	ToolProgress bool `yaml:"tool_progress"`
	// KnowledgeBases names the workspace's knowledge bases the agent
	// answers from, with numbered citations. Default none.
	KnowledgeBases []string `yaml:"knowledge_bases"`
	// Memory gives the agent the recall, remember and forget tools and
	// tunes its conversations; see store.AgentMemory. Default none.
	Memory *store.AgentMemory `yaml:"memory"`
	// Autonomous makes the agent autonomous: chats run the ReAct
	// executor as a durable run; see store.AgentAutonomous. Default none.
	Autonomous *store.AgentAutonomous `yaml:"autonomous"`
	// Skills names the skills the agent may use (built-in or the
	// workspace's, package skill): the system prompt lists their names
	// and descriptions only, and the load_skill and read_skill_file tools
	// return a skill's instructions and files when the model asks.
	// Default none.
	Skills []string `yaml:"skills"`
	// Middleware overrides the provider's settings for this agent.
	Middleware middleware.Settings `yaml:",inline"`
}
