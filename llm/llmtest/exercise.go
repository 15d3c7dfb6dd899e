package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/agentcraftlab/agentcraft/llm"
)

// Exercise is the conformance suite every provider adapter passes. It
// starts a fresh fake per subtest with newServer (NewOpenAI, NewAnthropic)
// and builds the adapter under test against it with newModel:
//
//	func TestConformance(t *testing.T) {
//		llmtest.Exercise(t, llmtest.NewOpenAI, func(srv *llmtest.Server) llm.Model {
//			c, err := openai.New(&openai.Options{BaseURL: srv.URL + "/v1"})
//			if err != nil {
//				t.Fatal(err)
//			}
//			return c
//		})
//	}
//
// The suite covers text and tool calls, generated and streamed; the
// mapping of a request onto the wire (checked without knowing the
// provider's JSON shape: the values must reach the body); HTTP and
// in-stream errors with their kinds, statuses and retry delays; truncated
// and stalled streams; cancellation; and that breaking out of a stream
// releases its connection. It ends by checking that no goroutine leaked,
// so it must not run in parallel with other tests of its package.
func Exercise(t *testing.T, newServer func(t testing.TB, turns ...Turn) *Server, newModel func(srv *Server) llm.Model) {
	t.Helper()
	before := goleak.IgnoreCurrent()
	x := exercise{newServer: newServer, newModel: newModel}

	t.Run("generate/text", x.generateText)
	t.Run("generate/length", x.generateLength)
	t.Run("generate/tool_calls", x.generateToolCalls)
	t.Run("stream/text", x.streamText)
	t.Run("stream/length", x.streamLength)
	t.Run("stream/tool_calls", x.streamToolCalls)
	t.Run("request_mapping", x.requestMapping)
	t.Run("error/rate_limit", x.rateLimit)
	t.Run("error/unavailable", x.unavailable)
	t.Run("error/in_stream", x.inStreamError)
	t.Run("error/truncated", x.truncated)
	t.Run("cancel/stream_timeout", x.streamTimeout)
	t.Run("cancel/stream_cancel", x.streamCancel)
	t.Run("cancel/generate_timeout", x.generateTimeout)
	t.Run("break_releases_connection", x.breakEarly)
	t.Run("connection_reused", x.connectionReused)
	t.Run("no_goroutine_leak", func(t *testing.T) { verifyNoLeaks(t, before) })
}

type exercise struct {
	newServer func(t testing.TB, turns ...Turn) *Server
	newModel  func(srv *Server) llm.Model
}

// exerciseModel is the model id every request of the suite names.
const exerciseModel = "llmtest-model"

// prompt is a minimal request.
func prompt() llm.Request {
	return llm.Request{Model: exerciseModel, Messages: []llm.Message{llm.Text(llm.RoleUser, "Say hello.")}}
}

// start builds a fake scripted with turns and the model under test.
func (x exercise) start(t *testing.T, turns ...Turn) (*Server, llm.Model, context.Context) {
	t.Helper()
	srv := x.newServer(t, turns...)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	t.Cleanup(func() {
		if n := srv.Remaining(); n != 0 {
			t.Errorf("%d scripted turn(s) were not requested", n)
		}
	})
	return srv, x.newModel(srv), ctx
}

// connectionReused: consecutive requests, streamed or not, share one
// kept-alive connection. An adapter that closes a body before its end
// (say, right after the last event) makes every request pay for a new
// connection to the provider.
func (x exercise) connectionReused(t *testing.T) {
	turn := Turn{Text: "Hello again.", Usage: exerciseUsage}
	srv, m, ctx := x.start(t, turn, turn, turn, turn)
	for i := range 2 {
		if _, err := llm.Collect(m.Stream(ctx, prompt())); err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		if _, err := m.Generate(ctx, prompt()); err != nil {
			t.Fatalf("generate %d: %v", i, err)
		}
	}
	reqs := srv.Requests()
	for i, r := range reqs[1:] {
		if r.RemoteAddr != reqs[0].RemoteAddr {
			t.Errorf("request %d came on a new connection (%s, first was %s)", i+2, r.RemoteAddr, reqs[0].RemoteAddr)
		}
	}
}

var exerciseUsage = llm.Usage{InputTokens: 120, OutputTokens: 31, CachedTokens: 100}

func (x exercise) generateText(t *testing.T) {
	_, m, ctx := x.start(t, Turn{Text: "Hello from llmtest!", Usage: exerciseUsage})
	resp, err := m.Generate(ctx, prompt())
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	got := llm.Response{Message: resp.Message, FinishReason: resp.FinishReason, Usage: resp.Usage}
	want := llm.Response{
		Message:      llm.Text(llm.RoleAssistant, "Hello from llmtest!"),
		FinishReason: llm.FinishStop,
		Usage:        exerciseUsage,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Generate (-want +got):\n%s", diff)
	}
}

