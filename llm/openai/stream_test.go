package openai_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/openai"
)

// wireServer answers every request with status, headers and body as
// given: the bytes some compatible server sends, which the scripted fake
// does not produce.
func wireServer(t *testing.T, status int, header map[string]string, body string) *openai.Client {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(ts.Close)
	c, err := openai.New(&openai.Options{Name: "local", BaseURL: ts.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sse joins chunk payloads into an event stream.
func sse(payloads ...string) string {
	var b strings.Builder
	for _, p := range payloads {
		b.WriteString("data: " + p + "\n\n")
	}
	return b.String()
}

var streamHeader = map[string]string{"Content-Type": "text/event-stream"}

func streamEvents(t *testing.T, c *openai.Client) ([]llm.Event, error) {
	t.Helper()
	var events []llm.Event
	for ev, err := range c.Stream(t.Context(), llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}) {
		if err != nil {
			return events, err
		}
		events = append(events, ev)
	}
	return events, nil
}

func TestStreamWire(t *testing.T) {
	u := func(in, out, cached int) *llm.Usage {
		return &llm.Usage{InputTokens: in, OutputTokens: out, CachedTokens: cached}
	}
	text := func(s string) llm.Event { return llm.Event{Type: llm.EventTextDelta, Text: s} }
	call := func(i int, id, name, args string) llm.Event {
		return llm.Event{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: i, ID: id, Name: name, ArgumentsDelta: args}}
	}
	tests := []struct {
		name string
		body string
		want []llm.Event
	}{{
		name: "reasoning_content (vLLM, DeepSeek)",
		body: sse(
			`{"id":"c1","model":"qwq","choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"Think"}}]}`,
			`{"id":"c1","model":"qwq","choices":[{"index":0,"delta":{"reasoning_content":"ing."}}]}`,
			`{"id":"c1","model":"qwq","choices":[{"index":0,"delta":{"content":"42"}}]}`,
			`{"id":"c1","model":"qwq","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`{"id":"c1","model":"qwq","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`,
			`[DONE]`),
		want: []llm.Event{
			{Type: llm.EventReasoningDelta, Text: "Think"},
			{Type: llm.EventReasoningDelta, Text: "ing."},
			text("42"),
			{Type: llm.EventFinish, FinishReason: llm.FinishStop, Usage: u(5, 3, 0), ID: "c1", Model: "qwq"},
		},
	}, {
		// The adapter reuses the choices' memory from chunk to chunk; what
		// a chunk leaves out must not be read from the one before.
		name: "fields a chunk leaves out are not carried over from the last",
		body: sse(
			`{"id":"c9","model":"m","choices":[{"index":0,"delta":{"content":"A","reasoning_content":"R","tool_calls":[`+
				`{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":"{}"}}]}}]}`,
			`{"id":"c9","model":"m","choices":[{"index":0,"delta":{}}]}`,
			`{"id":"c9","model":"m","choices":[{"index":0,"delta":{"content":"B"}},{"index":1,"delta":{"content":"other"}}]}`,
			`{"id":"c9","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			`[DONE]`),
		want: []llm.Event{
			{Type: llm.EventReasoningDelta, Text: "R"},
			text("A"),
			call(0, "call_a", "f", `{}`),
			text("B"),
			{Type: llm.EventFinish, FinishReason: llm.FinishToolCalls, Usage: u(0, 0, 0), ID: "c9", Model: "m"},
		},
	}, {
		name: "reasoning (Ollama)",
		body: sse(
			`{"id":"c2","model":"qwen3","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"Hmm"}}]}`,
			`{"id":"c2","model":"qwen3","choices":[{"index":0,"delta":{"content":"Yes"},"finish_reason":"stop"}]}`,
			`[DONE]`),
		want: []llm.Event{
			{Type: llm.EventReasoningDelta, Text: "Hmm"},
			text("Yes"),
			{Type: llm.EventFinish, FinishReason: llm.FinishStop, Usage: u(0, 0, 0), ID: "c2", Model: "qwen3"},
		},
	}, {
		name: "whole calls without index, reported as stop (Ollama)",
		body: sse(
			`{"id":"c3","model":"llama3.2","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[`+
				`{"id":"call_a","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}},`+
				`{"id":"call_b","type":"function","function":{"name":"g","arguments":"{}"}}]}}]}`,
			`{"id":"c3","model":"llama3.2","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}],`+
				`"usage":{"prompt_tokens":9,"completion_tokens":4,"total_tokens":13,"prompt_tokens_details":{"cached_tokens":2}}}`,
			`[DONE]`),
		want: []llm.Event{
			call(0, "call_a", "f", `{"x":1}`),
			call(1, "call_b", "g", `{}`),
			{Type: llm.EventFinish, FinishReason: llm.FinishToolCalls, Usage: u(9, 4, 2), ID: "c3", Model: "llama3.2"},
		},
	}, {
		name: "fragments without index",
		body: sse(
			`{"id":"c4","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_a","function":{"name":"f","arguments":""}}]}}]}`,
			`{"id":"c4","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"{\"x\""}}]}}]}`,
			`{"id":"c4","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":":1}"}}]}}]}`,
			`{"id":"c4","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			`[DONE]`),
		want: []llm.Event{
			call(0, "call_a", "f", ""),
			call(0, "", "", `{"x"`),
			call(0, "", "", ":1}"),
			{Type: llm.EventFinish, FinishReason: llm.FinishToolCalls, Usage: u(0, 0, 0), ID: "c4", Model: "m"},
		},
	}, {
		name: "refusal",
		body: sse(
			`{"id":"c5","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":"I can't help with that."}}]}`,
			`{"id":"c5","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"content_filter"}]}`,
			`[DONE]`),
		want: []llm.Event{
			text("I can't help with that."),
			{Type: llm.EventFinish, FinishReason: llm.FinishContentFilter, Usage: u(0, 0, 0), ID: "c5", Model: "m"},
		},
	}, {
		name: "finish without [DONE]",
		body: sse(`{"id":"c6","model":"m","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"length"}]}`),
		want: []llm.Event{
			text("ok"),
			{Type: llm.EventFinish, FinishReason: llm.FinishLength, Usage: u(0, 0, 0), ID: "c6", Model: "m"},
		},
	}, {
		name: "comments and CRLF",
		body: ": keep-alive\r\n\r\ndata: {\"id\":\"c7\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\r\n\r\ndata: [DONE]\r\n\r\n",
		want: []llm.Event{
			text("hi"),
			{Type: llm.EventFinish, FinishReason: llm.FinishStop, Usage: u(0, 0, 0), ID: "c7", Model: "m"},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := wireServer(t, 200, streamHeader, tt.body)
			got, err := streamEvents(t, c)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStreamWireErrors(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		kind       llm.Kind
		status     int
		message    string
		incomplete bool
	}{{
		name:       "no finish reason before [DONE]",
		body:       sse(`{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"half"}}]}`, `[DONE]`),
		kind:       llm.KindProvider,
		message:    "stream ended without a finish reason",
		incomplete: true,
	}, {
		name:       "no finish reason, clean close",
		body:       sse(`{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"half"}}]}`),
		kind:       llm.KindProvider,
		message:    "stream ended without a finish reason",
		incomplete: true,
	}, {
		name:       "empty body",
		body:       "",
		kind:       llm.KindProvider,
		message:    "stream ended without a finish reason",
		incomplete: true,
	}, {
		name:       "chunk is not JSON",
		body:       sse(`{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"a"}}]}`, `{"id":`),
		kind:       llm.KindProvider,
		message:    "stream broke off",
		incomplete: true,
	}, {
		name:    "rate limit in stream",
		body:    sse(`{"error":{"message":"Rate limit reached for tokens.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`),
		kind:    llm.KindRateLimit,
		status:  429,
		message: "Rate limit reached for tokens.",
	}, {
		name:    "vLLM error with numeric code",
		body:    sse(`{"error":{"object":"error","message":"context too long","type":"BadRequestError","param":null,"code":400}}`),
		kind:    llm.KindCaller,
		status:  400,
		message: "context too long",
	}, {
		name:    "unknown in-stream error",
		body:    sse(`{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"a"}}]}`, `{"error":{"message":"boom"}}`),
		kind:    llm.KindProvider,
		status:  500,
		message: "boom",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := wireServer(t, 200, streamHeader, tt.body)
			_, err := streamEvents(t, c)
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("Stream error = %v, want an *llm.Error", err)
			}
			got := llm.Error{Kind: e.Kind, Provider: e.Provider, Status: e.Status, Message: e.Message}
			want := llm.Error{Kind: tt.kind, Provider: "local", Status: tt.status, Message: tt.message}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("error %v (-want +got):\n%s", e, diff)
			}
			if errors.Is(err, llm.ErrIncompleteStream) != tt.incomplete {
				t.Errorf("errors.Is(err, ErrIncompleteStream) = %v, want %v", !tt.incomplete, tt.incomplete)
			}
		})
	}
}

// canned answers every request with one prebuilt event stream, so that
// allocations counted around a Stream are the adapter's and the HTTP
// client's, not a server's.
type canned []byte

func (c canned) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(c)), Request: req}, nil
}

