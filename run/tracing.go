package run

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/internal/tracing"
	"github.com/agentcraftlab/agentcraft/llm"
)

// traceRun opens the invoke_agent span of one run of the bound agent
// (GenAI conventions: "invoke_agent {agent}", gen_ai.agent.name and id,
// gen_ai.request.model, gen_ai.conversation.id; the run's summed token
// usage and finish reason when it ends, error.type when it fails). Model
// and tool calls of the run are its children. While tracing is off it
// returns ctx and a function that does nothing.
func (a *Agent) traceRun(ctx context.Context) (context.Context, func(agent.RunEnd)) {
	if !tracing.Enabled() {
		return ctx, func(agent.RunEnd) {}
	}
	name := a.Def.Row.Name
	ctx, span := tracing.Start(ctx, tracing.OpInvokeAgent+" "+name, trace.SpanKindInternal,
		tracing.GenAIOperationName.String(tracing.OpInvokeAgent),
		tracing.GenAIAgentName.String(name),
		tracing.GenAIRequestModel.String(a.Def.ModelID),
		tracing.ProviderKey.String(a.Def.Provider),
		tracing.WorkspaceID.String(a.caller.WorkspaceID),
		tracing.Surface.String(string(a.caller.Surface)))
	if a.Def.Row.ID != "" {
		span.SetAttributes(tracing.GenAIAgentID.String(a.Def.Row.ID))
	}
	if a.caller.ConversationID != "" {
		span.SetAttributes(tracing.GenAIConversationID.String(a.caller.ConversationID))
	}
	if a.caller.RunID != "" {
		span.SetAttributes(tracing.RunID.String(a.caller.RunID))
	}
	return ctx, func(end agent.RunEnd) {
		span.SetAttributes(
			tracing.GenAIUsageInputTokens.Int(end.Usage.InputTokens),
			tracing.GenAIUsageOutputTokens.Int(end.Usage.OutputTokens))
		if end.FinishReason != "" {
			span.SetAttributes(tracing.GenAIResponseFinish.StringSlice([]string{string(end.FinishReason)}))
		}
		if end.Err != nil {
			tracing.Fail(span, string(llm.KindOf(end.Err)), end.Err)
		}
		span.End()
	}
}
