// Package traces_test is the acceptance test of OpenTelemetry tracing: a
// whole server (servertest) exports its spans to an in-test OTLP/HTTP
// receiver, which decodes them as a collector would; the tests read the
// parent/child structure, the GenAI attributes and the traceparent headers
// that reached the services tools call. Tracing is process-wide, so the
// tests of this package do not run in parallel.
package traces_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/agentcraftlab/agentcraft/internal/database"
	"github.com/agentcraftlab/agentcraft/internal/egress"
	"github.com/agentcraftlab/agentcraft/internal/tracing"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool"
)

// receiver is an OTLP/HTTP trace receiver: POST /v1/traces with an
// ExportTraceServiceRequest in protobuf, as otlptracehttp sends it.
type receiver struct {
	url string
	mu  sync.Mutex // guards raw and spans
	// raw is every request body as received (decompressed), to search for
	// text that must not be exported.
	raw   [][]byte
	spans []*tracepb.Span
	// service is the service.name of the resource the spans came with.
	service string
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	rc := &receiver{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
			t.Errorf("receiver got %s %s, want POST /v1/traces", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/x-protobuf" {
			t.Errorf("export Content-Type %q, want application/x-protobuf", ct)
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				t.Errorf("gzip: %v", err)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(body)
		if err != nil {
			t.Errorf("read export: %v", err)
			return
		}
		var req collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			t.Errorf("export is not an ExportTraceServiceRequest: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		rc.raw = append(rc.raw, b)
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.Key == "service.name" {
					rc.service = kv.Value.GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				rc.spans = append(rc.spans, ss.Spans...)
			}
		}
		rc.mu.Unlock()
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(hs.Close)
	rc.url = hs.URL
	return rc
}

// trace turns tracing on towards rc for the rest of the test; flush
// exports what was recorded and turns it off.
func (rc *receiver) start(t *testing.T, capture bool) (flush func()) {
	t.Helper()
	p, err := tracing.Setup(context.Background(), tracing.Config{Endpoint: rc.url, SampleRatio: 1, CaptureContent: capture,
		ServiceName: "agentcraft-test", ServiceVersion: "test", BatchTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	done := false
	t.Cleanup(func() {
		if !done {
			_ = p.Shutdown(context.Background())
		}
	})
	return func() {
		t.Helper()
		done = true
		if err := p.Shutdown(context.Background()); err != nil {
			t.Fatalf("flush spans: %v", err)
		}
	}
}

func (rc *receiver) all() []*tracepb.Span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.spans)
}

func (rc *receiver) contains(s string) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, b := range rc.raw {
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

// spans indexes exported spans by id.
type spans struct {
	t    *testing.T
	byID map[string]*tracepb.Span
	list []*tracepb.Span
}

func index(t *testing.T, list []*tracepb.Span) spans {
	s := spans{t: t, byID: map[string]*tracepb.Span{}, list: list}
	for _, sp := range list {
		s.byID[hex.EncodeToString(sp.SpanId)] = sp
	}
	return s
}

// named returns the spans called name, in start order.
func (s spans) named(name string) []*tracepb.Span {
	var out []*tracepb.Span
	for _, sp := range s.list {
		if sp.Name == name {
			out = append(out, sp)
		}
	}
	slices.SortFunc(out, func(a, b *tracepb.Span) int { return int(int64(a.StartTimeUnixNano) - int64(b.StartTimeUnixNano)) })
	return out
}

// one returns the only span called name.
func (s spans) one(name string) *tracepb.Span {
	s.t.Helper()
	got := s.named(name)
	if len(got) != 1 {
		s.t.Fatalf("%d spans named %q, want 1; exported: %s", len(got), name, s.names())
	}
	return got[0]
}

func (s spans) names() string {
	var names []string
	for _, sp := range s.list {
		parent := "-"
		if p := s.byID[hex.EncodeToString(sp.ParentSpanId)]; p != nil {
			parent = p.Name
		}
		names = append(names, fmt.Sprintf("%q<-%q", sp.Name, parent))
	}
	return strings.Join(names, ", ")
}

// childOf fails unless child's parent is parent, in the same trace.
func (s spans) childOf(child, parent *tracepb.Span) {
	s.t.Helper()
	if !bytes.Equal(child.ParentSpanId, parent.SpanId) || !bytes.Equal(child.TraceId, parent.TraceId) {
		got := "none"
		if p := s.byID[hex.EncodeToString(child.ParentSpanId)]; p != nil {
			got = p.Name
		}
		s.t.Errorf("span %q has parent %s, want %q", child.Name, got, parent.Name)
	}
}

func attr(sp *tracepb.Span, key string) *commonpb.AnyValue {
	for _, kv := range sp.Attributes {
		if kv.Key == key {
			return kv.Value
		}
	}
	return nil
}

func str(sp *tracepb.Span, key string) string { return attr(sp, key).GetStringValue() }

func num(sp *tracepb.Span, key string) int64 { return attr(sp, key).GetIntValue() }

func strs(sp *tracepb.Span, key string) []string {
	var out []string
	for _, v := range attr(sp, key).GetArrayValue().GetValues() {
		out = append(out, v.GetStringValue())
	}
	return out
}

// wantAttrs fails for each attribute of sp that is not as wanted (a string
// or an int64).
func wantAttrs(t *testing.T, sp *tracepb.Span, want map[string]any) {
	t.Helper()
	for k, w := range want {
		var got any
		switch w.(type) {
		case string:
			got = str(sp, k)
		case int64:
			got = num(sp, k)
		case []string:
			got = strs(sp, k)
			if slices.Equal(got.([]string), w.([]string)) {
				continue
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("span %q: %s = %v, want %v", sp.Name, k, got, w)
		}
	}
}

const (
	prompt   = "PROMPT-TEXT-4417 what is six times seven?"
	answer   = "ANSWER-TEXT-9120 it is 42"
	toolArgs = `{"expression":"6*7"}`
	flowIn   = "FLOW-INPUT-5531 budget"
)

// scriptChat makes the fake call calculator, then answer, with scripted
// token counts: 11+7, then 23+5.
func scriptChat(fake *llmtest.Server) {
	fake.Push(
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "call_calc_1", Name: "calculator", Arguments: toolArgs}}, Usage: llm.Usage{InputTokens: 11, OutputTokens: 7}},
		llmtest.Turn{Text: answer, Usage: llm.Usage{InputTokens: 23, OutputTokens: 5}},
	)
}

const chatBody = `{"model":"helper","stream":true,"messages":[{"role":"user","content":"` + prompt + `"}]}`

func newServer(t *testing.T, fake *llmtest.Server, builtins *tool.BuiltinOptions) (*servertest.Env, servertest.Client) {
	t.Helper()
	env := servertest.New(t, &servertest.Options{
		Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)},
		Agents: []platform.AgentSpec{
			{Name: "helper", Model: "fake/m", Instructions: "You are helpful.", Tools: []string{"calculator"}},
			{Name: "writer", Model: "fake/m", Instructions: "You write memos."},
		},
		Workflows: true,
		Builtins:  builtins,
	})
	return env, servertest.Client{T: t, Base: env.URL, Key: env.Key}
}