func (x exercise) generateLength(t *testing.T) {
	_, m, ctx := x.start(t, Turn{Text: "cut sh", FinishReason: llm.FinishLength})
	resp, err := m.Generate(ctx, prompt())
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if resp.FinishReason != llm.FinishLength {
		t.Errorf("FinishReason = %q, want %q", resp.FinishReason, llm.FinishLength)
	}
}

// twoCalls is an answer with text and two parallel tool calls.
var twoCalls = Turn{
	Text: "Checking both.",
	ToolCalls: []llm.ToolCall{
		{ID: "call_weather", Name: "get_weather", Arguments: `{"city":"Paris","unit":"celsius"}`},
		{ID: "call_time", Name: "get_time", Arguments: `{"timezone":"Europe/Paris"}`},
	},
	Usage: exerciseUsage,
}

func (x exercise) generateToolCalls(t *testing.T) {
	_, m, ctx := x.start(t, twoCalls)
	resp, err := m.Generate(ctx, prompt())
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	want := llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartText, Text: twoCalls.Text}}, ToolCalls: twoCalls.ToolCalls}
	if diff := cmp.Diff(want, resp.Message); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
	if resp.FinishReason != llm.FinishToolCalls {
		t.Errorf("FinishReason = %q, want %q", resp.FinishReason, llm.FinishToolCalls)
	}
}

// drained is what a stream yielded.
type drained struct {
	events []llm.Event
	err    error
	// extra counts items yielded after an error or a finish event, which
	// the llm.Model contract forbids.
	extra int
}

// drain ranges over a whole stream, running body (if given) on each event.
func drain(seq iter.Seq2[llm.Event, error], body func(llm.Event)) drained {
	var d drained
	for ev, err := range seq {
		if d.err != nil || (len(d.events) > 0 && d.events[len(d.events)-1].Type == llm.EventFinish) {
			d.extra++
			continue
		}
		if err != nil {
			d.err = err
			continue
		}
		d.events = append(d.events, ev)
		if body != nil {
			body(ev)
		}
	}
	return d
}

// text joins the text deltas.
func (d drained) text() string {
	var b strings.Builder
	for _, ev := range d.events {
		if ev.Type == llm.EventTextDelta {
			b.WriteString(ev.Text)
		}
	}
	return b.String()
}

// check verifies the stream contract: nothing after an error or the
// finish event; a successful stream ends with exactly one finish event;
// a failed one has none.
func (d drained) check(t *testing.T) {
	t.Helper()
	if d.extra > 0 {
		t.Errorf("stream yielded %d item(s) after its error or finish event", d.extra)
	}
	finishes := 0
	for _, ev := range d.events {
		if ev.Type == llm.EventFinish {
			finishes++
		}
	}
	switch {
	case d.err == nil && (finishes != 1 || d.events[len(d.events)-1].Type != llm.EventFinish):
		t.Errorf("successful stream has %d finish event(s), want exactly one, last", finishes)
	case d.err != nil && finishes != 0:
		t.Errorf("failed stream has %d finish event(s), want none", finishes)
	}
}

func (d drained) finish() llm.Event {
	if n := len(d.events); n > 0 && d.events[n-1].Type == llm.EventFinish {
		return d.events[n-1]
	}
	return llm.Event{}
}

