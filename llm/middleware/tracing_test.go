package middleware

import (
	"context"
	"iter"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentcraftlab/agentcraft/internal/tracing"
	"github.com/agentcraftlab/agentcraft/llm"
)

func recordSpans(t *testing.T, capture bool) *tracetest.SpanRecorder {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	uninstall := tracing.Install(tp, capture)
	t.Cleanup(func() { uninstall(); _ = tp.Shutdown(context.Background()) })
	return rec
}

func spanAttr(s sdktrace.ReadOnlySpan, key attribute.Key) attribute.Value {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

type scripted struct {
	resp llm.Response
	err  error
}

func (a scripted) Generate(context.Context, llm.Request) (llm.Response, error) { return a.resp, a.err }
func (a scripted) Stream(context.Context, llm.Request) iter.Seq2[llm.Event, error] {
	return llm.Events(a.resp)
}

// TestTracingGenerate: a buffered call's span has the GenAI attributes of
// the answer; a failed one has error.type, the llm.Kind, and an error
// status; content is recorded only when asked.
func TestTracingGenerate(t *testing.T) {
	rec := recordSpans(t, false)
	temp := 0.2
	req := llm.Request{Model: "claude-x", MaxTokens: 100, Temperature: &temp,
		Messages: []llm.Message{llm.Text(llm.RoleSystem, "SYSTEM-SECRET"), llm.Text(llm.RoleUser, "USER-SECRET")}}
	ok := llm.Chain(scripted{resp: llm.Response{ID: "msg_1", Model: "claude-x-2026", FinishReason: llm.FinishStop,
		Usage: llm.Usage{InputTokens: 9, OutputTokens: 4, CachedTokens: 2}, Message: llm.Text(llm.RoleAssistant, "ANSWER-SECRET")}},
		Tracing(TracingOptions{ProviderType: "anthropic", Provider: "claude"}))
	if _, err := ok.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	failing := llm.Chain(scripted{err: &llm.Error{Kind: llm.KindRateLimit, Status: 429, Message: "slow down"}},
		Tracing(TracingOptions{ProviderType: "anthropic"}))
	if _, err := failing.Generate(context.Background(), req); err == nil {
		t.Fatal("the failure was lost")
	}
	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	s := spans[0]
	if s.Name() != "chat claude-x" {
		t.Errorf("name %q", s.Name())
	}
	for key, want := range map[attribute.Key]string{
		tracing.GenAIOperationName: "chat", tracing.GenAIProviderName: "anthropic", tracing.GenAIRequestModel: "claude-x",
		tracing.GenAIResponseModel: "claude-x-2026", tracing.GenAIResponseID: "msg_1", tracing.ProviderKey: "claude",
	} {
		if got := spanAttr(s, key).AsString(); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	for key, want := range map[attribute.Key]int64{tracing.GenAIUsageInputTokens: 9, tracing.GenAIUsageOutputTokens: 4,
		tracing.GenAIUsageCacheReadTokens: 2, tracing.GenAIRequestMaxTokens: 100} {
		if got := spanAttr(s, key).AsInt64(); got != want {
			t.Errorf("%s = %d, want %d", key, got, want)
		}
	}
	if got := spanAttr(s, tracing.GenAIResponseFinish).AsStringSlice(); len(got) != 1 || got[0] != "stop" {
		t.Errorf("finish reasons %v", got)
	}
	for _, sp := range spans {
		for _, kv := range sp.Attributes() {
			if strings.Contains(kv.Value.Emit(), "SECRET") {
				t.Errorf("%s = %q records content with capture off", kv.Key, kv.Value.Emit())
			}
		}
	}
	f := spans[1]
	if spanAttr(f, tracing.ErrorType).AsString() != "rate_limit" || f.Status().Code != codes.Error {
		t.Errorf("failed call: error.type %q status %v", spanAttr(f, tracing.ErrorType).AsString(), f.Status())
	}

	// With capture on: system instructions apart, the rest as messages.
	rec = recordSpans(t, true)
	if _, err := ok.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	s = rec.Ended()[0]
	if got := spanAttr(s, tracing.GenAISystemInstructions).AsString(); got != "SYSTEM-SECRET" {
		t.Errorf("system instructions %q", got)
	}
	if got := spanAttr(s, tracing.GenAIInputMessages).AsString(); got != `[{"role":"user","parts":[{"type":"text","content":"USER-SECRET"}]}]` {
		t.Errorf("input messages %s", got)
	}
	if got := spanAttr(s, tracing.GenAIOutputMessages).AsString(); got != `[{"role":"assistant","parts":[{"type":"text","content":"ANSWER-SECRET"}],"finish_reason":"stop"}]` {
		t.Errorf("output messages %s", got)
	}
}
