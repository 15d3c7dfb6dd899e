package provider

import (
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/middleware"
)

// traceModel wraps a provider's adapter in the model-call span
// (middleware.Tracing): gen_ai.provider.name is the wire type (openai,
// anthropic), agentcraft.provider the configured name.
func traceModel(spec adapterSpec, m llm.Model) llm.Model {
	return middleware.Tracing(middleware.TracingOptions{ProviderType: spec.typ, Provider: spec.name})(m)
}
