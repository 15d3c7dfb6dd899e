package aguiserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server"
	"github.com/agentcraftlab/agentcraft/server/aguiserver"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

// aguiEnv is a server whose agent "helper" (with the calculator) answers
// the scripted turns.
func aguiEnv(t *testing.T, memory bool, turns ...llmtest.Turn) (*servertest.Env, *llmtest.Server, servertest.Client) {
	t.Helper()
	fake := llmtest.NewOpenAI(t, turns...)
	env := servertest.New(t, &servertest.Options{Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)}, Memory: memory,
		Agents: []platform.AgentSpec{{Name: "helper", Model: "fake/m", Instructions: "Help.", MaxSteps: 3, Tools: []string{"calculator"}}}})
	return env, fake, servertest.Client{T: t, Base: env.URL, Key: env.Key}
}

// event is one AG-UI event as a client decodes it.
type event map[string]any

func (e event) str(k string) string { s, _ := e[k].(string); return s }

// runAGUI posts input to /agui/helper, wants a 200 event stream and
// returns its events.
func runAGUI(t *testing.T, c servertest.Client, input string) []event {
	t.Helper()
	resp, body := c.Do("POST", "/agui/helper", input)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("POST /agui/helper = %d %s %s, want a 200 event stream", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	var out []event
	for block := range strings.SplitSeq(string(body), "\n\n") {
		for line := range strings.SplitSeq(block, "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				if line != "" && !strings.HasPrefix(line, ":") {
					t.Fatalf("stream line %q is neither data nor a comment", line)
				}
				continue
			}
			var ev event
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatalf("event %q: %v", data, err)
			}
			out = append(out, ev)
		}
	}
	return out
}

func types(evs []event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.str("type")
	}
	return out
}