func (x exercise) streamText(t *testing.T) {
	chunks := []string{"Hel", "lo ", "from ", "llm", "test!"}
	_, m, ctx := x.start(t, Turn{Chunks: chunks, Usage: exerciseUsage})
	d := drain(m.Stream(ctx, prompt()), nil)
	d.check(t)
	if d.err != nil {
		t.Fatalf("Stream: %v", d.err)
	}
	deltas := 0
	for _, ev := range d.events {
		if ev.Type == llm.EventTextDelta {
			deltas++
		}
	}
	if deltas < 2 {
		t.Errorf("text came in %d delta(s), want it streamed in several", deltas)
	}
	if got := d.text(); got != strings.Join(chunks, "") {
		t.Errorf("text deltas join to %q, want %q", got, strings.Join(chunks, ""))
	}
	fin := d.finish()
	if fin.FinishReason != llm.FinishStop {
		t.Errorf("FinishReason = %q, want %q", fin.FinishReason, llm.FinishStop)
	}
	if fin.Usage == nil {
		t.Fatal("finish event carries no usage")
	}
	if diff := cmp.Diff(exerciseUsage, *fin.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

func (x exercise) streamLength(t *testing.T) {
	_, m, ctx := x.start(t, Turn{Text: "cut sh", FinishReason: llm.FinishLength})
	d := drain(m.Stream(ctx, prompt()), nil)
	d.check(t)
	if d.err != nil {
		t.Fatalf("Stream: %v", d.err)
	}
	if got := d.finish().FinishReason; got != llm.FinishLength {
		t.Errorf("FinishReason = %q, want %q", got, llm.FinishLength)
	}
}

func (x exercise) streamToolCalls(t *testing.T) {
	_, m, ctx := x.start(t, twoCalls)
	d := drain(m.Stream(ctx, prompt()), nil)
	d.check(t)
	if d.err != nil {
		t.Fatalf("Stream: %v", d.err)
	}
	var acc llm.Accumulator
	fragments := map[int]int{}
	for _, ev := range d.events {
		if ev.Type == llm.EventToolCallDelta {
			if ev.ToolCall == nil {
				t.Fatal("tool call delta without ToolCall")
			}
			if ev.ToolCall.ArgumentsDelta != "" {
				fragments[ev.ToolCall.Index]++
			}
		}
		acc.Add(ev)
	}
	resp := acc.Response()
	want := llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartText, Text: twoCalls.Text}}, ToolCalls: twoCalls.ToolCalls}
	if diff := cmp.Diff(want, resp.Message); diff != "" {
		t.Errorf("accumulated message (-want +got):\n%s", diff)
	}
	if fragments[0] < 2 || fragments[1] < 2 {
		t.Errorf("arguments arrived in %v fragments per call, want each streamed in several", fragments)
	}
	if resp.FinishReason != llm.FinishToolCalls {
		t.Errorf("FinishReason = %q, want %q", resp.FinishReason, llm.FinishToolCalls)
	}
	if diff := cmp.Diff(exerciseUsage, resp.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

// pngPayload is a 1x1 PNG: the image of mappingRequest.
const pngPayload = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

// mappingRequest holds one of everything a request can carry.
func mappingRequest() llm.Request {
	temp := 0.25
	return llm.Request{
		Model: exerciseModel,
		Messages: []llm.Message{
			llm.Text(llm.RoleSystem, "You are a terse assistant."),
			{Role: llm.RoleUser, Content: []llm.Part{
				{Type: llm.PartText, Text: "What is in this picture, and the weather?"},
				{Type: llm.PartImage, ImageURL: "data:image/png;base64," + pngPayload},
			}},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_mapping_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
			llm.ToolResult("call_mapping_1", "18C and sunny", false),
		},
		Tools: []llm.ToolDef{{
			Name:        "get_weather",
			Description: "Current weather for a city.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"units":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["city"]}`),
		}},
		Temperature: &temp,
		MaxTokens:   321,
	}
}

func (x exercise) requestMapping(t *testing.T) {
	srv, m, ctx := x.start(t, Turn{Text: "A pixel. Sunny."}, Turn{Text: "A pixel. Sunny."})
	if _, err := m.Generate(ctx, mappingRequest()); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if d := drain(m.Stream(ctx, mappingRequest()), nil); d.err != nil {
		t.Fatalf("Stream: %v", d.err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("fake received %d requests, want 2", len(reqs))
	}
	for i, r := range reqs {
		name := [...]string{"Generate", "Stream"}[i]
		var body any
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatalf("%s: request body is not JSON: %v", name, err)
		}
		var w wire
		w.walk(body)
		for _, s := range []string{
			exerciseModel,
			"You are a terse assistant.",
			"What is in this picture, and the weather?",
			pngPayload,
			"Paris", // the assistant's tool call arguments
			"18C and sunny",
			"Current weather for a city.",
			"fahrenheit", // deep inside the tool's schema
		} {
			if !w.contains(s) {
				t.Errorf("%s: %q does not reach the request body", name, s)
			}
		}
		// The call id links the assistant's call and the tool result; the
		// tool name appears in the tool list and in the call.
		for s, n := range map[string]int{"call_mapping_1": 2, "get_weather": 2} {
			if got := w.strings[s]; got < n {
				t.Errorf("%s: %q appears %d time(s) in the request body, want %d", name, s, got, n)
			}
		}
		for _, key := range []string{"city", "units"} {
			if !w.keys[key] {
				t.Errorf("%s: schema property %q does not reach the request body", name, key)
			}
		}
		for _, n := range []float64{0.25, 321} {
			if !w.numbers[n] {
				t.Errorf("%s: number %v (temperature, max tokens) does not reach the request body", name, n)
			}
		}
	}
}

// wire indexes the values of a decoded JSON body, so that the suite can
// check a request without knowing the provider's layout.
type wire struct {
	strings map[string]int
	numbers map[float64]bool
	keys    map[string]bool
}

func (w *wire) walk(v any) {
	if w.strings == nil {
		w.strings, w.numbers, w.keys = map[string]int{}, map[float64]bool{}, map[string]bool{}
	}
	switch v := v.(type) {
	case string:
		w.strings[v]++
	case float64:
		w.numbers[v] = true
	case []any:
		for _, e := range v {
			w.walk(e)
		}
	case map[string]any:
		for k, e := range v {
			w.keys[k] = true
			w.walk(e)
		}
	}
}

// contains reports whether some string value holds s.
func (w *wire) contains(s string) bool {
	for v := range w.strings {
		if strings.Contains(v, s) {
			return true
		}
	}
	return false
}

// llmError asserts that err is an *llm.Error and returns it.
func llmError(t *testing.T, err error) *llm.Error {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *llm.Error", err, err)
	}
	return e
}