// A forwarded chunk costs one allocation (its text): the adapter reuses
// its read buffer, its decode target and the choices array. A chunk's
// allocations block a proxying goroutine in GC assists while a collection
// runs, so this is what keeps a gateway's per-chunk latency tail short.
func TestStreamAllocationsPerChunk(t *testing.T) {
	stream := func(n int) canned {
		var b strings.Builder
		b.WriteString(`data: {"id":"c1","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n")
		for i := range n {
			fmt.Fprintf(&b, `data: {"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"word%d "}}]}`+"\n\n", i)
		}
		b.WriteString(`data: {"id":"c1","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n")
		b.WriteString(`data: {"id":"c1","model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3}}` + "\n\ndata: [DONE]\n\n")
		return canned(b.String())
	}
	allocs := func(n int) float64 {
		c, err := openai.New(&openai.Options{BaseURL: "http://upstream.invalid/v1", HTTPClient: &http.Client{Transport: stream(n)}})
		if err != nil {
			t.Fatal(err)
		}
		req := llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}
		return testing.AllocsPerRun(20, func() {
			deltas := 0
			for ev, err := range c.Stream(context.Background(), req) {
				if err != nil {
					t.Fatal(err)
				}
				if ev.Type == llm.EventTextDelta {
					deltas++
				}
			}
			if deltas != n {
				t.Fatalf("%d deltas, want %d", deltas, n)
			}
		})
	}
	short, long := allocs(10), allocs(1010)
	if perChunk := (long - short) / 1000; perChunk > 1.05 {
		t.Errorf("%.2f allocations per chunk (%.0f for 10 chunks, %.0f for 1010), want 1: the text only", perChunk, short, long)
	}
}
