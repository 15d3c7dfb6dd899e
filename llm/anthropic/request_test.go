package anthropic_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/anthropic"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
)

func newClient(t testing.TB, srv *llmtest.Server, opts *anthropic.Options) *anthropic.Client {
	t.Helper()
	var o anthropic.Options
	if opts != nil {
		o = *opts
	}
	o.BaseURL = srv.URL
	if o.APIKey == "" {
		o.APIKey = "test-key"
	}
	c, err := anthropic.New(&o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// sentBody returns the JSON body of the i-th request srv received.
func sentBody(t *testing.T, srv *llmtest.Server, i int) map[string]any {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) <= i {
		t.Fatalf("server got %d requests, want at least %d", len(reqs), i+1)
	}
	var body map[string]any
	if err := json.Unmarshal(reqs[i].Body, &body); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, reqs[i].Body)
	}
	return body
}

func ptr[T any](v T) *T { return &v }

func TestRequestMapping(t *testing.T) {
	const png = "iVBORw0KGgo="
	req := llm.Request{
		Model: "claude-test",
		Messages: []llm.Message{
			llm.Text(llm.RoleSystem, "You are terse."),
			{Role: llm.RoleUser, Content: []llm.Part{
				{Type: llm.PartText, Text: "What is in these pictures?"},
				{Type: llm.PartImage, ImageURL: "data:image/png;base64," + png},
				{Type: llm.PartImage, ImageURL: "https://example.com/cat.jpg"},
			}},
			{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartText, Text: "Looking."}}, ToolCalls: []llm.ToolCall{
				{ID: "toolu_1", Name: "zoom", Arguments: `{"factor":2}`},
				{ID: "toolu_2", Name: "describe", Arguments: ""},
			}},
			llm.ToolResult("toolu_1", "zoomed", false),
			llm.ToolResult("toolu_2", "camera offline", true),
			llm.Text(llm.RoleSystem, "Answer in English."),
			llm.Text(llm.RoleUser, "Well?"),
		},
		Tools: []llm.ToolDef{
			{Name: "zoom", Description: "Zoom in.", Parameters: json.RawMessage(`{"type":"object","properties":{"factor":{"type":"number"}},"required":["factor"]}`)},
			{Name: "describe"},
		},
		ToolChoice:        "required",
		ParallelToolCalls: ptr(false),
		Temperature:       ptr(0.25),
		TopP:              ptr(0.5),
		MaxTokens:         321,
		Stop:              []string{"END"},
		User:              "user-7",
	}
	want := map[string]any{
		"model":      "claude-test",
		"max_tokens": 321.0,
		"system": []any{
			map[string]any{"type": "text", "text": "You are terse."},
			map[string]any{"type": "text", "text": "Answer in English."},
		},
		"messages": []any{
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "What is in these pictures?"},
				map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": png}},
				map[string]any{"type": "image", "source": map[string]any{"type": "url", "url": "https://example.com/cat.jpg"}},
			}},
			map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "text", "text": "Looking."},
				map[string]any{"type": "tool_use", "id": "toolu_1", "name": "zoom", "input": map[string]any{"factor": 2.0}},
				map[string]any{"type": "tool_use", "id": "toolu_2", "name": "describe", "input": map[string]any{}},
			}},
			// Both results in one user message, as Anthropic expects.
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": []any{map[string]any{"type": "text", "text": "zoomed"}}},
				map[string]any{"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true, "content": []any{map[string]any{"type": "text", "text": "camera offline"}}},
			}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Well?"}}},
		},
		"tools": []any{
			map[string]any{"name": "zoom", "description": "Zoom in.", "input_schema": map[string]any{
				"type": "object", "properties": map[string]any{"factor": map[string]any{"type": "number"}}, "required": []any{"factor"},
			}},
			map[string]any{"name": "describe", "input_schema": map[string]any{"type": "object", "properties": map[string]any{}}},
		},
		"tool_choice":    map[string]any{"type": "any", "disable_parallel_tool_use": true},
		"temperature":    0.25,
		"top_p":          0.5,
		"stop_sequences": []any{"END"},
		"metadata":       map[string]any{"user_id": "user-7"},
	}

	t.Run("generate", func(t *testing.T) {
		srv := llmtest.NewAnthropic(t, llmtest.Turn{Text: "ok"})
		if _, err := newClient(t, srv, nil).Generate(t.Context(), req); err != nil {
			t.Fatalf("Generate: %v", err)
		}
		if diff := cmp.Diff(want, sentBody(t, srv, 0)); diff != "" {
			t.Errorf("request body (-want +got):\n%s", diff)
		}
	})
	t.Run("stream", func(t *testing.T) {
		srv := llmtest.NewAnthropic(t, llmtest.Turn{Text: "ok"})
		if _, err := llm.Collect(newClient(t, srv, nil).Stream(t.Context(), req)); err != nil {
			t.Fatalf("Stream: %v", err)
		}
		wantStream := map[string]any{"stream": true}
		for k, v := range want {
			wantStream[k] = v
		}
		if diff := cmp.Diff(wantStream, sentBody(t, srv, 0)); diff != "" {
			t.Errorf("request body (-want +got):\n%s", diff)
		}
	})
}

