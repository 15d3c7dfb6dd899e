package platform

import (
	"time"

	"github.com/agentcraftlab/agentcraft/llm/middleware"
)

// ProviderConfig is one LLM provider as agentcraft.yaml defines it.
type ProviderConfig struct {
	// Name is how agents refer to it: model "NAME/MODEL".
	Name string `yaml:"name"`
	// Type is openai (any OpenAI-compatible server) or anthropic.
	Type string `yaml:"type"`
	// BaseURL defaults to the provider's public API.
	BaseURL string `yaml:"base_url"`
	// APIKey, usually "${SOME_ENV}". When empty, a key stored with
	// POST /api/credentials is used.
	APIKey string `yaml:"api_key"`
	// Timeout bounds one upstream request. Default 10m (long generations).
	Timeout time.Duration `yaml:"timeout"`
	// Middleware: rate_limit, retry, logging for every agent of this provider.
	Middleware middleware.Settings `yaml:",inline"`
}

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
	// Middleware overrides the provider's settings for this agent.
	Middleware middleware.Settings `yaml:",inline"`
}
