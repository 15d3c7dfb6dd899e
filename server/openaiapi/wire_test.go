package openaiapi

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/llm"
)

func TestDecodeChatRequestMapsMessages(t *testing.T) {
	body := `{"model":"helper","stream":true,"max_completion_tokens":99,"stop":"END","tool_choice":{"type":"function","function":{"name":"f"}},
	"messages":[
		{"role":"developer","content":"be brief"},
		{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA","detail":"low"}}]},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"42"}
	]}`
	req, msgs, err := decodeChatRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Message{
		llm.Text(llm.RoleSystem, "be brief"),
		{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartText, Text: "what is this?"}, {Type: llm.PartImage, ImageURL: "data:image/png;base64,AAAA", Detail: "low"}}},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "f", Arguments: "{}"}}},
		llm.ToolResult("c1", "42", false),
	}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	choice, err := req.toolChoice()
	stop, err2 := req.stop()
	if err != nil || err2 != nil || choice != "f" || !cmp.Equal(stop, []string{"END"}) || req.maxTokens() != 99 || !req.Stream {
		t.Errorf("choice %q stop %v max %d stream %v (%v %v)", choice, stop, req.maxTokens(), req.Stream, err, err2)
	}
}

func TestDecodeChatRequestErrorsNameTheParameter(t *testing.T) {
	for _, tc := range []struct{ body, param string }{
		{`{"model":"m","messages":[{"role":"user"}]}`, "messages[0].content"},
		{`{"model":"m","messages":[{"role":"tool","content":"x"}]}`, "messages[0].tool_call_id"},
		{`{"model":"m","messages":[{"role":"user","content":[{"type":"audio"}]}]}`, "messages[0].content[0].type"},
		{`{"model":"m","messages":[{"role":"user","content":7}]}`, "messages[0].content"},
		{`{"model":"m","n":3,"messages":[{"role":"user","content":"x"}]}`, "n"},
		{`{"model":"m","messages":"hi"}`, "messages"},
		{`{"messages":[{"role":"user","content":"x"}]}`, "model"},
		{`{"model":"m","tools":[{"type":"function","function":{}}],"messages":[{"role":"user","content":"x"}]}`, "tools[0].function.name"},
	} {
		_, _, err := decodeChatRequest([]byte(tc.body))
		var re *requestError
		if !errors.As(err, &re) || re.Param != tc.param || re.Message == "" {
			t.Errorf("%s: err = %#v, want param %s", tc.body, err, tc.param)
		}
	}
}

func TestOpenWebUITaskDetection(t *testing.T) {
	task := []llm.Message{llm.Text(llm.RoleSystem, "x"), llm.Text(llm.RoleUser, "  ### Task:\nSuggest 3 follow-ups")}
	chat := []llm.Message{llm.Text(llm.RoleUser, "### Task: old"), llm.Text(llm.RoleAssistant, "ok"), llm.Text(llm.RoleUser, "what about ### Task:?")}
	if !isOpenWebUITask(task) || isOpenWebUITask(chat) {
		t.Error("task detection must look at the last user message's start only")
	}
}

func FuzzDecodeChatRequest(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	f.Add([]byte(`{"model":"m","stop":["a"],"tool_choice":"auto","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`))
	f.Add([]byte(`{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{"}}]}]}`))
	f.Add([]byte(`{`))
	f.Add([]byte(`{"model":"m","conversation":"c1","messages":[{"role":"user","content":"hi"}]}`))
	f.Add([]byte(`{"model":"m","conversation":{"id":" "},"messages":[{"role":"user","content":"hi"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, msgs, err := decodeChatRequest(body)
		if err != nil {
			var re *requestError
			if !errors.As(err, &re) || re.Message == "" {
				t.Fatalf("error without a message for the client: %v", err)
			}
			return
		}
		if req.Model == "" || len(msgs) == 0 || len(msgs) != len(req.Messages) {
			t.Fatalf("accepted an invalid request: model %q, %d messages", req.Model, len(msgs))
		}
		if c := strings.TrimSpace(string(req.Conversation)); c != "" && c != "null" && strings.TrimSpace(req.conversation) == "" {
			t.Fatalf("accepted conversation %s without an id", req.Conversation)
		}
		_, _ = req.toolChoice()
		_, _ = req.stop()
		_ = strings.TrimSpace(req.User)
	})
}

// TestDecodeMessagesOptions: the two APIs that share DecodeMessages differ
// only where MessageOptions says so.
func TestDecodeMessagesOptions(t *testing.T) {
	var files []string
	tests := []struct {
		name    string
		msg     string
		opts    *MessageOptions
		wantErr string // the whole message; empty when the message is accepted
	}{
		{"empty assistant refused by default", `{"role":"assistant"}`, nil, "messages[0].content is required"},
		{"empty assistant with EmptyAssistant", `{"role":"assistant","content":null}`, &MessageOptions{EmptyAssistant: true}, ""},
		{"assistant with tool calls needs no content", `{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f"}}]}`, nil, ""},
		{"file part refused by default", `{"role":"user","content":[{"type":"file","file":{"file_id":"f1"}}]}`, nil,
			`messages[0].content[0].type "file" is not supported; use text or image_url`},
		{"file part with Files", `{"role":"user","content":[{"type":"file","file":{"file_id":"f1"}}]}`, &MessageOptions{Files: &files}, ""},
		{"file part without id", `{"role":"user","content":[{"type":"file","file":{}}]}`, &MessageOptions{Files: &files},
			"messages[0].content[0].file.file_id is required: the fileId POST /api/upload returned"},
		{"unknown part with Files", `{"role":"user","content":[{"type":"audio"}]}`, &MessageOptions{Files: &files},
			`messages[0].content[0].type "audio" is not supported; use text, image_url or file`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m Message
			if err := json.Unmarshal([]byte(tt.msg), &m); err != nil {
				t.Fatal(err)
			}
			_, ae := DecodeMessages([]Message{m}, tt.opts)
			switch {
			case tt.wantErr == "" && ae != nil:
				t.Errorf("error %q, want the message accepted", ae.Message)
			case tt.wantErr != "" && (ae == nil || ae.Message != tt.wantErr):
				t.Errorf("error %v, want %q", ae, tt.wantErr)
			}
		})
	}
	if !cmp.Equal(files, []string{"f1"}) {
		t.Errorf("Files = %v, want [f1]: the file part's id, once", files)
	}
}
