package server_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentcraftlab/agentcraft/internal/sse"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
)

// chatAnswer is the JSON of POST /api/chat.
type chatAnswer struct {
	Message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"message"`
	ToolCalls []chatToolCall `json:"tool_calls"`
	Usage     struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
	Steps        int    `json:"steps"`
	FinishReason string `json:"finish_reason"`
}

type chatToolCall struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Arguments  string  `json:"arguments"`
	Result     string  `json:"result"`
	IsError    bool    `json:"is_error"`
	DurationMs float64 `json:"duration_ms"`
	Step       int     `json:"step"`
}

// calcPlan is a ReAct exchange with the helper agent: two calculator
// calls at once, one that fails and one with malformed arguments, then
// the answer.
func calcPlan() []llmtest.Turn {
	return []llmtest.Turn{
		{Text: "Computing.", Usage: llm.Usage{InputTokens: 50, OutputTokens: 10}, ToolCalls: []llm.ToolCall{
			{ID: "c1", Name: "calculator", Arguments: `{"expression":"6*7"}`},
			{ID: "c2", Name: "calculator", Arguments: `{"expression":"1/0"}`},
			{ID: "c3", Name: "calculator", Arguments: `{"expression": `},
		}},
		{Text: "6*7 is 42; 1/0 has no value.", Usage: llm.Usage{InputTokens: 80, OutputTokens: 12}},
	}
}

func TestChat(t *testing.T) {
	t.Parallel()
	_, fake, c := newEnv(t, helper)
	fake.Push(calcPlan()...)
	var got chatAnswer
	c.json("POST", "/api/chat", `{"agent":"helper","messages":[{"role":"user","content":"6*7 and 1/0?"}]}`, http.StatusOK, &got)

	if got.Message.Role != "assistant" || got.Message.Content != "Computing.\n\n6*7 is 42; 1/0 has no value." {
		t.Errorf("message = %+v", got.Message)
	}
	if got.FinishReason != "stop" || got.Steps != 2 || got.Usage.InputTokens != 130 || got.Usage.OutputTokens != 22 || got.Usage.TotalTokens != 152 {
		t.Errorf("finish %q, %d steps, usage %+v; want stop, 2, 130+22", got.FinishReason, got.Steps, got.Usage)
	}
	want := []chatToolCall{
		{ID: "c1", Name: "calculator", Arguments: `{"expression":"6*7"}`, Result: "42", Step: 1},
		{ID: "c2", Name: "calculator", Arguments: `{"expression":"1/0"}`, IsError: true, Step: 1},
		{ID: "c3", Name: "calculator", Arguments: `{"expression": `, IsError: true, Step: 1},
	}
	opts := cmp.Options{cmpopts.IgnoreFields(chatToolCall{}, "DurationMs", "Result")}
	if diff := cmp.Diff(want, got.ToolCalls, opts); diff != "" {
		t.Fatalf("tool_calls (-want +got):\n%s", diff)
	}
	if got.ToolCalls[0].Result != "42" || !strings.Contains(got.ToolCalls[1].Result, "division by zero") ||
		!strings.HasPrefix(got.ToolCalls[2].Result, "invalid arguments for calculator: arguments are not valid JSON") {
		t.Errorf("results = %q, %q, %q", got.ToolCalls[0].Result, got.ToolCalls[1].Result, got.ToolCalls[2].Result)
	}
	for _, tc := range got.ToolCalls {
		if tc.DurationMs <= 0 {
			t.Errorf("%s: duration_ms = %v, want the time the call took", tc.ID, tc.DurationMs)
		}
	}
	// The model read all three results, the errors included.
	reqs := fake.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "division by zero") || !strings.Contains(string(reqs[1].Body), "not valid JSON") {
		t.Errorf("the second model call lacks the tool errors")
	}
}

// TestChatOpenAIStyleMessages: a transcript as OpenAI clients send it,
// with content parts, an earlier tool call and its result, and fields
// this API ignores, is accepted.
func TestChatOpenAIStyleMessages(t *testing.T) {
	t.Parallel()
	_, fake, c := newEnv(t, helper)
	fake.Push(llmtest.Turn{Text: "Still 42."})
	body := `{"agent":"helper","max_steps":3,"max_tokens":5000,"messages":[
		{"role":"system","content":"Be brief."},
		{"role":"user","content":[{"type":"text","text":"6*7?"}]},
		{"role":"assistant","content":null,"refusal":null,"tool_calls":[{"id":"x1","type":"function","function":{"name":"calculator","arguments":"{\"expression\":\"6*7\"}"}}]},
		{"role":"tool","tool_call_id":"x1","content":"42"},
		{"role":"assistant","content":"42"},
		{"role":"user","content":"Again?"}]}`
	var got chatAnswer
	c.json("POST", "/api/chat", body, http.StatusOK, &got)
	if got.Message.Content != "Still 42." || len(got.ToolCalls) != 0 {
		t.Errorf("answer = %+v", got)
	}
	if up := string(fake.Requests()[0].Body); !strings.Contains(up, `"tool_call_id":"x1"`) || !strings.Contains(up, "Be brief.") {
		t.Errorf("the transcript did not reach the model: %s", up)
	}
}

func TestChatBudgets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, limits string
		want         string
	}{
		{"max_steps", `"max_steps":1`, "Computing.\n\nStopped at the step limit (max_steps 1) without a final answer: no tool ran; the model's last 3 tool calls (calculator) were not run."},
		{"max_tokens", `"max_tokens":60`, "Computing.\n\nStopped after using 60 tokens, over this run's budget of 60, without a final answer."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, fake, c := newEnv(t, helper)
			fake.Push(calcPlan()[0])
			var got chatAnswer
			c.json("POST", "/api/chat", `{"agent":"helper",`+tt.limits+`,"messages":[{"role":"user","content":"go"}]}`, http.StatusOK, &got)
			if got.Message.Content != tt.want || got.FinishReason != "length" || got.Steps != 1 || len(got.ToolCalls) != 0 {
				t.Errorf("answer = %q, %s, %d steps, %d tool calls; want %q, length, 1 step, no calls", got.Message.Content, got.FinishReason, got.Steps, len(got.ToolCalls), tt.want)
			}
		})
	}
}

// streamChat posts to /api/chat/stream and reads every event.
func streamChat(t *testing.T, c client, body string) []sse.Event {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", c.base+"/api/chat/stream", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST /api/chat/stream = %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	r := sse.NewReader(resp.Body, nil)
	var out []sse.Event
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("read events: %v", err)
		}
		out = append(out, ev)
	}
}

func TestChatStream(t *testing.T) {
	t.Parallel()
	_, fake, c := newEnv(t, helper)
	fake.Push(calcPlan()...)
	evs := streamChat(t, c, `{"agent":"helper","messages":[{"role":"user","content":"6*7 and 1/0?"}]}`)

	var text strings.Builder
	var kinds []string
	calls := map[string]map[string]any{}
	results := map[string]chatToolCall{}
	var done map[string]any
	for _, ev := range evs {
		var data map[string]any
		if err := json.Unmarshal(ev.Data, &data); err != nil {
			t.Fatalf("%s event data %s: %v", ev.Event, ev.Data, err)
		}
		if len(kinds) == 0 || kinds[len(kinds)-1] != ev.Event {
			kinds = append(kinds, ev.Event)
		}
		switch ev.Event {
		case "text":
			text.WriteString(data["text"].(string))
		case "tool_call":
			calls[data["id"].(string)] = data
		case "tool_result":
			var r chatToolCall
			_ = json.Unmarshal(ev.Data, &r)
			results[r.ID] = r
		case "done":
			done = data
		default:
			t.Errorf("unexpected event %s %s", ev.Event, ev.Data)
		}
	}
	if want := "text tool_call tool_result text done"; strings.Join(kinds, " ") != want {
		t.Errorf("event order %v, want %s", kinds, want)
	}
	if text.String() != "Computing.\n\n6*7 is 42; 1/0 has no value." {
		t.Errorf("text = %q", text.String())
	}
	if len(calls) != 3 || calls["c1"]["name"] != "calculator" || calls["c1"]["arguments"] != `{"expression":"6*7"}` {
		t.Errorf("tool_call events = %v", calls)
	}
	if r := results["c1"]; r.Result != "42" || r.IsError || r.DurationMs <= 0 || r.Name != "calculator" {
		t.Errorf("c1 result = %+v", r)
	}
	if r := results["c2"]; !r.IsError || !strings.Contains(r.Result, "division by zero") {
		t.Errorf("c2 result = %+v, want the division error", r)
	}
	if r := results["c3"]; !r.IsError || !strings.Contains(r.Result, "not valid JSON") {
		t.Errorf("c3 result = %+v, want the malformed-arguments error", r)
	}
	if done == nil || done["finish_reason"] != "stop" || done["steps"] != float64(2) {
		t.Fatalf("done = %v", done)
	}
	if u := done["usage"].(map[string]any); u["total_tokens"] != float64(152) {
		t.Errorf("done usage = %v, want 152 tokens", u)
	}
	if m := done["message"].(map[string]any); m["content"] != text.String() {
		t.Errorf("done message = %v, want the whole text", m)
	}
}

// TestChatStreamError: a model failure after the stream began ends it
// with an error event; one before is a plain JSON error.
func TestChatStreamError(t *testing.T) {
	t.Parallel()
	_, fake, c := newEnv(t, helper)
	fake.Push(calcPlan()[0], llmtest.Turn{Fault: &llmtest.Fault{Status: 400, Message: "context too long"}})
	evs := streamChat(t, c, `{"agent":"helper","messages":[{"role":"user","content":"go"}]}`)
	last := evs[len(evs)-1]
	var body struct {
		Error struct{ Message, Type string }
	}
	if err := json.Unmarshal(last.Data, &body); err != nil || last.Event != "error" || !strings.Contains(body.Error.Message, "context too long") {
		t.Errorf("last event %s %s, want an error event with the provider's message", last.Event, last.Data)
	}

	fake.Push(llmtest.Turn{Fault: &llmtest.Fault{Status: 400, Message: "bad image"}})
	resp, b := c.do("POST", "/api/chat/stream", `{"agent":"helper","messages":[{"role":"user","content":"go"}]}`)
	if resp.StatusCode < 400 || !strings.Contains(string(b), "bad image") || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("early failure = %d %s %s, want a JSON error", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
}

func TestChatBadRequests(t *testing.T) {
	t.Parallel()
	_, _, c := newEnv(t, helper)
	tests := []struct {
		name, body string
		status     int
		code       string
		message    string // a substring of the message
	}{
		{"malformed body", `{"agent":"helper",`, 400, "invalid_request", "not valid"},
		{"empty body", ``, 400, "invalid_request", "empty"},
		{"unknown field", `{"agent":"helper","mesages":[]}`, 400, "invalid_request", "mesages"},
		{"no agent", `{"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request", "agent is required"},
		{"empty messages", `{"agent":"helper","messages":[]}`, 400, "invalid_request", "messages is required"},
		{"bad role", `{"agent":"helper","messages":[{"role":"robot","content":"hi"}]}`, 400, "invalid_request", `messages[0].role "robot"`},
		{"no content", `{"agent":"helper","messages":[{"role":"user"}]}`, 400, "invalid_request", "messages[0].content is required"},
		{"tool without id", `{"agent":"helper","messages":[{"role":"tool","content":"x"}]}`, 400, "invalid_request", "tool_call_id"},
		{"negative max_steps", `{"agent":"helper","max_steps":-1,"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request", "max_steps"},
		{"unknown agent", `{"agent":"nobody","messages":[{"role":"user","content":"hi"}]}`, 404, "agent_not_found", `"nobody"`},
	}
	for _, path := range []string{"/api/chat", "/api/chat/stream"} {
		for _, tt := range tests {
			t.Run(path+"/"+tt.name, func(t *testing.T) {
				resp, body := c.do("POST", path, tt.body)
				d := wantError(t, resp, body, tt.status, tt.code)
				if !strings.Contains(d.Message, tt.message) {
					t.Errorf("message %q, want it to mention %q", d.Message, tt.message)
				}
			})
		}
	}
	resp, body := c.do("GET", "/api/chat", "")
	if resp.StatusCode != http.StatusMethodNotAllowed && resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /api/chat = %d %s", resp.StatusCode, body)
	}
}

// TestChatKeepsOpenAIHidingToolCalls: after the chat API showed a tool
// call, /v1/chat/completions still hides the same agent's calls.
func TestChatKeepsOpenAIHidingToolCalls(t *testing.T) {
	t.Parallel()
	_, fake, c := newEnv(t, helper)
	fake.Push(calcPlan()...)
	var got chatAnswer
	c.json("POST", "/api/chat", `{"agent":"helper","messages":[{"role":"user","content":"6*7?"}]}`, http.StatusOK, &got)
	if len(got.ToolCalls) != 3 {
		t.Fatalf("/api/chat showed %d tool calls, want 3", len(got.ToolCalls))
	}
	fake.Push(calcPlan()...)
	resp, body := c.do("POST", "/v1/chat/completions", `{"model":"helper","messages":[{"role":"user","content":"6*7?"}]}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("completions = %d %s", resp.StatusCode, body)
	}
	var cc struct {
		Choices []struct {
			Message      map[string]any `json:"message"`
			FinishReason string         `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &cc); err != nil || len(cc.Choices) != 1 {
		t.Fatalf("completion %s: %v", body, err)
	}
	if _, ok := cc.Choices[0].Message["tool_calls"]; ok || cc.Choices[0].FinishReason != "stop" {
		t.Errorf("the agent's own tool calls reached the OpenAI client: %s", body)
	}
}

// TestChatWarnings: what the agent warns about (an MCP server that is
// down) reaches both chat endpoints.
func TestChatWarnings(t *testing.T) {
	t.Parallel()
	env, fake, c := newEnv(t, helper)
	a, err := env.Platform.Agent(t.Context(), env.Workspace.ID, "helper")
	if err != nil {
		t.Fatal(err)
	}
	const warning = `MCP server "github" is down: its tools are left out`
	a.Runtime.Warnings = []string{warning} // before any run of this agent

	fake.Push(llmtest.Turn{Text: "Hi."})
	var got struct {
		Warnings []string `json:"warnings"`
	}
	c.json("POST", "/api/chat", `{"agent":"helper","messages":[{"role":"user","content":"hi"}]}`, http.StatusOK, &got)
	if len(got.Warnings) != 1 || got.Warnings[0] != warning {
		t.Errorf("warnings = %q, want %q", got.Warnings, warning)
	}

	fake.Push(llmtest.Turn{Text: "Hi."})
	evs := streamChat(t, c, `{"agent":"helper","messages":[{"role":"user","content":"hi"}]}`)
	if len(evs) == 0 || evs[0].Event != "warning" || !strings.Contains(string(evs[0].Data), "is down") {
		t.Errorf("first event = %+v, want the warning", evs)
	}
}

// TestChatHostileJavaScript: a model (or a prompt injection reaching it)
// that calls run_javascript with one join building a 4 GiB string once
// took the server to 10 GB. The call now ends at the tool's 5 s limit or
// its 64 MiB cap as an error result the model reads, and the chat answers.
func TestChatHostileJavaScript(t *testing.T) {
	t.Parallel()
	coder := platform.AgentSpec{Name: "coder", Model: "fake/fake-model", Instructions: "Compute.", Tools: []string{"run_javascript"}}
	_, fake, c := newEnv(t, coder)
	fake.Push(
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "j1", Name: "run_javascript", Arguments: `{"code":"new Array(4294967295).join('x')"}`}}},
		llmtest.Turn{Text: "That script was stopped."},
	)
	start := time.Now()
	var got chatAnswer
	c.json("POST", "/api/chat", `{"agent":"coder","messages":[{"role":"user","content":"run it"}]}`, http.StatusOK, &got)
	d := time.Since(start)
	if len(got.ToolCalls) != 1 || !got.ToolCalls[0].IsError ||
		!strings.Contains(got.ToolCalls[0].Result, "script ran longer than 5s") && !strings.Contains(got.ToolCalls[0].Result, "memory than its cap of 64 MiB") {
		t.Fatalf("tool calls %+v, want one error result naming the 5s limit or the 64 MiB cap", got.ToolCalls)
	}
	if d > 7*time.Second || got.Message.Content != "That script was stopped." {
		t.Errorf("chat answered %q after %v, want the model's answer within about 5s", got.Message.Content, d)
	}
	t.Logf("run_javascript %s: %q; chat answered after %v", got.ToolCalls[0].Arguments, got.ToolCalls[0].Result, d.Round(time.Millisecond))
}
