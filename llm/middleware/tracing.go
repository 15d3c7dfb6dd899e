package middleware

import (
	"context"
	"encoding/json"
	"iter"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentcraftlab/agentcraft/internal/tracing"
	"github.com/agentcraftlab/agentcraft/llm"
)

// TracingOptions configure Tracing.
type TracingOptions struct {
	// ProviderType is gen_ai.provider.name: the wire the adapter speaks
	// ("openai", "anthropic"). Required.
	ProviderType string
	// Provider is the configured provider's name (agentcraft.provider),
	// such as "ollama" for an OpenAI-compatible server. Default: none.
	Provider string
}

// Tracing returns middleware that makes one client span per model call,
// following the OpenTelemetry GenAI conventions: named "chat {model}",
// with gen_ai.operation.name "chat", gen_ai.provider.name,
// gen_ai.request.model (and max_tokens, temperature, top_p when set),
// gen_ai.response.model, gen_ai.response.id,
// gen_ai.response.finish_reasons, gen_ai.usage.input_tokens and
// output_tokens, and error.type (the llm.Kind) on failure. The messages
// sent and received are recorded (gen_ai.input.messages,
// gen_ai.output.messages, gen_ai.system_instructions) only when
// tracing.CaptureContent is on. The platform puts it innermost, right
// above the adapter, so each attempt of a retried call is a span of its
// own and what it records is what the provider saw (masked by the PII
// layer above). While tracing is off it calls the next model directly.
func Tracing(opts TracingOptions) llm.Middleware {
	return func(next llm.Model) llm.Model { return &traced{next: next, o: opts} }
}

type traced struct {
	next llm.Model
	o    TracingOptions
}

func (m *traced) start(ctx context.Context, req llm.Request) (context.Context, trace.Span) {
	ctx, span := tracing.Start(ctx, "chat "+req.Model, trace.SpanKindClient,
		tracing.GenAIOperationName.String(tracing.OpChat),
		tracing.GenAIProviderName.String(m.o.ProviderType),
		tracing.GenAIRequestModel.String(req.Model))
	if m.o.Provider != "" {
		span.SetAttributes(tracing.ProviderKey.String(m.o.Provider))
	}
	if req.MaxTokens > 0 {
		span.SetAttributes(tracing.GenAIRequestMaxTokens.Int(req.MaxTokens))
	}
	if req.Temperature != nil {
		span.SetAttributes(tracing.GenAIRequestTemperature.Float64(*req.Temperature))
	}
	if req.TopP != nil {
		span.SetAttributes(tracing.GenAIRequestTopP.Float64(*req.TopP))
	}
	if tracing.CaptureContent() {
		system, input := inputMessages(req.Messages)
		if system != "" {
			span.SetAttributes(tracing.GenAISystemInstructions.String(system))
		}
		span.SetAttributes(tracing.GenAIInputMessages.String(input))
	}
	// The provider's request carries this span's traceparent (provider's
	// HTTP client is a tracing.Transport), so a model server that traces
	// (vLLM, LiteLLM, an OpenTelemetry-instrumented gateway) continues it.
	return tracing.InClientSpan(ctx), span
}

func (m *traced) finish(span trace.Span, resp llm.Response, err error) {
	if err != nil {
		tracing.Fail(span, string(llm.KindOf(err)), err)
		return
	}
	attrs := []attribute.KeyValue{
		tracing.GenAIUsageInputTokens.Int(resp.Usage.InputTokens),
		tracing.GenAIUsageOutputTokens.Int(resp.Usage.OutputTokens),
		tracing.GenAIResponseFinish.StringSlice([]string{string(resp.FinishReason)}),
	}
	if resp.Usage.CachedTokens > 0 {
		attrs = append(attrs, tracing.GenAIUsageCacheReadTokens.Int(resp.Usage.CachedTokens))
	}
	if resp.Usage.CacheWriteTokens > 0 {
		attrs = append(attrs, tracing.GenAIUsageCacheWriteTokens.Int(resp.Usage.CacheWriteTokens))
	}
	if resp.Model != "" {
		attrs = append(attrs, tracing.GenAIResponseModel.String(resp.Model))
	}
	if resp.ID != "" {
		attrs = append(attrs, tracing.GenAIResponseID.String(resp.ID))
	}
	if tracing.CaptureContent() {
		attrs = append(attrs, tracing.GenAIOutputMessages.String(outputMessages(resp)))
	}
	span.SetAttributes(attrs...)
}

