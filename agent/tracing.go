package agent

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/agentcraftlab/agentcraft/internal/tracing"
	"github.com/agentcraftlab/agentcraft/llm"
)

// traceTool opens the execute_tool span of one server tool call (GenAI
// conventions: gen_ai.operation.name "execute_tool", gen_ai.tool.name,
// gen_ai.tool.call.id; the arguments only with tracing.CaptureContent) and
// returns the function that ends it with the call's outcome. While tracing
// is off it returns ctx and a function that does nothing.
func traceTool(ctx context.Context, agentName string, c llm.ToolCall) (context.Context, func(*outcome)) {
	if !tracing.Enabled() {
		return ctx, func(*outcome) {}
	}
	ctx, span := tracing.Start(ctx, tracing.OpExecuteTool+" "+c.Name, trace.SpanKindInternal,
		tracing.GenAIOperationName.String(tracing.OpExecuteTool),
		tracing.GenAIToolName.String(c.Name),
		tracing.GenAIToolCallID.String(c.ID),
		tracing.GenAIToolType.String("function"),
		tracing.GenAIAgentName.String(agentName))
	capture := tracing.CaptureContent()
	if capture {
		span.SetAttributes(tracing.GenAIToolCallArguments.String(c.Arguments))
	}
	return ctx, func(out *outcome) {
		if capture {
			span.SetAttributes(tracing.GenAIToolCallResult.String(out.Content))
		}
		if out.IsError {
			// The model reads the error result; the span says the call
			// failed without repeating what it said.
			tracing.Fail(span, "tool_error", nil)
		}
		span.End()
	}
}