func (x exercise) rateLimit(t *testing.T) {
	srv, m, ctx := x.start(t,
		Turn{Fault: &Fault{Status: 429, RetryAfter: "7", Message: "slow down"}},
		Turn{Fault: &Fault{Status: 429, RetryAfterMs: "1500", Message: "slow down"}},
	)
	_, err := m.Generate(ctx, prompt())
	d := drain(m.Stream(ctx, prompt()), nil)
	d.check(t)
	if len(d.events) != 0 {
		t.Errorf("stream yielded %d event(s) before the error", len(d.events))
	}
	for i, tc := range []struct {
		err   error
		delay time.Duration
	}{{err, 7 * time.Second}, {d.err, 1500 * time.Millisecond}} {
		name := [...]string{"Generate", "Stream"}[i]
		e := llmError(t, tc.err)
		got := llm.Error{Kind: e.Kind, Status: e.Status, RetryAfter: e.RetryAfter}
		want := llm.Error{Kind: llm.KindRateLimit, Status: 429, RetryAfter: tc.delay}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s error %v (-want +got):\n%s", name, e, diff)
		}
		if !strings.Contains(e.Message, "slow down") {
			t.Errorf("%s error message %q does not carry the provider's message", name, e.Message)
		}
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("fake received %d requests, want 2: retrying is the middleware's job", n)
	}
}

func (x exercise) unavailable(t *testing.T) {
	_, m, ctx := x.start(t, Turn{Fault: &Fault{Status: 503}}, Turn{Fault: &Fault{Status: 503}})
	_, err := m.Generate(ctx, prompt())
	d := drain(m.Stream(ctx, prompt()), nil)
	d.check(t)
	for i, err := range []error{err, d.err} {
		e := llmError(t, err)
		if e.Kind != llm.KindProvider || e.Status != 503 {
			t.Errorf("%s: error %v has kind %q status %d, want %q 503", [...]string{"Generate", "Stream"}[i], e, e.Kind, e.Status, llm.KindProvider)
		}
	}
}

// fourChunks is an answer streamed in four text pieces; faults strike
// after the second.
var fourChunks = []string{"one ", "two ", "three ", "four"}

func (x exercise) inStreamError(t *testing.T) {
	_, m, ctx := x.start(t, Turn{Chunks: fourChunks, Fault: &Fault{AfterChunks: 2, Status: 529, Message: "overloaded"}})
	d := drain(m.Stream(ctx, prompt()), nil)
	d.check(t)
	if got := d.text(); got != "one two " {
		t.Errorf("text before the error = %q, want %q", got, "one two ")
	}
	if d.err == nil {
		t.Fatal("stream succeeded, want the in-stream error")
	}
	e := llmError(t, d.err)
	if e.Kind != llm.KindProvider {
		t.Errorf("error %v has kind %q, want %q", e, e.Kind, llm.KindProvider)
	}
	if !strings.Contains(e.Error(), "overloaded") {
		t.Errorf("error %q does not carry the provider's message", e.Error())
	}
}

