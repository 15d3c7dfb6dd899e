package aguiserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/tool"
)

// FuzzDecodeInput feeds arbitrary bodies to the RunAgentInput decoder. It
// must never panic; a refusal is a 400 that names what is wrong; an
// accepted input has its ids, a message for the agent to answer, valid
// roles, tool results linked to their calls and valid tool names.
func FuzzDecodeInput(f *testing.F) {
	for _, seed := range []string{
		`{"threadId":"t","runId":"r","messages":[{"id":"1","role":"user","content":"Hi"}]}`,
		`{"threadId":"t","runId":"r","parentRunId":"p","state":{"a":1},"forwardedProps":null,"context":[{"description":"d","value":"v"}],
		  "tools":[{"name":"confirm","description":"Ask.","parameters":{"type":"object"}}],
		  "messages":[{"id":"s","role":"system","content":"Be brief."},{"id":"d","role":"developer","content":"x"},
		  {"id":"1","role":"user","content":[{"type":"text","text":"See"},{"type":"binary","mimeType":"image/png","data":"AAAA"}]},
		  {"id":"2","role":"assistant","toolCalls":[{"id":"k","type":"function","function":{"name":"confirm","arguments":"{}"}}]},
		  {"id":"3","role":"tool","toolCallId":"k","content":"","error":"denied"},
		  {"id":"4","role":"activity","activityType":"x","content":{}},{"id":"5","role":"reasoning","content":"hmm"}]}`,
		`{"threadId":"t","runId":"r","resume":[],"messages":[{"id":"1","role":"user","content":""}]}`,
		`{"threadId":"t","runId":"r","messages":[{"role":"assistant","content":"only me"}]}`,
		`{"threadId":"t","runId":"r","tools":[{"name":"a"},{"name":"a"}],"messages":[{"role":"user","content":"x"}]}`,
		`{"threadId":1}`, `[]`, `null`, `{} {}`, `{"messages":[null]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, ae := decodeInput(body)
		if ae != nil {
			if ae.Status != http.StatusBadRequest || ae.Message == "" {
				t.Fatalf("refusal %+v, want a 400 with a message", ae)
			}
			return
		}
		if in.ThreadID == "" || in.RunID == "" {
			t.Fatalf("accepted without ids: %+v", in)
		}
		answerable := false
		for i, m := range in.Messages {
			switch m.Role {
			case llm.RoleSystem:
			case llm.RoleUser:
				answerable = true
				if len(m.Content) == 0 {
					t.Fatalf("message %d: a user message without content", i)
				}
			case llm.RoleAssistant:
				answerable = true
				if len(m.Content) == 0 && len(m.ToolCalls) == 0 {
					t.Fatalf("message %d: an empty assistant message", i)
				}
				for _, c := range m.ToolCalls {
					if c.ID == "" || c.Name == "" {
						t.Fatalf("message %d: tool call %+v without id or name", i, c)
					}
				}
			case llm.RoleTool:
				answerable = true
				if m.ToolCallID == "" {
					t.Fatalf("message %d: a tool result for no call", i)
				}
			default:
				t.Fatalf("message %d has role %q", i, m.Role)
			}
		}
		if !answerable {
			t.Fatalf("accepted with nothing to answer: %+v", in.Messages)
		}
		names := map[string]bool{}
		for _, d := range in.Tools {
			if err := tool.ValidateName(d.Name); err != nil || names[d.Name] {
				t.Fatalf("tool %q accepted: %v, twice %v", d.Name, err, names[d.Name])
			}
			names[d.Name] = true
			if d.Parameters != nil && !json.Valid(d.Parameters) {
				t.Fatalf("tool %q parameters %q are not JSON", d.Name, d.Parameters)
			}
		}
	})
}

// decodeStream reads the events an encoder wrote.
func decodeStream(t *testing.T, body string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		out = append(out, ev)
	}
	return out
}

// TestEncoderReasoningAndTurns: reasoning is one REASONING_* block with
// non-empty deltas, closed before the text begins; a warning is a CUSTOM
// event; a new step is a new assistant message; frontend calls are ended
// before the run finishes and named pending.
func TestEncoderReasoningAndTurns(t *testing.T) {
	rec := httptest.NewRecorder()
	e := newEncoder(rec, "th", "r")
	calc := &agent.ToolActivity{CallID: "c1", Name: "calculator", Arguments: `{"expression":"1+1"}`, Content: "2"}
	for _, ev := range []agent.Event{
		{Type: agent.EventWarning, Text: "the MCP server docs is down"},
		{Type: agent.EventReasoningDelta, Step: 1, Text: "Think"},
		{Type: agent.EventReasoningDelta, Step: 1, Text: ""},
		{Type: agent.EventReasoningDelta, Step: 1, Text: "ing."},
		{Type: agent.EventTextDelta, Step: 1, Text: "Let me add."},
		{Type: agent.EventToolStarted, Step: 1, Tool: calc},
		{Type: agent.EventToolFinished, Step: 1, Tool: calc},
		{Type: agent.EventTextDelta, Step: 2, Text: "Asking you."},
		{Type: agent.EventToolCallDelta, Step: 2, ToolCall: &llm.ToolCallDelta{Index: 0, ID: "k1", Name: "confirm"}},
		{Type: agent.EventToolCallDelta, Step: 2, ToolCall: &llm.ToolCallDelta{Index: 0, ArgumentsDelta: `{}`}},
		{Type: agent.EventToolCallDelta, Step: 2, ToolCall: &llm.ToolCallDelta{Index: 1, ID: "k2", Name: "confirm", ArgumentsDelta: `{"x":1}`}},
		{Type: agent.EventFinish, Step: 2, FinishReason: llm.FinishToolCalls},
	} {
		if err := e.event(ev); err != nil {
			t.Fatal(err)
		}
	}
	evs := decodeStream(t, rec.Body.String())
	var got []string
	for _, ev := range evs {
		got = append(got, ev["type"].(string))
	}
	want := []string{"CUSTOM",
		"REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END", "REASONING_END",
		"TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
		"TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT",
		"TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
		"TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END",
		"RUN_FINISHED"}
	if !slices.Equal(got, want) {
		t.Fatalf("events\n%v\nwant\n%v", got, want)
	}
	if evs[0]["name"] != "warning" || evs[0]["value"] != "the MCP server docs is down" {
		t.Errorf("warning = %v", evs[0])
	}
	if evs[2]["role"] != "reasoning" || evs[1]["messageId"] != evs[3]["messageId"] || evs[3]["delta"] != "Think" {
		t.Errorf("reasoning %v %v %v", evs[1], evs[2], evs[3])
	}
	step1, step2 := evs[7]["messageId"], evs[14]["messageId"]
	if step1 == step2 || evs[10]["parentMessageId"] != step1 || evs[17]["parentMessageId"] != step2 {
		t.Errorf("step messages %v and %v; server call parent %v, frontend call parent %v", step1, step2, evs[10]["parentMessageId"], evs[17]["parentMessageId"])
	}
	if evs[13]["content"] != "2" || evs[13]["toolCallId"] != "c1" {
		t.Errorf("TOOL_CALL_RESULT = %v", evs[13])
	}
	if evs[18]["toolCallId"] != "k1" || evs[19]["toolCallId"] != "k1" || evs[21]["toolCallId"] != "k2" || evs[21]["delta"] != `{"x":1}` {
		t.Errorf("frontend calls %v %v %v", evs[18], evs[19], evs[21])
	}
	outcome := evs[23]["outcome"].(map[string]any)
	if p, _ := outcome["pendingToolCallIds"].([]any); len(p) != 2 || p[0] != "k1" || p[1] != "k2" {
		t.Errorf("outcome = %v, want k1 and k2 pending", outcome)
	}
}

// FuzzDecodeWorkflowInput feeds arbitrary bodies to the decoder of
// RunAgentInput for workflows. It must never panic; a refusal is a 400
// with a message; an accepted input has its ids and either an input to
// start from or one resume entry with an id and a known status.
func FuzzDecodeWorkflowInput(f *testing.F) {
	for _, seed := range []string{
		`{"threadId":"t","runId":"r","messages":[{"id":"1","role":"user","content":"Hi"}]}`,
		`{"threadId":"t","runId":"r","state":{"input":{"a":1},"vars":{"lang":"fr"},"nodes":{"x":"pending"}},"messages":[]}`,
		`{"threadId":"t","runId":"r","messages":[],"resume":[{"interruptId":"run:ask","status":"resolved","payload":{"ok":true}}]}`,
		`{"threadId":"t","runId":"r","messages":[],"resume":[{"interruptId":"run:ask","status":"cancelled"}]}`,
		`{"threadId":"t","runId":"r","messages":[],"resume":[{},{}]}`,
		`{"threadId":"t","runId":"r","state":{"vars":[1]},"messages":[{"role":"user","content":"x"}]}`,
		`{"threadId":"t","runId":"r","state":"x","messages":[]}`, `{"resume":3}`, `null`, `{} {}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, ae := decodeWorkflowInput(body)
		if ae != nil {
			if ae.Status != http.StatusBadRequest || ae.Message == "" {
				t.Fatalf("refusal %+v, want a 400 with a message", ae)
			}
			return
		}
		if in.ThreadID == "" || in.RunID == "" {
			t.Fatalf("accepted input without ids: %+v", in)
		}
		if in.Resume == nil && in.Input == nil {
			t.Fatalf("accepted input with nothing to start from and nothing to resume: %+v", in)
		}
		if r := in.Resume; r != nil && (r.InterruptID == "" || (r.Status != resumeResolved && r.Status != resumeCancelled)) {
			t.Fatalf("accepted resume entry %+v", r)
		}
	})
}
