package middleware

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/google/go-cmp/cmp"
)

const secretArg = "4111-1111-1111-1111"

// loggingRequest is a conversation whose earlier turns and tool call
// arguments must not reach Info.
func loggingRequest(last string) llm.Request {
	return llm.Request{
		Model: "gpt-test",
		Messages: []llm.Message{
			llm.Text(llm.RoleSystem, "You are the billing assistant. SYSTEM-PROMPT-MARKER"),
			llm.Text(llm.RoleUser, "earlier question EARLIER-MARKER"),
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "charge_card", Arguments: `{"card":"` + secretArg + `"}`}}},
			llm.ToolResult("c1", "charged", false),
			llm.Text(llm.RoleUser, last),
		},
	}
}

// toolCallAnswer streams text and two interleaved tool calls.
func toolCallAnswer() reply {
	return reply{events: []llm.Event{
		{Type: llm.EventTextDelta, Text: "Done: COMPLETION-MARKER"},
		{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 0, ID: "c2", Name: "refund", ArgumentsDelta: `{"card":`}},
		{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 1, ID: "c3", Name: "notify", ArgumentsDelta: `{}`}},
		{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 0, ArgumentsDelta: `"` + secretArg + `"}`}},
		{Type: llm.EventFinish, FinishReason: llm.FinishToolCalls, Usage: &llm.Usage{InputTokens: 120, OutputTokens: 30, CachedTokens: 100}},
	}}
}

func newLogger(level slog.Level) (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: level})), &buf
}

func TestLoggingInfo(t *testing.T) {
	long := strings.Repeat("é", 80) + strings.Repeat("x", 80) + " TAIL-MARKER"
	for _, mode := range []string{"generate", "stream"} {
		t.Run(mode, func(t *testing.T) {
			logger, buf := newLogger(slog.LevelInfo)
			m := Logging(&LoggingOptions{Logger: logger, Provider: "openai"})(newFake(t, toolCallAnswer()))
			req := loggingRequest(long)
			if mode == "generate" {
				if _, err := m.Generate(context.Background(), req); err != nil {
					t.Fatal(err)
				}
			} else if _, err := drain(m.Stream(context.Background(), req)); err != nil {
				t.Fatal(err)
			}
			recs := records(t, buf)
			if len(recs) != 1 {
				t.Fatalf("got %d records, want 1: %v", len(recs), recs)
			}
			rec := recs[0]
			preview, _ := rec["input_preview"].(string)
			if utf8.RuneCountInString(preview) != PreviewLen || !strings.HasPrefix(long, strings.TrimSuffix(preview, "…")) || !strings.HasSuffix(preview, "…") {
				t.Errorf("input_preview = %q (%d chars), want the first %d characters of the last user message", preview, utf8.RuneCountInString(preview), PreviewLen)
			}
			for _, k := range []string{"time", "latency_ms", "input_preview", "first_event_ms"} {
				delete(rec, k)
			}
			want := map[string]any{
				"level": "INFO", "msg": "llm request finished", "provider": "openai", "model": "gpt-test",
				"input_tokens": 120.0, "output_tokens": 30.0, "cached_tokens": 100.0,
				"finish_reason": "tool_calls", "tool_calls": 2.0,
			}
			if diff := cmp.Diff(want, rec); diff != "" {
				t.Errorf("record (-want +got):\n%s", diff)
			}
			for _, marker := range []string{secretArg, "SYSTEM-PROMPT-MARKER", "EARLIER-MARKER", "COMPLETION-MARKER", "TAIL-MARKER", "charge_card"} {
				if strings.Contains(buf.String(), marker) {
					t.Errorf("Info log contains %q:\n%s", marker, buf)
				}
			}
		})
	}
}

