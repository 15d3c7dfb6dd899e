package tracing

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys of the OpenTelemetry GenAI semantic conventions
// (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/) and
// AgentCraft's own, which every seam uses so that one query finds a
// value whichever span carries it.
const (
	GenAIOperationName        = attribute.Key("gen_ai.operation.name")
	GenAIProviderName         = attribute.Key("gen_ai.provider.name")
	GenAIRequestModel         = attribute.Key("gen_ai.request.model")
	GenAIRequestMaxTokens     = attribute.Key("gen_ai.request.max_tokens")
	GenAIRequestTemperature   = attribute.Key("gen_ai.request.temperature")
	GenAIRequestTopP          = attribute.Key("gen_ai.request.top_p")
	GenAIResponseModel        = attribute.Key("gen_ai.response.model")
	GenAIResponseID           = attribute.Key("gen_ai.response.id")
	GenAIResponseFinish       = attribute.Key("gen_ai.response.finish_reasons")
	GenAIUsageInputTokens     = attribute.Key("gen_ai.usage.input_tokens")
	GenAIUsageOutputTokens    = attribute.Key("gen_ai.usage.output_tokens")
	GenAIUsageCacheReadTokens = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	GenAIInputMessages        = attribute.Key("gen_ai.input.messages")
	GenAIOutputMessages       = attribute.Key("gen_ai.output.messages")
	GenAISystemInstructions   = attribute.Key("gen_ai.system_instructions")
	GenAIAgentName            = attribute.Key("gen_ai.agent.name")
	GenAIAgentID              = attribute.Key("gen_ai.agent.id")
	GenAIConversationID       = attribute.Key("gen_ai.conversation.id")
	GenAIToolName             = attribute.Key("gen_ai.tool.name")
	GenAIToolCallID           = attribute.Key("gen_ai.tool.call.id")
	GenAIToolType             = attribute.Key("gen_ai.tool.type")
	GenAIToolCallArguments    = attribute.Key("gen_ai.tool.call.arguments")
	GenAIToolCallResult       = attribute.Key("gen_ai.tool.call.result")
	ErrorType                 = attribute.Key("error.type")

	// The part of the input written to the provider's prompt cache
	// (Anthropic's cache_creation_input_tokens).
	GenAIUsageCacheWriteTokens = attribute.Key("gen_ai.usage.cache_creation.input_tokens")

	// AgentCraft's own.
	ProviderKey = attribute.Key("agentcraft.provider") // the configured provider's name ("ollama", "fake")
	WorkspaceID = attribute.Key("agentcraft.workspace.id")
	Surface     = attribute.Key("agentcraft.surface")
	RunID       = attribute.Key("agentcraft.run.id")
	WorkflowID  = attribute.Key("agentcraft.workflow.id")
	RunStatus   = attribute.Key("agentcraft.run.status")
	NodeID      = attribute.Key("agentcraft.node.id")
	NodeKind    = attribute.Key("agentcraft.node.kind")
	NodeKey     = attribute.Key("agentcraft.node.key")
)

// GenAI operation names (gen_ai.operation.name).
const (
	OpChat        = "chat"
	OpInvokeAgent = "invoke_agent"
	OpExecuteTool = "execute_tool"
)

// Fail marks span failed with error.type kind and err's message.
func Fail(span trace.Span, kind string, err error) {
	span.SetAttributes(ErrorType.String(kind))
	msg := kind
	if err != nil {
		msg = err.Error()
	}
	span.SetStatus(codes.Error, msg)
}