// TestTraceOfChatAndWorkflowRun is the acceptance test: a streamed
// /v1/chat/completions whose model calls a tool, and a workflow run with
// an agent node, export the span trees
//
//	POST /v1/chat/completions → invoke_agent helper → chat m (×2), execute_tool calculator
//	run_workflow memo → node draft → invoke_agent writer → chat m
//
// with the GenAI attributes and the scripted token counts, and no prompt,
// completion or tool argument text anywhere in the export.
func TestTraceOfChatAndWorkflowRun(t *testing.T) {
	rc := newReceiver(t)
	fake := llmtest.NewOpenAI(t)
	env, c := newServer(t, fake, nil)
	flush := rc.start(t, false)

	scriptChat(fake)
	resp, body := c.Do("POST", "/v1/chat/completions", chatBody)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"finish_reason":"stop"`) {
		t.Fatalf("chat = %d %s", resp.StatusCode, body)
	}

	fake.Push(llmtest.Turn{Text: "A memo.", Usage: llm.Usage{InputTokens: 31, OutputTokens: 3}})
	var wf store.Workflow
	c.JSON("POST", "/api/workflows", `{"name":"memo","nodes":[{"id":"start","type":"start"},
{"id":"draft","type":"agent","config":{"agent":"writer","prompt":"Draft: {{input}}"}},
{"id":"end","type":"end"}],
"edges":[{"id":"e1","source":"start","target":"draft"},{"id":"e2","source":"draft","target":"end"}]}`, http.StatusCreated, &wf)
	var run store.Run
	c.JSON("POST", "/api/workflows/"+wf.ID+"/runs", `{"input":"`+flowIn+`"}`, http.StatusAccepted, &run)
	env.Runs.Wait()
	got, err := env.Store.Runs().Get(context.Background(), env.Workspace.ID, run.ID)
	if err != nil || got.Status != store.RunSucceeded {
		t.Fatalf("run = %+v, %v; want succeeded", got, err)
	}
	flush()

	if rc.service != "agentcraft-test" {
		t.Errorf("resource service.name = %q, want agentcraft-test", rc.service)
	}
	s := index(t, rc.all())

	// (a) The chat.
	httpSpan := s.one("POST /v1/chat/completions")
	if httpSpan.Kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("HTTP span kind = %v, want server", httpSpan.Kind)
	}
	wantAttrs(t, httpSpan, map[string]any{"http.request.method": "POST", "http.route": "/v1/chat/completions", "http.response.status_code": int64(200)})
	agentSpan := s.one("invoke_agent helper")
	s.childOf(agentSpan, httpSpan)
	wantAttrs(t, agentSpan, map[string]any{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper", "gen_ai.request.model": "m",
		"gen_ai.usage.input_tokens": int64(34), "gen_ai.usage.output_tokens": int64(12), "agentcraft.surface": "openai"})
	chats := s.named("chat m")
	var chatOfChat []*tracepb.Span
	for _, sp := range chats {
		if bytes.Equal(sp.TraceId, httpSpan.TraceId) {
			chatOfChat = append(chatOfChat, sp)
		}
	}
	if len(chatOfChat) != 2 {
		t.Fatalf("%d chat spans in the chat's trace, want 2; exported: %s", len(chatOfChat), s.names())
	}
	for i, want := range []struct {
		in, out int64
		finish  string
	}{{11, 7, "tool_calls"}, {23, 5, "stop"}} {
		sp := chatOfChat[i]
		s.childOf(sp, agentSpan)
		if sp.Kind != tracepb.Span_SPAN_KIND_CLIENT {
			t.Errorf("chat span kind = %v, want client", sp.Kind)
		}
		wantAttrs(t, sp, map[string]any{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "m",
			"gen_ai.usage.input_tokens": want.in, "gen_ai.usage.output_tokens": want.out,
			"gen_ai.response.finish_reasons": []string{want.finish}, "agentcraft.provider": "fake"})
		if str(sp, "gen_ai.response.model") == "" {
			t.Errorf("chat span %d has no gen_ai.response.model", i)
		}
		if attr(sp, "gen_ai.input.messages") != nil || attr(sp, "gen_ai.output.messages") != nil {
			t.Errorf("chat span %d records messages with capture_content off", i)
		}
	}
	// The provider's requests carry their chat span's traceparent, so a
	// model server that traces continues the trace; no HTTP span is
	// made under the chat span (it is the client span).
	reqs := fake.Requests()
	if len(reqs) < 2 {
		t.Fatalf("the provider saw %d requests, want the chat's two first", len(reqs))
	}
	for i, sp := range chatOfChat {
		if got, want := reqs[i].Header.Get("traceparent"), "00-"+hex.EncodeToString(sp.TraceId)+"-"+hex.EncodeToString(sp.SpanId)+"-01"; got != want {
			t.Errorf("model request %d traceparent = %q, want chat span's %q", i, got, want)
		}
	}
	if n := len(s.named("POST")); n != 0 {
		t.Errorf("%d HTTP client spans of model requests, want none (the chat span is the client span)", n)
	}
	toolSpan := s.one("execute_tool calculator")
	s.childOf(toolSpan, agentSpan)
	wantAttrs(t, toolSpan, map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "calculator", "gen_ai.tool.call.id": "call_calc_1"})
	if attr(toolSpan, "gen_ai.tool.call.arguments") != nil || attr(toolSpan, "gen_ai.tool.call.result") != nil {
		t.Error("execute_tool records the arguments or the result with capture_content off")
	}
	// The tool ran between the two model calls.
	if toolSpan.StartTimeUnixNano < chatOfChat[0].EndTimeUnixNano || toolSpan.EndTimeUnixNano > chatOfChat[1].StartTimeUnixNano {
		t.Error("execute_tool does not lie between the two chat spans")
	}

	// The model-call log lines of the chat carry its trace id.
	wantLog := "trace_id=" + hex.EncodeToString(httpSpan.TraceId)
	found := false
	for _, line := range strings.Split(env.Log.String(), "\n") {
		if strings.Contains(line, `msg="llm request finished"`) && strings.Contains(line, wantLog) {
			found = true
		}
	}
	if !found {
		t.Errorf("no \"llm request finished\" log line with %s:\n%s", wantLog, env.Log.String())
	}

	// (b) The workflow run.
	runSpan := s.one("run_workflow memo")
	wantAttrs(t, runSpan, map[string]any{"agentcraft.run.id": run.ID, "agentcraft.workflow.id": wf.ID, "agentcraft.run.status": "succeeded"})
	node := s.one("node draft")
	s.childOf(node, runSpan)
	wantAttrs(t, node, map[string]any{"agentcraft.node.id": "draft", "agentcraft.node.kind": "agent"})
	if n := len(s.named("node start")) + len(s.named("node end")); n != 0 {
		t.Errorf("%d spans of start and end nodes, want none", n)
	}
	writer := s.one("invoke_agent writer")
	s.childOf(writer, node)
	wantAttrs(t, writer, map[string]any{"agentcraft.run.id": run.ID, "agentcraft.surface": "workflow"})
	var flowChat *tracepb.Span
	for _, sp := range chats {
		if bytes.Equal(sp.ParentSpanId, writer.SpanId) {
			flowChat = sp
		}
	}
	if flowChat == nil {
		t.Fatalf("no chat span under invoke_agent writer; exported: %s", s.names())
	}
	wantAttrs(t, flowChat, map[string]any{"gen_ai.usage.input_tokens": int64(31), "gen_ai.usage.output_tokens": int64(3)})
	// Started by a request of this process, the run continues its trace.
	start := s.one("POST /api/workflows/{id}/runs")
	if !bytes.Equal(runSpan.TraceId, start.TraceId) {
		t.Error("the run's span is not in the trace of the request that started it")
	}

	for _, secret := range []string{"PROMPT-TEXT-4417", "ANSWER-TEXT-9120", "You are helpful", "6*7", "FLOW-INPUT-5531", "A memo."} {
		if rc.contains(secret) {
			t.Errorf("the export contains %q with capture_content off", secret)
		}
	}
}

// TestTraceOfQueuedWorkflowRun: a workflow run started by an HTTP request
// and executed from the job queue (River, as serve and agentcraft worker
// execute runs: the handler starts from the queue's context, not the
// request's) is in the request's trace, its run_workflow span a child of
// the request's span, because the run carries the request's trace context.
func TestTraceOfQueuedWorkflowRun(t *testing.T) {
	rc := newReceiver(t)
	fake := llmtest.NewOpenAI(t)
	env := servertest.New(t, &servertest.Options{
		Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)},
		Agents:    []platform.AgentSpec{{Name: "writer", Model: "fake/m", Instructions: "You write memos."}},
		Workflows: true,
		Queue:     true,
	})
	c := servertest.Client{T: t, Base: env.URL, Key: env.Key}
	var wf store.Workflow
	c.JSON("POST", "/api/workflows", `{"name":"memo","nodes":[{"id":"start","type":"start"},
{"id":"draft","type":"agent","config":{"agent":"writer","prompt":"Draft: {{input}}"}},
{"id":"end","type":"end"}],
"edges":[{"id":"e1","source":"start","target":"draft"},{"id":"e2","source":"draft","target":"end"}]}`, http.StatusCreated, nil)
	c.JSON("GET", "/api/workflows/memo", "", http.StatusOK, &wf)
	// runMemo starts a run and waits for the queue to finish it.
	runMemo := func() (store.Run, store.Run) {
		t.Helper()
		fake.Push(llmtest.Turn{Text: "A memo.", Usage: llm.Usage{InputTokens: 31, OutputTokens: 3}})
		var run, got store.Run
		c.JSON("POST", "/api/workflows/"+wf.ID+"/runs", `{"input":"`+flowIn+`"}`, http.StatusAccepted, &run)
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			var err error
			if got, err = env.Store.Runs().Get(context.Background(), env.Workspace.ID, run.ID); err != nil {
				t.Fatal(err)
			}
			if got.Status.Final() || time.Now().After(deadline) {
				break
			}
		}
		if got.Status != store.RunSucceeded {
			t.Fatalf("run = %+v; want succeeded", got)
		}
		return run, got
	}
	// While tracing is off, a run carries no trace context.
	if _, off := runMemo(); off.TraceParent != "" || off.TraceState != "" {
		t.Errorf("a run started with tracing off stored trace context %q %q", off.TraceParent, off.TraceState)
	}

	flush := rc.start(t, false)
	run, got := runMemo()

	// The queue executed it: there is its River job (the in-process path
	// makes none). The row is settled before the run's span ends (the span
	// covers the write), so the spans are flushed once the job is
	// completed, which River marks after the handler returned.
	db, err := database.OpenSQLite(context.Background(), env.DBPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var (
		jobs  int
		state string
	)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if err := db.Reader().QueryRowContext(context.Background(),
			`SELECT count(*), coalesce(max(state), '') FROM river_job WHERE kind = 'workflow_run' AND json_extract(args, '$.run_id') = ?`, run.ID).Scan(&jobs, &state); err != nil {
			t.Fatal(err)
		}
		if jobs != 1 || state == "completed" || time.Now().After(deadline) {
			break
		}
	}
	if jobs != 1 {
		t.Fatalf("%d queue jobs for the run, want 1: the run was not executed from the queue", jobs)
	}
	if state != "completed" {
		t.Fatalf("the run's queue job is %q, want completed", state)
	}
	flush()

	s := index(t, rc.all())
	start := s.one("POST /api/workflows/{id}/runs")
	runSpan := s.one("run_workflow memo")
	s.childOf(runSpan, start)
	wantAttrs(t, runSpan, map[string]any{"agentcraft.run.id": run.ID, "agentcraft.run.status": "succeeded"})
	node := s.one("node draft")
	s.childOf(node, runSpan)
	s.childOf(s.one("invoke_agent writer"), node)
	if tp := "00-" + hex.EncodeToString(start.TraceId) + "-" + hex.EncodeToString(start.SpanId) + "-01"; got.TraceParent != tp {
		t.Errorf("the run's stored traceparent = %q, want the request span's %q", got.TraceParent, tp)
	}
}

// TestTraceCapturesContentWhenAsked: with capture_content on, the same
// chat's spans carry the prompt, the completion, the tool's arguments and
// its result, in the GenAI conventions' attributes.
func TestTraceCapturesContentWhenAsked(t *testing.T) {
	rc := newReceiver(t)
	fake := llmtest.NewOpenAI(t)
	_, c := newServer(t, fake, nil)
	flush := rc.start(t, true)
	scriptChat(fake)
	if resp, body := c.Do("POST", "/v1/chat/completions", chatBody); resp.StatusCode != http.StatusOK {
		t.Fatalf("chat = %d %s", resp.StatusCode, body)
	}
	flush()
	s := index(t, rc.all())
	chats := s.named("chat m")
	if len(chats) != 2 {
		t.Fatalf("%d chat spans, want 2: %s", len(chats), s.names())
	}
	if in := str(chats[0], "gen_ai.input.messages"); !strings.Contains(in, "PROMPT-TEXT-4417") || !strings.Contains(in, `"role":"user"`) {
		t.Errorf("first chat's gen_ai.input.messages = %s, want the user's prompt", in)
	}
	if sys := str(chats[0], "gen_ai.system_instructions"); !strings.Contains(sys, "You are helpful.") {
		t.Errorf("gen_ai.system_instructions = %q, want the agent's instructions", sys)
	}
	if out := str(chats[0], "gen_ai.output.messages"); !strings.Contains(out, `"type":"tool_call"`) || !strings.Contains(out, `"name":"calculator"`) {
		t.Errorf("first chat's gen_ai.output.messages = %s, want the calculator call", out)
	}
	if in := str(chats[1], "gen_ai.input.messages"); !strings.Contains(in, `"type":"tool_call_response"`) || !strings.Contains(in, "42") {
		t.Errorf("second chat's gen_ai.input.messages = %s, want the tool's result", in)
	}
	if out := str(chats[1], "gen_ai.output.messages"); !strings.Contains(out, "ANSWER-TEXT-9120") || !strings.Contains(out, `"finish_reason":"stop"`) {
		t.Errorf("second chat's gen_ai.output.messages = %s, want the answer", out)
	}
	toolSpan := s.one("execute_tool calculator")
	if got := str(toolSpan, "gen_ai.tool.call.arguments"); got != toolArgs {
		t.Errorf("gen_ai.tool.call.arguments = %q, want %q", got, toolArgs)
	}
	if got := str(toolSpan, "gen_ai.tool.call.result"); !strings.Contains(got, "42") {
		t.Errorf("gen_ai.tool.call.result = %q, want the result 42", got)
	}
}

// headerLog records the traceparent headers a server received.
type headerLog struct {
	mu   sync.Mutex // guards seen
	seen []string
}

func (h *headerLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tp := r.Header.Get("Traceparent"); tp != "" {
			h.mu.Lock()
			h.seen = append(h.seen, tp)
			h.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

// traceIDs are the trace ids of the traceparents seen.
func (h *headerLog) traceIDs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, tp := range h.seen {
		if f := strings.Split(tp, "-"); len(f) == 4 {
			out = append(out, f[1])
		}
	}
	return out
}

// TestToolCallsCarryTraceparent: an http_request call (through the egress
// client) and an MCP server's tool call reach their servers with a W3C
// traceparent whose trace id is the agent run's, and an incoming
// traceparent makes the request's spans continue the caller's trace.
func TestToolCallsCarryTraceparent(t *testing.T) {
	rc := newReceiver(t)

	var api headerLog
	apiSrv := httptest.NewServer(api.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"ok":true}`)
	})))
	t.Cleanup(apiSrv.Close)

	var mcpLog headerLog
	msrv := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	type echoIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(msrv, &mcp.Tool{Name: "echo", Description: "Echo the text."},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	mcpSrv := httptest.NewServer(mcpLog.wrap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return msrv }, nil)))
	t.Cleanup(mcpSrv.Close)

	g, err := (&egress.Policy{Allow: []string{"127.0.0.1"}}).Compile()
	if err != nil {
		t.Fatal(err)
	}
	fake := llmtest.NewOpenAI(t)
	_, c := newServer(t, fake, &tool.BuiltinOptions{HTTPClient: g.Client()})
	c.JSON("POST", "/api/mcp/servers", `{"name":"echo","url":"`+mcpSrv.URL+`"}`, http.StatusCreated, nil)
	c.JSON("POST", "/api/agents", `{"name":"caller","model":"fake/m","tools":["http_request","mcp:echo"]}`, http.StatusCreated, nil)
	flush := rc.start(t, false)

	fake.Push(
		llmtest.Turn{ToolCalls: []llm.ToolCall{
			{ID: "call_http", Name: "http_request", Arguments: `{"url":"` + apiSrv.URL + `/items"}`},
			{ID: "call_mcp", Name: "echo__echo", Arguments: `{"text":"hello"}`},
		}},
		llmtest.Turn{Text: "done"},
	)
	// The caller's own trace: its id must come back in the tools' headers.
	const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	req, err := http.NewRequest("POST", c.Base+"/v1/chat/completions", strings.NewReader(`{"model":"caller","messages":[{"role":"user","content":"go"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Traceparent", "00-"+callerTrace+"-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("chat = %d %s", resp.StatusCode, b)
	}
	flush()

	s := index(t, rc.all())
	agentSpan := s.one("invoke_agent caller")
	runTrace := hex.EncodeToString(agentSpan.TraceId)
	if runTrace != callerTrace {
		t.Errorf("the run's trace is %s, want the caller's %s (incoming traceparent continued)", runTrace, callerTrace)
	}
	if got := hex.EncodeToString(s.one("POST /v1/chat/completions").ParentSpanId); got != "00f067aa0ba902b7" {
		t.Errorf("HTTP span's parent = %s, want the caller's span 00f067aa0ba902b7", got)
	}
	for name, log := range map[string]*headerLog{"http_request's API": &api, "the MCP server": &mcpLog} {
		ids := log.traceIDs()
		if !slices.Contains(ids, runTrace) {
			t.Errorf("%s received traceparents of traces %v, want one of the run's trace %s", name, ids, runTrace)
		}
	}
	// Each outbound call is a client span under its execute_tool span.
	for _, toolName := range []string{"http_request", "echo__echo"} {
		toolSpan := s.one("execute_tool " + toolName)
		found := false
		for _, sp := range s.list {
			if sp.Kind == tracepb.Span_SPAN_KIND_CLIENT && bytes.Equal(sp.ParentSpanId, toolSpan.SpanId) && (sp.Name == "GET" || sp.Name == "POST") {
				found = true
			}
		}
		if !found {
			t.Errorf("no HTTP client span under execute_tool %s; exported: %s", toolName, s.names())
		}
	}
}