func TestLoggingDebug(t *testing.T) {
	logger, buf := newLogger(slog.LevelDebug)
	m := Logging(&LoggingOptions{Logger: logger})(newFake(t, toolCallAnswer()))
	if _, err := drain(m.Stream(context.Background(), loggingRequest("what now? TAIL-MARKER"))); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, marker := range []string{"SYSTEM-PROMPT-MARKER", "EARLIER-MARKER", "TAIL-MARKER", "COMPLETION-MARKER", "charge_card", "refund", "notify"} {
		if !strings.Contains(out, marker) {
			t.Errorf("Debug log lacks %q", marker)
		}
	}
	if strings.Contains(out, secretArg) {
		t.Errorf("tool arguments were logged:\n%s", out)
	}
	recs := records(t, buf)
	var msgs []string
	for _, r := range recs {
		msgs = append(msgs, r["msg"].(string))
	}
	if diff := cmp.Diff([]string{"llm request sent", "llm request finished", "llm response received"}, msgs); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func TestLoggingFailure(t *testing.T) {
	logger, buf := newLogger(slog.LevelInfo)
	r := failure(429)
	m := Logging(&LoggingOptions{Logger: logger})(newFake(t, r, r))
	if _, err := m.Generate(context.Background(), loggingRequest("hi")); err != r.err {
		t.Fatalf("error = %v, want the upstream error unchanged", err)
	}
	if _, err := drain(m.Stream(context.Background(), loggingRequest("hi"))); err != r.err {
		t.Fatalf("stream error = %v, want the upstream error unchanged", err)
	}
	for _, rec := range records(t, buf) {
		delete(rec, "time")
		delete(rec, "latency_ms")
		want := map[string]any{
			"level": "WARN", "msg": "llm request failed", "model": "gpt-test", "status": 429.0,
			"error": r.err.Error(), "error_kind": "rate_limit", "input_preview": "hi",
		}
		if diff := cmp.Diff(want, rec); diff != "" {
			t.Errorf("record (-want +got):\n%s", diff)
		}
	}
}

func TestLoggingStreamEnds(t *testing.T) {
	t.Run("abandoned", func(t *testing.T) {
		logger, buf := newLogger(slog.LevelInfo)
		m := Logging(&LoggingOptions{Logger: logger})(newFake(t, answer("hello")))
		for range m.Stream(context.Background(), loggingRequest("hi")) {
			break
		}
		recs := records(t, buf)
		if len(recs) != 1 || recs[0]["msg"] != "llm stream abandoned" {
			t.Errorf("records = %v, want one abandoned record", recs)
		}
	})
	t.Run("no finish", func(t *testing.T) {
		logger, buf := newLogger(slog.LevelInfo)
		m := Logging(&LoggingOptions{Logger: logger})(newFake(t, reply{events: []llm.Event{{Type: llm.EventTextDelta, Text: "hel"}}}))
		drain(m.Stream(context.Background(), loggingRequest("hi")))
		recs := records(t, buf)
		if len(recs) != 1 || recs[0]["msg"] != "llm request failed" || recs[0]["error_kind"] != "provider" {
			t.Errorf("records = %v, want one failure for the missing finish event", recs)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		logger, buf := newLogger(slog.LevelInfo)
		m := Logging(&LoggingOptions{Logger: logger})(newFake(t, reply{err: context.Canceled}))
		drain(m.Stream(context.Background(), loggingRequest("hi")))
		recs := records(t, buf)
		if len(recs) != 1 || recs[0]["level"] != "INFO" || recs[0]["error_kind"] != "canceled" {
			t.Errorf("records = %v, want one Info record of the cancellation", recs)
		}
	})
}

func TestLoggingNilOptions(t *testing.T) {
	m := Logging(nil)(newFake(t, answer("ok")))
	if text, err := drain(m.Stream(context.Background(), llm.Request{})); err != nil || text != "ok" {
		t.Errorf("Stream = %q, %v", text, err)
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven chars", 10, "eleven ch…"},
		{"日本語のテキストです", 5, "日本語の…"},
	}
	for _, tt := range tests {
		if got := truncate(tt.in, tt.n); got != tt.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// TestLoggingPreviewRedactsKeys: an API key pasted into a prompt does not
// reach the Info record's preview, also when the preview's end cuts it.
func TestLoggingPreviewRedactsKeys(t *testing.T) {
	const key = "sk-proj-SECRETabcdef0123456789xyz"
	for name, text := range map[string]string{
		"short": "my key is " + key + ", keep it",
		"cut":   strings.Repeat("a ", (PreviewLen-6)/2) + key + strings.Repeat(" b", 200),
	} {
		t.Run(name, func(t *testing.T) {
			logger, buf := newLogger(slog.LevelInfo)
			m := Logging(&LoggingOptions{Logger: logger})(newFake(t, toolCallAnswer()))
			if _, err := m.Generate(context.Background(), loggingRequest(text)); err != nil {
				t.Fatal(err)
			}
			for _, frag := range []string{"SECRET", "abcdef", "0123", "xyz", "sk-proj"} {
				if strings.Contains(buf.String(), frag) {
					t.Errorf("Info log holds %q of the key:\n%s", frag, buf.String())
				}
			}
			// The preview's end may cut the marker itself ("[reda…").
			if !strings.Contains(buf.String(), llm.Redacted[:5]) {
				t.Errorf("preview lacks %s:\n%s", llm.Redacted, buf.String())
			}
		})
	}
}
