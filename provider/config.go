package provider

import (
	"time"

	"github.com/agentcraftlab/agentcraft/llm/middleware"
)

// Config is one LLM provider as agentcraft.yaml defines it.
type Config struct {
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
