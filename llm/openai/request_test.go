package openai_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/llm/openai"
)

// fullRequest holds one of everything a request can carry.
func fullRequest() llm.Request {
	temp, topP, parallel := 0.25, 0.9, false
	return llm.Request{
		Model: "gpt-4o-mini",
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: []llm.Part{{Type: llm.PartText, Text: "Be terse."}}, Name: "policy"},
			{Role: llm.RoleUser, Content: []llm.Part{
				{Type: llm.PartText, Text: "What is this?"},
				{Type: llm.PartImage, ImageURL: "https://example.com/cat.png", Detail: "low"},
			}},
			{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartText, Text: "Let me look."}},
				ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}, {ID: "call_2", Name: "now"}}},
			llm.ToolResult("call_1", "18C", false),
			llm.ToolResult("call_2", "clock broken", true),
			llm.Text(llm.RoleUser, "Thanks."),
		},
		Tools: []llm.ToolDef{
			{Name: "get_weather", Description: "Weather for a city.",
				Parameters: json.RawMessage(`{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"number"}},"required":["zeta"]}`)},
			{Name: "now"},
		},
		ToolChoice:        "get_weather",
		ParallelToolCalls: &parallel,
		Temperature:       &temp,
		TopP:              &topP,
		MaxTokens:         321,
		Stop:              []string{"END"},
		User:              "user-7",
	}
}

// fullRequestWire is fullRequest as OpenAI's JSON, decoded.
func fullRequestWire() map[string]any {
	return map[string]any{
		"model": "gpt-4o-mini",
		"messages": []any{
			map[string]any{"role": "system", "content": "Be terse.", "name": "policy"},
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "What is this?"},
				map[string]any{"type": "image_url", "image_url": map[string]any{"url": "https://example.com/cat.png", "detail": "low"}},
			}},
			map[string]any{"role": "assistant", "content": "Let me look.", "tool_calls": []any{
				map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}},
				map[string]any{"id": "call_2", "type": "function", "function": map[string]any{"name": "now", "arguments": "{}"}},
			}},
			map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "18C"},
			map[string]any{"role": "tool", "tool_call_id": "call_2", "content": "clock broken"},
			map[string]any{"role": "user", "content": "Thanks."},
		},
		"tools": []any{
			map[string]any{"type": "function", "function": map[string]any{
				"name": "get_weather", "description": "Weather for a city.",
				"parameters": map[string]any{"type": "object", "required": []any{"zeta"}, "properties": map[string]any{
					"zeta": map[string]any{"type": "string"}, "alpha": map[string]any{"type": "number"}}},
			}},
			map[string]any{"type": "function", "function": map[string]any{
				"name": "now", "parameters": map[string]any{"type": "object", "properties": map[string]any{}},
			}},
		},
		"tool_choice":         map[string]any{"type": "function", "function": map[string]any{"name": "get_weather"}},
		"parallel_tool_calls": false,
		"temperature":         0.25,
		"top_p":               0.9,
		"max_tokens":          321.0,
		"stop":                []any{"END"},
		"user":                "user-7",
	}
}

func TestRequestWire(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Turn{Text: "ok"}, llmtest.Turn{Text: "ok"})
	c := newClient(t, srv, nil)
	if _, err := c.Generate(t.Context(), fullRequest()); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if _, err := llm.Collect(c.Stream(t.Context(), fullRequest())); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("fake received %d requests, want 2", len(reqs))
	}
	streamWire := fullRequestWire()
	streamWire["stream"] = true
	streamWire["stream_options"] = map[string]any{"include_usage": true}
	for i, want := range []map[string]any{fullRequestWire(), streamWire} {
		var got map[string]any
		if err := json.Unmarshal(reqs[i].Body, &got); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("request %d on the wire (-want +got):\n%s", i, diff)
		}
		if reqs[i].Method != http.MethodPost || reqs[i].Path != "/v1/chat/completions" {
			t.Errorf("request %d: %s %s, want POST /v1/chat/completions", i, reqs[i].Method, reqs[i].Path)
		}
		// Models write arguments in the order the schema lists properties.
		if !bytes.Contains(reqs[i].Body, []byte(`"properties":{"zeta":{"type":"string"},"alpha":{"type":"number"}}`)) {
			t.Errorf("request %d: schema properties lost their order:\n%s", i, reqs[i].Body)
		}
	}
}

func TestRequestToolChoiceWords(t *testing.T) {
	for _, choice := range []string{"auto", "none", "required"} {
		t.Run(choice, func(t *testing.T) {
			srv := llmtest.NewOpenAI(t, llmtest.Turn{Text: "ok"}, llmtest.Turn{Text: "ok"})
			c := newClient(t, srv, nil)
			req := fullRequest()
			req.ToolChoice = choice
			if _, err := c.Generate(t.Context(), req); err != nil {
				t.Fatal(err)
			}
			// Without tools, tool_choice and parallel_tool_calls would be
			// refused by OpenAI: they are left out.
			req.Tools = nil
			if _, err := c.Generate(t.Context(), req); err != nil {
				t.Fatal(err)
			}
			var with, without map[string]any
			_ = json.Unmarshal(srv.Requests()[0].Body, &with)
			_ = json.Unmarshal(srv.Requests()[1].Body, &without)
			if with["tool_choice"] != choice {
				t.Errorf("tool_choice = %v, want %q", with["tool_choice"], choice)
			}
			for _, key := range []string{"tool_choice", "parallel_tool_calls", "tools"} {
				if v, ok := without[key]; ok {
					t.Errorf("request without tools carries %s = %v", key, v)
				}
			}
		})
	}
}

