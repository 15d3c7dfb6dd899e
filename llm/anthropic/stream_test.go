package anthropic_test

import (
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/anthropic"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
)

// drain collects a stream's events and its error.
func drain(seq iter.Seq2[llm.Event, error]) ([]llm.Event, error) {
	var out []llm.Event
	for ev, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
	return out, nil
}

func userRequest(text string) llm.Request {
	return llm.Request{Model: "claude-test", Messages: []llm.Message{llm.Text(llm.RoleUser, text)}}
}

func text(s string) llm.Event { return llm.Event{Type: llm.EventTextDelta, Text: s} }

func call(i int, id, name, args string) llm.Event {
	return llm.Event{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: i, ID: id, Name: name, ArgumentsDelta: args}}
}

func TestStreamEvents(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Turn{
		Chunks: []string{"Hello", ", world"},
		ToolCalls: []llm.ToolCall{
			{ID: "toolu_a", Name: "search", Arguments: `{"q":"go"}`},
			{ID: "toolu_b", Name: "now"}, // no arguments: no input_json_delta
		},
		Usage: llm.Usage{InputTokens: 30, OutputTokens: 7, CachedTokens: 10},
	})
	got, err := drain(newClient(t, srv, nil).Stream(t.Context(), userRequest("hi")))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	want := []llm.Event{
		text("Hello"),
		text(", world"),
		// The text block is content block 0, yet the first call is Index 0.
		call(0, "toolu_a", "search", ""),
		call(0, "", "", `{"q"`),
		call(0, "", "", `:"go`),
		call(0, "", "", `"}`),
		call(1, "toolu_b", "now", ""),
		call(1, "", "", "{}"),
		{Type: llm.EventFinish, FinishReason: llm.FinishToolCalls, ID: "msg_llmtest_1", Model: "claude-test",
			Usage: &llm.Usage{InputTokens: 30, OutputTokens: 7, CachedTokens: 10}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestStreamMatchesGenerate(t *testing.T) {
	turn := llmtest.Turn{
		Text: "Two calls coming.",
		ToolCalls: []llm.ToolCall{
			{ID: "toolu_1", Name: "a", Arguments: `{"n":1,"s":"é"}`},
			{ID: "toolu_2", Name: "b", Arguments: `{}`},
		},
		Usage: llm.Usage{InputTokens: 12, OutputTokens: 34, CachedTokens: 5, CacheWriteTokens: 4},
	}
	srv := llmtest.NewAnthropic(t, turn, turn)
	c := newClient(t, srv, nil)
	gen, err := c.Generate(t.Context(), userRequest("go"))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	streamed, err := llm.Collect(c.Stream(t.Context(), userRequest("go")))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	want := llm.Response{
		ID:    "msg_llmtest_1",
		Model: "claude-test",
		Message: llm.Message{Role: llm.RoleAssistant,
			Content:   []llm.Part{{Type: llm.PartText, Text: "Two calls coming."}},
			ToolCalls: turn.ToolCalls,
		},
		FinishReason: llm.FinishToolCalls,
		Usage:        turn.Usage,
	}
	if diff := cmp.Diff(want, gen); diff != "" {
		t.Errorf("Generate (-want +got):\n%s", diff)
	}
	want.ID = "msg_llmtest_2"
	if diff := cmp.Diff(want, streamed); diff != "" {
		t.Errorf("collected Stream (-want +got):\n%s", diff)
	}
}

func TestStreamFinishReasons(t *testing.T) {
	for _, reason := range []llm.FinishReason{llm.FinishStop, llm.FinishLength, llm.FinishContentFilter, llm.FinishToolCalls} {
		t.Run(string(reason), func(t *testing.T) {
			turn := llmtest.Turn{Text: "x", FinishReason: reason}
			srv := llmtest.NewAnthropic(t, turn, turn)
			c := newClient(t, srv, nil)
			streamed, err := llm.Collect(c.Stream(t.Context(), userRequest("hi")))
			if err != nil {
				t.Fatal(err)
			}
			gen, err := c.Generate(t.Context(), userRequest("hi"))
			if err != nil {
				t.Fatal(err)
			}
			if streamed.FinishReason != reason || gen.FinishReason != reason {
				t.Errorf("finish reason: stream %q, generate %q, want %q", streamed.FinishReason, gen.FinishReason, reason)
			}
		})
	}
}

// serveSSE serves one fixed answer, for event shapes the scripted fake
// does not produce (thinking, server tools, newer usage fields).
func serveSSE(t *testing.T, transcript string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, transcript)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		typ, data, _ := strings.Cut(e, " ")
		b.WriteString("event: " + typ + "\ndata: " + data + "\n\n")
	}
	return b.String()
}