func TestRequestToolChoice(t *testing.T) {
	tools := []llm.ToolDef{{Name: "search"}, {Name: "fetch"}}
	tests := []struct {
		name     string
		choice   string
		parallel *bool
		tools    []llm.ToolDef
		want     any // the tool_choice sent; nil means none
	}{
		{name: "unset", tools: tools, want: nil},
		{name: "unset no parallel", tools: tools, parallel: ptr(false), want: map[string]any{"type": "auto", "disable_parallel_tool_use": true}},
		{name: "parallel allowed", tools: tools, parallel: ptr(true), want: nil},
		{name: "auto", choice: "auto", tools: tools, want: map[string]any{"type": "auto"}},
		{name: "none", choice: "none", tools: tools, want: map[string]any{"type": "none"}},
		{name: "required", choice: "required", tools: tools, want: map[string]any{"type": "any"}},
		{name: "named", choice: "fetch", tools: tools, want: map[string]any{"type": "tool", "name": "fetch"}},
		{name: "named no parallel", choice: "fetch", tools: tools, parallel: ptr(false), want: map[string]any{"type": "tool", "name": "fetch", "disable_parallel_tool_use": true}},
		{name: "none without tools", choice: "none", want: nil},
		{name: "auto without tools", choice: "auto", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewAnthropic(t, llmtest.Turn{Text: "ok"})
			req := llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")},
				Tools: tt.tools, ToolChoice: tt.choice, ParallelToolCalls: tt.parallel}
			if _, err := newClient(t, srv, nil).Generate(t.Context(), req); err != nil {
				t.Fatalf("Generate: %v", err)
			}
			got := sentBody(t, srv, 0)["tool_choice"]
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("tool_choice (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequestDefaults(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Turn{Text: "a"}, llmtest.Turn{Text: "b"})
	req := llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}
	if _, err := newClient(t, srv, nil).Generate(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if _, err := newClient(t, srv, &anthropic.Options{DefaultMaxTokens: 77}).Generate(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"model": "m", "max_tokens": 4096.0,
		"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hi"}}}}}
	if diff := cmp.Diff(want, sentBody(t, srv, 0)); diff != "" {
		t.Errorf("minimal request (-want +got):\n%s", diff)
	}
	if got := sentBody(t, srv, 1)["max_tokens"]; got != 77.0 {
		t.Errorf("max_tokens with DefaultMaxTokens 77 = %v", got)
	}
}

func TestRequestToolArgumentsNotAnObject(t *testing.T) {
	// A call cut off by max_tokens, replayed from history: the request
	// must still be valid, so its input becomes {}.
	srv := llmtest.NewAnthropic(t, llmtest.Turn{Text: "ok"})
	req := llm.Request{Model: "m", Messages: []llm.Message{
		llm.Text(llm.RoleUser, "go"),
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "t1", Name: "f", Arguments: `{"q":"unfinish`}}},
		llm.ToolResult("t1", "invalid arguments", true),
	}}
	if _, err := newClient(t, srv, nil).Generate(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	msgs := sentBody(t, srv, 0)["messages"].([]any)
	got := msgs[1].(map[string]any)["content"].([]any)[0].(map[string]any)["input"]
	if diff := cmp.Diff(map[string]any{}, got); diff != "" {
		t.Errorf("input of a broken call (-want +got):\n%s", diff)
	}
}