// rewrite sends every request to target, whatever its URL says.
type rewrite struct{ target *url.URL }

func (r rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host = r.target.Scheme, r.target.Host
	return http.DefaultTransport.RoundTrip(req)
}

// TestMaxCompletionTokens checks that api.openai.com gets
// max_completion_tokens, which its reasoning models require.
func TestMaxCompletionTokens(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Turn{Text: "ok"})
	target, _ := url.Parse(srv.URL)
	c, err := openai.New(&openai.Options{HTTPClient: &http.Client{Transport: rewrite{target}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Generate(t.Context(), llm.Request{Model: "o4-mini", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}, MaxTokens: 77}); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	var body map[string]any
	_ = json.Unmarshal(srv.Requests()[0].Body, &body)
	if body["max_completion_tokens"] != 77.0 {
		t.Errorf("max_completion_tokens = %v, want 77", body["max_completion_tokens"])
	}
	if v, ok := body["max_tokens"]; ok {
		t.Errorf("max_tokens = %v sent to api.openai.com, want none", v)
	}
}

func TestRequestCallerErrors(t *testing.T) {
	user := llm.Text(llm.RoleUser, "hi")
	tests := []struct {
		name   string
		mutate func(r *llm.Request)
		field  string // the error names it
	}{
		{"no model", func(r *llm.Request) { r.Model = "" }, "Request.Model"},
		{"unknown role", func(r *llm.Request) { r.Messages = []llm.Message{{Role: "narrator"}} }, "messages[0].role"},
		{"image in system", func(r *llm.Request) {
			r.Messages = []llm.Message{{Role: llm.RoleSystem, Content: []llm.Part{{Type: llm.PartImage, ImageURL: "https://x/y.png"}}}}
		}, "messages[0].content[0]"},
		{"image without URL", func(r *llm.Request) {
			r.Messages = []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartImage}}}}
		}, "messages[0].content[0].image_url"},
		{"unknown part", func(r *llm.Request) {
			r.Messages = []llm.Message{user, {Role: llm.RoleUser, Content: []llm.Part{{Type: "audio"}}}}
		}, "messages[1].content[0].type"},
		{"tool result without call id", func(r *llm.Request) { r.Messages = append(r.Messages, llm.ToolResult("", "x", false)) }, "messages[1].tool_call_id"},
		{"call without id", func(r *llm.Request) {
			r.Messages = append(r.Messages, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{Name: "f"}}})
		}, "messages[1].tool_calls[0]"},
		{"tool without name", func(r *llm.Request) { r.Tools = []llm.ToolDef{{Description: "x"}} }, "tools[0].name"},
		{"schema not an object", func(r *llm.Request) {
			r.Tools = []llm.ToolDef{{Name: "f", Parameters: json.RawMessage(`["type"]`)}}
		}, "tools[0].parameters"},
		{"tool choice names no tool", func(r *llm.Request) {
			r.Tools = []llm.ToolDef{{Name: "f"}}
			r.ToolChoice = "g"
		}, "tool_choice"},
		{"negative max tokens", func(r *llm.Request) { r.MaxTokens = -1 }, "max_tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewOpenAI(t)
			c := newClient(t, srv, nil)
			req := llm.Request{Model: "m", Messages: []llm.Message{user}}
			tt.mutate(&req)
			_, genErr := c.Generate(t.Context(), req)
			_, streamErr := llm.Collect(c.Stream(t.Context(), req))
			for _, err := range []error{genErr, streamErr} {
				var e *llm.Error
				if !errors.As(err, &e) || e.Kind != llm.KindCaller {
					t.Fatalf("error = %v, want a KindCaller *llm.Error", err)
				}
				if !strings.Contains(e.Message, tt.field) {
					t.Errorf("error message %q does not name %s", e.Message, tt.field)
				}
				if e.Provider != "openai" {
					t.Errorf("error provider = %q, want openai", e.Provider)
				}
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d request(s) reached the server with bad input", n)
			}
		})
	}
}

func TestRequestHeaders(t *testing.T) {
	// The SDK's environment must not leak: a key for OpenAI sent to a
	// local server, or a base URL that redirects every call.
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("OPENAI_ORG_ID", "org-from-env")

	srv := llmtest.NewOpenAI(t, llmtest.Turn{Text: "ok"}, llmtest.Turn{Text: "ok"})
	withKey := newClient(t, srv, &openai.Options{APIKey: "sk-test", Headers: map[string]string{"X-Gateway-Route": "blue"}})
	if _, err := withKey.Generate(t.Context(), llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	without := newClient(t, srv, nil)
	if _, err := without.Generate(t.Context(), llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	reqs := srv.Requests()
	got := []map[string]string{}
	for _, r := range reqs {
		got = append(got, map[string]string{
			"Authorization":       r.Header.Get("Authorization"),
			"X-Gateway-Route":     r.Header.Get("X-Gateway-Route"),
			"Openai-Organization": r.Header.Get("OpenAI-Organization"),
		})
	}
	want := []map[string]string{
		{"Authorization": "Bearer sk-test", "X-Gateway-Route": "blue", "Openai-Organization": ""},
		{"Authorization": "", "X-Gateway-Route": "", "Openai-Organization": ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
}