// upstreamMessages is what the fake's request i carried, as "role: text"
// lines, with tool calls and tool results spelled out.
func upstreamMessages(t *testing.T, fake *llmtest.Server, i int) []string {
	t.Helper()
	reqs := fake.Requests()
	if len(reqs) <= i {
		t.Fatalf("the fake saw %d requests, want more than %d", len(reqs), i)
	}
	var body struct {
		Messages []struct {
			Role       string `json:"role"`
			Content    any    `json:"content"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct{ Name, Arguments string }
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[i].Body, &body); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range body.Messages {
		text := ""
		switch c := m.Content.(type) {
		case string:
			text = c
		case []any:
			for _, p := range c {
				if pm, ok := p.(map[string]any); ok {
					text += fmt.Sprint(pm["text"])
				}
			}
		}
		line := m.Role + ": " + text
		for _, tc := range m.ToolCalls {
			line += fmt.Sprintf(" [call %s %s %s]", tc.ID, tc.Function.Name, tc.Function.Arguments)
		}
		if m.ToolCallID != "" {
			line += " [for " + m.ToolCallID + "]"
		}
		out = append(out, line)
	}
	return out
}

// TestStreamedAnswer: a streamed answer is RUN_STARTED, one text message
// with its chunks as deltas, RUN_FINISHED, with matching ids; the
// application context reaches the model.
func TestStreamedAnswer(t *testing.T) {
	_, fake, c := aguiEnv(t, false, llmtest.Turn{Chunks: []string{"Par", "is."}})
	evs := runAGUI(t, c, `{"threadId":"th-1","runId":"run-1","state":{},"forwardedProps":{},"tools":[],
		"context":[{"description":"page","value":"geography quiz"}],
		"messages":[{"id":"u1","role":"user","content":"Capital of France?"}]}`)
	want := []string{"RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED"}
	if got := types(evs); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	start, fin := evs[0], evs[5]
	if start.str("threadId") != "th-1" || start.str("runId") != "run-1" || fin.str("threadId") != "th-1" || fin.str("runId") != "run-1" {
		t.Errorf("RUN_STARTED %v, RUN_FINISHED %v: want thread th-1, run run-1", start, fin)
	}
	if o, _ := fin["outcome"].(map[string]any); o["type"] != "success" || o["pendingToolCallIds"] != nil {
		t.Errorf("RUN_FINISHED outcome = %v, want success with nothing pending", fin["outcome"])
	}
	id := evs[1].str("messageId")
	if id == "" || evs[1].str("role") != "assistant" {
		t.Errorf("TEXT_MESSAGE_START = %v", evs[1])
	}
	for _, e := range evs[2:5] {
		if e.str("messageId") != id {
			t.Errorf("%v: messageId is not the started message's %q", e, id)
		}
	}
	if evs[2].str("delta") != "Par" || evs[3].str("delta") != "is." {
		t.Errorf("deltas %q %q, want Par, is.", evs[2].str("delta"), evs[3].str("delta"))
	}
	got := upstreamMessages(t, fake, 0)
	wantUp := []string{"system: Help.", "system: Context from the application:\n- page: geography quiz", "user: Capital of France?"}
	if !slices.Equal(got, wantUp) {
		t.Errorf("upstream messages %q, want %q", got, wantUp)
	}
}

// TestServerToolCall: the agent's own calculator call is shown as
// TOOL_CALL_START/ARGS/END and its TOOL_CALL_RESULT, before the answer.
func TestServerToolCall(t *testing.T) {
	_, _, c := aguiEnv(t, false,
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "calculator", Arguments: `{"expression":"6*7"}`}}},
		llmtest.Turn{Text: "42."})
	evs := runAGUI(t, c, `{"threadId":"th","runId":"r","messages":[{"id":"u1","role":"user","content":"6*7?"}]}`)
	want := []string{"RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT",
		"TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED"}
	if got := types(evs); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	st, args, end, res := evs[1], evs[2], evs[3], evs[4]
	if st.str("toolCallId") != "c1" || st.str("toolCallName") != "calculator" || st.str("parentMessageId") == "" {
		t.Errorf("TOOL_CALL_START = %v", st)
	}
	if args.str("toolCallId") != "c1" || args.str("delta") != `{"expression":"6*7"}` || end.str("toolCallId") != "c1" {
		t.Errorf("TOOL_CALL_ARGS %v, TOOL_CALL_END %v", args, end)
	}
	if res.str("toolCallId") != "c1" || res.str("content") != "42" || res.str("role") != "tool" || res.str("messageId") == "" {
		t.Errorf("TOOL_CALL_RESULT = %v, want content 42 for c1", res)
	}
	if evs[6].str("delta") != "42." {
		t.Errorf("answer %v", evs[6])
	}
}

// TestClientTool: a frontend tool call ends the run with the call and
// names it pending; the next run, carrying the tool's result, continues
// and the model sees the call and the result.
func TestClientTool(t *testing.T) {
	_, fake, c := aguiEnv(t, false,
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "k1", Name: "confirm", Arguments: `{"question":"Book it?"}`}}},
		llmtest.Turn{Chunks: []string{"Booked."}})
	tools := `"tools":[{"name":"confirm","description":"Ask the user to confirm.","parameters":{"type":"object","properties":{"question":{"type":"string"}}}}]`
	evs := runAGUI(t, c, `{"threadId":"th","runId":"r1",`+tools+`,"messages":[{"id":"u1","role":"user","content":"Book the flight."}]}`)
	got := types(evs)
	if len(got) < 5 || got[0] != "RUN_STARTED" || got[1] != "TOOL_CALL_START" || got[len(got)-2] != "TOOL_CALL_END" || got[len(got)-1] != "RUN_FINISHED" {
		t.Fatalf("events %v, want RUN_STARTED, TOOL_CALL_START, ARGS…, TOOL_CALL_END, RUN_FINISHED", got)
	}
	var args strings.Builder
	for _, e := range evs[2 : len(evs)-2] {
		if e.str("type") != "TOOL_CALL_ARGS" || e.str("toolCallId") != "k1" {
			t.Errorf("between start and end: %v, want TOOL_CALL_ARGS of k1", e)
		}
		args.WriteString(e.str("delta"))
	}
	if evs[1].str("toolCallId") != "k1" || evs[1].str("toolCallName") != "confirm" || args.String() != `{"question":"Book it?"}` {
		t.Errorf("call %v with arguments %q", evs[1], args.String())
	}
	outcome, _ := evs[len(evs)-1]["outcome"].(map[string]any)
	if pending, _ := outcome["pendingToolCallIds"].([]any); outcome["type"] != "success" || len(pending) != 1 || pending[0] != "k1" {
		t.Errorf("RUN_FINISHED outcome = %v, want success pending k1", outcome)
	}
	if up := upstreamMessages(t, fake, 0); len(up) != 2 || !strings.Contains(string(fake.Requests()[0].Body), `"confirm"`) {
		t.Errorf("first upstream request %q did not offer the frontend tool", up)
	}

	evs = runAGUI(t, c, `{"threadId":"th","runId":"r2",`+tools+`,"messages":[
		{"id":"u1","role":"user","content":"Book the flight."},
		{"id":"a1","role":"assistant","toolCalls":[{"id":"k1","type":"function","function":{"name":"confirm","arguments":"{\"question\":\"Book it?\"}"}}]},
		{"id":"t1","role":"tool","toolCallId":"k1","content":"yes"}]}`)
	if got := types(evs); !slices.Equal(got, []string{"RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED"}) {
		t.Fatalf("second run events %v", got)
	}
	want := []string{"system: Help.", "user: Book the flight.", `assistant:  [call k1 confirm {"question":"Book it?"}]`, "tool: yes [for k1]"}
	if up := upstreamMessages(t, fake, 1); !slices.Equal(up, want) {
		t.Errorf("second upstream request %q, want %q", up, want)
	}
}

// TestThreadIsConversation: two runs of one threadId continue one stored
// conversation, listed by GET /api/conversations; another key's run on
// the same threadId gets a conversation of its own and never sees the
// first.
func TestThreadIsConversation(t *testing.T) {
	env, fake, c := aguiEnv(t, true, llmtest.Turn{Text: "Hi Ann."}, llmtest.Turn{Text: "Ann."}, llmtest.Turn{Text: "I do not know."})
	runAGUI(t, c, `{"threadId":"shared","runId":"r1","messages":[{"id":"u1","role":"user","content":"I am Ann."}]}`)
	// The client resends the thread; the model reads each turn once.
	evs := runAGUI(t, c, `{"threadId":"shared","runId":"r2","messages":[
		{"id":"u1","role":"user","content":"I am Ann."},{"id":"a1","role":"assistant","content":"Hi Ann."},
		{"id":"u2","role":"user","content":"Who am I?"}]}`)
	if got := types(evs); got[len(got)-1] != "RUN_FINISHED" {
		t.Fatalf("second run events %v", got)
	}
	want := []string{"system: Help.", "user: I am Ann.", "assistant: Hi Ann.", "user: Who am I?"}
	if up := upstreamMessages(t, fake, 1); !slices.Equal(up, want) {
		t.Errorf("second upstream request %q, want %q", up, want)
	}
	var page store.ConversationPage
	c.JSON("GET", "/api/conversations", "", http.StatusOK, &page)
	if len(page.Conversations) != 1 || page.Conversations[0].ExternalRef != "agui:shared" || page.Conversations[0].Agent != "helper" {
		t.Fatalf("conversations = %+v, want one, agui:shared of helper", page.Conversations)
	}
	var thread struct {
		Messages []store.Message `json:"messages"`
	}
	c.JSON("GET", "/api/conversations/"+page.Conversations[0].ID, "", http.StatusOK, &thread)
	if len(thread.Messages) != 4 {
		t.Errorf("the conversation holds %d messages, want the 4 turns once each: %+v", len(thread.Messages), thread.Messages)
	}

	// Another caller of the workspace, same threadId: a thread of its
	// own, and the model saw none of the first.
	other := servertest.Client{T: t, Base: env.URL, Key: servertest.CreateKey(t, env.Store, env.Workspace.ID)}
	resp, body := other.Do("POST", "/agui/helper", `{"threadId":"shared","runId":"r3","messages":[{"id":"u1","role":"user","content":"Who is Ann?"}]}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "RUN_FINISHED") {
		t.Fatalf("another key on the same threadId = %d %s, want its own run", resp.StatusCode, body)
	}
	if up := upstreamMessages(t, fake, 2); !slices.Equal(up, []string{"system: Help.", "user: Who is Ann?"}) {
		t.Errorf("the other key's upstream request %q holds more than its own turn", up)
	}
	var theirs store.ConversationPage
	other.JSON("GET", "/api/conversations", "", http.StatusOK, &theirs)
	if len(theirs.Conversations) != 1 || theirs.Conversations[0].ID == page.Conversations[0].ID {
		t.Errorf("the other key sees conversations %+v; want only its own", theirs.Conversations)
	}
}

// TestBadInput: a run that cannot start is a JSON error with a 4xx status.
func TestBadInput(t *testing.T) {
	env, fake, c := aguiEnv(t, false)
	ok := `{"threadId":"t","runId":"r","messages":[{"id":"1","role":"user","content":"Hi"}]}`
	for _, tc := range []struct {
		name, path, body, key string
		status                int
		param                 string
	}{
		{"malformed JSON", "/agui/helper", `{"threadId":`, env.Key, 400, ""},
		{"not an object", "/agui/helper", `[1]`, env.Key, 400, ""},
		{"missing threadId", "/agui/helper", `{"runId":"r","messages":[{"id":"1","role":"user","content":"Hi"}]}`, env.Key, 400, "threadId"},
		{"missing runId", "/agui/helper", `{"threadId":"t","messages":[{"id":"1","role":"user","content":"Hi"}]}`, env.Key, 400, "runId"},
		{"no messages", "/agui/helper", `{"threadId":"t","runId":"r","messages":[]}`, env.Key, 400, "messages"},
		{"unknown role", "/agui/helper", `{"threadId":"t","runId":"r","messages":[{"id":"1","role":"robot","content":"Hi"}]}`, env.Key, 400, "messages[0].role"},
		{"tool without call id", "/agui/helper", `{"threadId":"t","runId":"r","messages":[{"id":"1","role":"tool","content":"x"}]}`, env.Key, 400, "messages[0].toolCallId"},
		{"bad tool name", "/agui/helper", `{"threadId":"t","runId":"r","tools":[{"name":"no spaces"}],"messages":[{"id":"1","role":"user","content":"Hi"}]}`, env.Key, 400, "tools[0].name"},
		{"resume", "/agui/helper", `{"threadId":"t","runId":"r","resume":[{"interruptId":"i"}],"messages":[{"id":"1","role":"user","content":"Hi"}]}`, env.Key, 400, "resume"},
		{"unknown agent", "/agui/nobody", ok, env.Key, 404, ""},
		{"no key", "/agui/helper", ok, "", 401, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := servertest.Client{T: t, Base: env.URL, Key: tc.key}.Do("POST", tc.path, tc.body)
			var e struct {
				Error struct {
					Message string
					Param   *string
				}
			}
			if resp.StatusCode != tc.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || json.Unmarshal(body, &e) != nil || e.Error.Message == "" {
				t.Fatalf("= %d %s %s, want a %d JSON error", resp.StatusCode, resp.Header.Get("Content-Type"), body, tc.status)
			}
			if tc.param != "" && (e.Error.Param == nil || *e.Error.Param != tc.param) {
				t.Errorf("param = %v, want %q (%s)", e.Error.Param, tc.param, body)
			}
		})
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("the fake saw %d requests, want none", n)
	}
	// The well-formed input runs: the refusals above were the input's.
	fake.Push(llmtest.Turn{Text: "Hello."})
	if got := types(runAGUI(t, c, ok)); got[len(got)-1] != "RUN_FINISHED" {
		t.Errorf("well-formed input: events %v", got)
	}
}