func TestStreamThinkingAndServerTools(t *testing.T) {
	srv := serveSSE(t, sse(
		`message_start {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"usage":{"input_tokens":5,"cache_creation_input_tokens":2,"cache_read_input_tokens":3,"output_tokens":1}}}`,
		`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think"}}`,
		`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2ln"}}`,
		`content_block_stop {"type":"content_block_stop","index":0}`,
		// A server tool runs at Anthropic: it is not a call for us.
		`content_block_start {"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`,
		`content_block_delta {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"go\"}"}}`,
		`content_block_stop {"type":"content_block_stop","index":1}`,
		`content_block_start {"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`,
		`content_block_delta {"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Answer."}}`,
		`content_block_stop {"type":"content_block_stop","index":2}`,
		// A start that already carries the whole input and no deltas.
		`content_block_start {"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_9","name":"calc","input":{"x":2}}}`,
		`content_block_stop {"type":"content_block_stop","index":3}`,
		// Newer API versions repeat the final input counters here.
		`message_delta {"type":"message_delta","delta":{"stop_reason":"refusal","stop_sequence":null},"usage":{"input_tokens":6,"cache_creation_input_tokens":2,"cache_read_input_tokens":4,"output_tokens":40}}`,
		`message_stop {"type":"message_stop"}`,
	))
	c, err := anthropic.New(&anthropic.Options{BaseURL: srv.URL, APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := drain(c.Stream(t.Context(), userRequest("hi")))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	want := []llm.Event{
		{Type: llm.EventReasoningDelta, Text: "Let me think"},
		text("Answer."),
		call(0, "toolu_9", "calc", ""),
		call(0, "", "", `{"x":2}`),
		{Type: llm.EventFinish, FinishReason: llm.FinishContentFilter, ID: "msg_1", Model: "claude-x",
			Usage: &llm.Usage{InputTokens: 12, OutputTokens: 40, CachedTokens: 4, CacheWriteTokens: 2}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestStreamToolWithoutInput covers calls whose input never arrives as
// deltas: the start has no input at all, or the only delta is empty (as
// the real API sends for a call without arguments). Both must still end
// with valid JSON arguments.
func TestStreamToolWithoutInput(t *testing.T) {
	srv := serveSSE(t, sse(
		`message_start {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}`,
		`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"now"}}`,
		`content_block_stop {"type":"content_block_stop","index":0}`,
		`content_block_start {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_2","name":"today","input":{}}}`,
		`content_block_delta {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}`,
		`content_block_stop {"type":"content_block_stop","index":1}`,
		`message_delta {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`,
		`message_stop {"type":"message_stop"}`,
	))
	c, err := anthropic.New(&anthropic.Options{BaseURL: srv.URL, APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := llm.Collect(c.Stream(t.Context(), userRequest("hi")))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	want := []llm.ToolCall{{ID: "toolu_1", Name: "now", Arguments: "{}"}, {ID: "toolu_2", Name: "today", Arguments: "{}"}}
	if diff := cmp.Diff(want, resp.Message.ToolCalls); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	if resp.Usage != (llm.Usage{InputTokens: 5, OutputTokens: 9}) {
		t.Errorf("usage %+v, want input 5 output 9", resp.Usage)
	}
}

func TestStreamEndsWithoutMessageStop(t *testing.T) {
	srv := serveSSE(t, sse(
		`message_start {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}`,
		`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Half"}}`,
	))
	c, err := anthropic.New(&anthropic.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	events, err := drain(c.Stream(t.Context(), userRequest("hi")))
	if diff := cmp.Diff([]llm.Event{text("Half")}, events); diff != "" {
		t.Errorf("events before the end (-want +got):\n%s", diff)
	}
	e := asLLMError(t, err)
	if e.Kind != llm.KindProvider || !errorsIs(err, llm.ErrIncompleteStream) {
		t.Errorf("err = %v (kind %q), want provider error wrapping ErrIncompleteStream", err, e.Kind)
	}
}

// closeTracker records whether response bodies were closed.
type closeTracker struct {
	opened, closed atomic.Int32
}

func (ct *closeTracker) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	ct.opened.Add(1)
	resp.Body = &trackedBody{ReadCloser: resp.Body, ct: ct}
	return resp, nil
}

type trackedBody struct {
	io.ReadCloser
	ct   *closeTracker
	once atomic.Bool
}

func (b *trackedBody) Close() error {
	if b.once.CompareAndSwap(false, true) {
		b.ct.closed.Add(1)
	}
	return b.ReadCloser.Close()
}

func TestStreamBreakClosesBody(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Turn{Chunks: []string{"a", "b", "c", "d"}})
	var ct closeTracker
	c := newClient(t, srv, &anthropic.Options{HTTPClient: &http.Client{Transport: &ct}})
	n := 0
	for ev, err := range c.Stream(t.Context(), userRequest("hi")) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if ev.Type == llm.EventTextDelta {
			break
		}
	}
	if n != 1 {
		t.Fatalf("got %d events before break, want 1", n)
	}
	if ct.opened.Load() != 1 || ct.closed.Load() != 1 {
		t.Errorf("after break: %d bodies opened, %d closed; want 1 and 1", ct.opened.Load(), ct.closed.Load())
	}
}

func TestStreamTimeout(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Turn{Text: "abcdefgh", Fault: &llmtest.Fault{AfterChunks: 1, Stall: timeoutStall}})
	c := newClient(t, srv, &anthropic.Options{Timeout: 100 * millisecond})
	events, err := drain(c.Stream(t.Context(), userRequest("hi")))
	if len(events) != 1 {
		t.Errorf("got %d events before the stall, want 1", len(events))
	}
	if e := asLLMError(t, err); e.Kind != llm.KindTimeout {
		t.Errorf("kind %q, want timeout: %v", e.Kind, err)
	}
}

// TestStreamCorruptEvent checks that an event whose JSON is cut short
// after the stream began is an incomplete stream, as a dropped
// connection is: the retry middleware may retry it.
func TestStreamCorruptEvent(t *testing.T) {
	srv := serveSSE(t, sse(
		`message_start {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}`,
		`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Half"}}`,
		`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_de`,
		`message_stop {"type":"message_stop"}`,
	))
	c, err := anthropic.New(&anthropic.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	events, err := drain(c.Stream(t.Context(), userRequest("hi")))
	if diff := cmp.Diff([]llm.Event{text("Half")}, events); diff != "" {
		t.Errorf("events before the corrupt one (-want +got):\n%s", diff)
	}
	e := asLLMError(t, err)
	if e.Kind != llm.KindProvider || !errorsIs(err, llm.ErrIncompleteStream) {
		t.Errorf("err = %v (kind %q), want provider error wrapping ErrIncompleteStream", err, e.Kind)
	}
}

// bodyTransport answers every request with a 200 event stream of body.
type bodyTransport struct{ body []byte }

func (bt bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(strings.NewReader(string(bt.body))),
		Request:    r,
	}, nil
}

// FuzzStream feeds arbitrary bytes to the stream decoder: it must never
// panic, and it must keep the stream contract (one finish event, last,
// or one *llm.Error and no finish).
func FuzzStream(f *testing.F) {
	f.Add([]byte(sse(
		`message_start {"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":5,"output_tokens":1}}}`,
		`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"now","input":{}}}`,
		`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":1}"}}`,
		`content_block_stop {"type":"content_block_stop","index":0}`,
		`message_delta {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`,
		`message_stop {"type":"message_stop"}`,
	)))
	f.Add([]byte(sse(`error {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)))
	f.Add([]byte("data: {\"type\":\"content_block_start\",\"index\":99999999999,\"content_block\":{\"type\":\"tool_use\"}}\n\n"))
	f.Add([]byte("data: {\"type\":\"content_block_stop\",\"index\":-1}\n\ndata: {\"type\":\"message_stop\"}{}\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := anthropic.New(&anthropic.Options{BaseURL: "http://fuzz.invalid", HTTPClient: &http.Client{Transport: bodyTransport{body}}})
		if err != nil {
			t.Fatal(err)
		}
		events, err := drain(c.Stream(t.Context(), userRequest("hi")))
		finishes := 0
		for _, ev := range events {
			if ev.Type == llm.EventFinish {
				finishes++
			}
		}
		if err != nil {
			asLLMError(t, err)
			if finishes != 0 {
				t.Errorf("failed stream has %d finish events", finishes)
			}
			return
		}
		if finishes != 1 || events[len(events)-1].Type != llm.EventFinish {
			t.Errorf("successful stream has %d finish events, last %q", finishes, events[len(events)-1].Type)
		}
	})
}