func (m *traced) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	if !tracing.Enabled() {
		return m.next.Generate(ctx, req)
	}
	ctx, span := m.start(ctx, req)
	defer span.End()
	resp, err := m.next.Generate(ctx, req)
	m.finish(span, resp, err)
	return resp, err
}

func (m *traced) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	if !tracing.Enabled() {
		return m.next.Stream(ctx, req)
	}
	return func(yield func(llm.Event, error) bool) {
		ctx, span := m.start(ctx, req)
		defer span.End()
		// The answer is folded only as far as the span needs it: the
		// whole message when content is captured, else the finish event.
		var (
			acc     llm.Accumulator
			capture = tracing.CaptureContent()
		)
		for ev, err := range m.next.Stream(ctx, req) {
			if err != nil {
				m.finish(span, llm.Response{}, err)
				yield(ev, err)
				return
			}
			if capture || ev.Type == llm.EventFinish {
				acc.Add(ev)
			}
			if ev.Type == llm.EventFinish {
				m.finish(span, acc.Response(), nil)
			}
			if !yield(ev, nil) {
				if !acc.Finished() {
					tracing.Fail(span, string(llm.KindCanceled), nil)
				}
				return
			}
		}
		if !acc.Finished() {
			tracing.Fail(span, string(llm.KindProvider), llm.ErrIncompleteStream)
		}
	}
}

// genAIPart is a message part of gen_ai.input.messages and
// gen_ai.output.messages.
type genAIPart struct {
	Type      string `json:"type"`
	Content   string `json:"content,omitempty"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments any    `json:"arguments,omitempty"`
	Response  string `json:"response,omitempty"`
}

type genAIMessage struct {
	Role         string      `json:"role"`
	Parts        []genAIPart `json:"parts"`
	FinishReason string      `json:"finish_reason,omitempty"`
}

// inputMessages is gen_ai.system_instructions (the system messages' text)
// and gen_ai.input.messages (the others) as the conventions' JSON.
func inputMessages(msgs []llm.Message) (system, input string) {
	out := make([]genAIMessage, 0, len(msgs))
	for _, msg := range msgs {
		if msg.Role == llm.RoleSystem {
			if system != "" {
				system += "\n"
			}
			system += msg.Text()
			continue
		}
		out = append(out, genAIMessageOf(msg))
	}
	b, _ := json.Marshal(out)
	return system, string(b)
}

func outputMessages(resp llm.Response) string {
	m := genAIMessageOf(resp.Message)
	m.Role = string(llm.RoleAssistant)
	m.FinishReason = string(resp.FinishReason)
	b, _ := json.Marshal([]genAIMessage{m})
	return string(b)
}

func genAIMessageOf(msg llm.Message) genAIMessage {
	out := genAIMessage{Role: string(msg.Role), Parts: []genAIPart{}}
	if msg.Role == llm.RoleTool {
		out.Parts = append(out.Parts, genAIPart{Type: "tool_call_response", ID: msg.ToolCallID, Response: msg.Text()})
		return out
	}
	for _, p := range msg.Content {
		switch p.Type {
		case llm.PartText:
			out.Parts = append(out.Parts, genAIPart{Type: "text", Content: p.Text})
		case llm.PartImage:
			// The picture itself (often a data: URI of megabytes) stays
			// out of the span.
			out.Parts = append(out.Parts, genAIPart{Type: "image"})
		}
	}
	for _, c := range msg.ToolCalls {
		var args any = c.Arguments
		if json.Valid([]byte(c.Arguments)) {
			args = json.RawMessage(c.Arguments)
		}
		out.Parts = append(out.Parts, genAIPart{Type: "tool_call", ID: c.ID, Name: c.Name, Arguments: args})
	}
	return out
}