func TestRequestCallerErrors(t *testing.T) {
	user := llm.Text(llm.RoleUser, "hi")
	tests := []struct {
		name string
		req  llm.Request
		want string // part of the message
	}{
		{"no model", llm.Request{Messages: []llm.Message{user}}, "request.Model"},
		{"no messages", llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleSystem, "sys")}}, "request.Messages"},
		{"negative max tokens", llm.Request{Model: "m", Messages: []llm.Message{user}, MaxTokens: -1}, "MaxTokens"},
		{"unknown role", llm.Request{Model: "m", Messages: []llm.Message{llm.Text("robot", "x")}}, "messages[0].role"},
		{"empty user", llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser}}}, "messages[0]"},
		{"tool without id", llm.Request{Model: "m", Messages: []llm.Message{user, llm.ToolResult("", "x", false)}}, "ToolCallID"},
		{"image in system", llm.Request{Model: "m", Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: []llm.Part{{Type: llm.PartImage, ImageURL: "https://x/y.png"}}}, user}}, "messages[0].content[0]"},
		{"ftp image", llm.Request{Model: "m", Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartImage, ImageURL: "ftp://x/y.png"}}}}}, "image_url"},
		{"bmp image", llm.Request{Model: "m", Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartImage, ImageURL: "data:image/bmp;base64,AAAA"}}}}}, "image/bmp"},
		{"data URI not base64", llm.Request{Model: "m", Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartImage, ImageURL: "data:image/png,abc"}}}}}, "base64"},
		{"unknown part", llm.Request{Model: "m", Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Part{{Type: "audio"}}}}}, "audio"},
		{"unknown tool choice", llm.Request{Model: "m", Messages: []llm.Message{user}, Tools: []llm.ToolDef{{Name: "a"}}, ToolChoice: "b"}, `"b"`},
		{"required without tools", llm.Request{Model: "m", Messages: []llm.Message{user}, ToolChoice: "required"}, "request.Tools"},
		{"tool without name", llm.Request{Model: "m", Messages: []llm.Message{user}, Tools: []llm.ToolDef{{}}}, "tools[0].name"},
		{"schema not an object", llm.Request{Model: "m", Messages: []llm.Message{user}, Tools: []llm.ToolDef{{Name: "a", Parameters: json.RawMessage(`[1]`)}}}, "tools[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewAnthropic(t)
			c := newClient(t, srv, &anthropic.Options{Name: "claude-prod"})
			_, genErr := c.Generate(t.Context(), tt.req)
			_, streamErr := llm.Collect(c.Stream(t.Context(), tt.req))
			for _, err := range []error{genErr, streamErr} {
				e := asLLMError(t, err)
				if e.Kind != llm.KindCaller || e.Provider != "claude-prod" {
					t.Errorf("error kind %q provider %q, want caller from claude-prod: %v", e.Kind, e.Provider, err)
				}
				if !strings.Contains(e.Message, tt.want) {
					t.Errorf("message %q does not name %q", e.Message, tt.want)
				}
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("invalid request reached the server %d time(s)", n)
			}
		})
	}
}

// TestGenerateLargeMaxTokens checks that Generate accepts a cap the SDK
// alone would refuse without streaming (it guesses more than ten minutes
// of work): the bound is the caller's ctx, not a guess.
func TestGenerateLargeMaxTokens(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Turn{Text: "long"})
	req := userRequest("write a book")
	req.MaxTokens = 64000
	resp, err := newClient(t, srv, nil).Generate(t.Context(), req)
	if err != nil {
		t.Fatalf("Generate with MaxTokens 64000: %v", err)
	}
	if resp.Message.Text() != "long" {
		t.Errorf("answer %q, want long", resp.Message.Text())
	}
	if got := srv.Requests()[0].Header.Get("X-Stainless-Timeout"); got != "" {
		t.Errorf("X-Stainless-Timeout = %q; the stand-in bound must not reach the server", got)
	}
}