func (x exercise) truncated(t *testing.T) {
	_, m, ctx := x.start(t,
		Turn{Chunks: fourChunks, Fault: &Fault{AfterChunks: 2, Truncate: true}},
		Turn{Chunks: fourChunks, Fault: &Fault{AfterChunks: 2, Truncate: true}},
	)
	d := drain(m.Stream(ctx, prompt()), nil)
	d.check(t)
	if got := d.text(); got != "one two " {
		t.Errorf("text before the cut = %q, want %q", got, "one two ")
	}
	if d.err == nil {
		t.Fatal("truncated stream succeeded, want an error")
	}
	if e := llmError(t, d.err); e.Kind != llm.KindProvider || !errors.Is(e, llm.ErrIncompleteStream) {
		t.Errorf("Stream error %v has kind %q, want %q wrapping llm.ErrIncompleteStream", e, e.Kind, llm.KindProvider)
	}
	_, err := m.Generate(ctx, prompt())
	if e := llmError(t, err); e.Kind != llm.KindProvider {
		t.Errorf("Generate error %v has kind %q, want %q", e, e.Kind, llm.KindProvider)
	}
}

// stalled is an answer that stops for a minute after two pieces.
var stalled = Turn{Chunks: fourChunks, Fault: &Fault{AfterChunks: 2, Stall: time.Minute}}

// promptly bounds how long a canceled call may take to return.
const promptly = 5 * time.Second

func (x exercise) streamTimeout(t *testing.T) {
	_, m, ctx := x.start(t, stalled)
	ctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	d := drain(m.Stream(ctx, prompt()), nil)
	elapsed := time.Since(start)
	d.check(t)
	if elapsed > 300*time.Millisecond+promptly {
		t.Errorf("stalled stream returned %v after its deadline, want promptly", elapsed-300*time.Millisecond)
	}
	if got := d.text(); got != "one two " {
		t.Errorf("text before the stall = %q, want %q", got, "one two ")
	}
	if d.err == nil {
		t.Fatal("stalled stream succeeded, want a timeout")
	}
	if e := llmError(t, d.err); e.Kind != llm.KindTimeout || !errors.Is(e, context.DeadlineExceeded) {
		t.Errorf("error %v has kind %q, want %q wrapping context.DeadlineExceeded", e, e.Kind, llm.KindTimeout)
	}
}

func (x exercise) streamCancel(t *testing.T) {
	_, m, ctx := x.start(t, stalled)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var canceled time.Time
	d := drain(m.Stream(ctx, prompt()), func(ev llm.Event) {
		if ev.Type == llm.EventTextDelta && ev.Text == "two " {
			canceled = time.Now()
			cancel()
		}
	})
	d.check(t)
	if canceled.IsZero() {
		t.Fatalf("stream ended (error %v) before its second piece", d.err)
	}
	if elapsed := time.Since(canceled); elapsed > promptly {
		t.Errorf("stream ended %v after cancel, want promptly", elapsed)
	}
	if d.err == nil {
		t.Fatal("canceled stream succeeded, want an error")
	}
	if e := llmError(t, d.err); e.Kind != llm.KindCanceled || !errors.Is(e, context.Canceled) {
		t.Errorf("error %v has kind %q, want %q wrapping context.Canceled", e, e.Kind, llm.KindCanceled)
	}
}

func (x exercise) generateTimeout(t *testing.T) {
	_, m, ctx := x.start(t, stalled)
	ctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := m.Generate(ctx, prompt())
	if elapsed := time.Since(start); elapsed > 300*time.Millisecond+promptly {
		t.Errorf("stalled Generate returned %v after its deadline, want promptly", elapsed-300*time.Millisecond)
	}
	if e := llmError(t, err); e.Kind != llm.KindTimeout {
		t.Errorf("error %v has kind %q, want %q", e, e.Kind, llm.KindTimeout)
	}
}

// breakEarly leaves a stream after its first delta while the fake stalls:
// the fake's answer must end (it sees the client go away) and no goroutine
// of the call may stay behind.
func (x exercise) breakEarly(t *testing.T) {
	srv, m, ctx := x.start(t, stalled)
	before := goleak.IgnoreCurrent()
	got := 0
	for ev, err := range m.Stream(ctx, prompt()) {
		if err != nil {
			t.Fatalf("Stream: %v", err)
		}
		if ev.Type == llm.EventTextDelta {
			got++
			break
		}
	}
	if got != 1 {
		t.Fatal("stream ended before its first text delta")
	}
	deadline := time.Now().Add(promptly)
	for srv.Active() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the fake still answers %v after the loop broke: the connection was not released", promptly)
		}
		time.Sleep(10 * time.Millisecond)
	}
	verifyNoLeaks(t, before)
}

// verifyNoLeaks waits up to a few seconds for stray goroutines to end,
// then reports those that remain. goleak's own retries last well under a
// second, too little for connections to wind down on a loaded machine.
func verifyNoLeaks(t *testing.T, opts ...goleak.Option) {
	t.Helper()
	deadline := time.Now().Add(promptly)
	for {
		err := goleak.Find(opts...)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("goroutines leaked: %v", err)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