// TestUpstreamFailsMidStream: a provider error after the answer began
// ends the stream with RUN_ERROR, never RUN_FINISHED.
func TestUpstreamFailsMidStream(t *testing.T) {
	_, _, c := aguiEnv(t, false, llmtest.Turn{Chunks: []string{"One ", "two ", "three."}, Fault: &llmtest.Fault{Status: 500, Message: "boom", AfterChunks: 2}})
	evs := runAGUI(t, c, `{"threadId":"t","runId":"r","messages":[{"id":"1","role":"user","content":"Count."}]}`)
	got := types(evs)
	if got[0] != "RUN_STARTED" || got[len(got)-1] != "RUN_ERROR" || slices.Contains(got, "RUN_FINISHED") || !slices.Contains(got, "TEXT_MESSAGE_CONTENT") {
		t.Fatalf("events %v, want RUN_STARTED, the text so far, RUN_ERROR", got)
	}
	last := evs[len(evs)-1]
	if last.str("message") == "" || last.str("code") == "" || strings.Contains(last.str("message"), "upstream-secret") {
		t.Errorf("RUN_ERROR = %v, want a message and a code", last)
	}
}

// TestKeepAliveAndDisconnect: a quiet stream sends keep-alive comments,
// and a client that goes away mid-answer stops the run, upstream call
// included.
func TestKeepAliveAndDisconnect(t *testing.T) {
	env, fake, _ := aguiEnv(t, false)
	g, err := aguiserver.New(env.Platform, &aguiserver.Options{KeepAlive: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(env.Platform, &server.Options{Mounts: g.Mounts()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close(); srv.Stop() })
	c := servertest.Client{T: t, Base: hs.URL, Key: env.Key}
	input := `{"threadId":"t","runId":"r","messages":[{"id":"1","role":"user","content":"Slowly."}]}`

	fake.Push(llmtest.Turn{Chunks: []string{"a", "b", "c"}, Pace: 150 * time.Millisecond})
	_, body := c.Do("POST", "/agui/helper", input)
	if n := strings.Count(string(body), ": keep-alive\n"); n < 3 || !strings.Contains(string(body), `"type":"RUN_FINISHED"`) {
		t.Errorf("%d keep-alive comments over a 450 ms answer, want 3 or more, then RUN_FINISHED:\n%s", n, body)
	}

	fake.Push(llmtest.Turn{Chunks: slices.Repeat([]string{"x"}, 100), Pace: 100 * time.Millisecond})
	req, _ := http.NewRequest("POST", hs.URL+"/agui/helper", strings.NewReader(input))
	req.Header.Set("Authorization", "Bearer "+env.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	var seen strings.Builder
	for !strings.Contains(seen.String(), "TEXT_MESSAGE_CONTENT") {
		n, err := resp.Body.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			t.Fatalf("stream ended before the answer began: %v\n%s", err, seen.String())
		}
	}
	resp.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for fake.Active() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := fake.Active(); n != 0 {
		t.Errorf("%d upstream requests still running after the client left; the 10 s answer should have stopped", n)
	}
}
