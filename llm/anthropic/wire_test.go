package anthropic_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/anthropic"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
)

// TestHeaders checks the headers the Messages API documents: the key in
// X-Api-Key (not Authorization), API version 2023-06-01 (2026-10-21
// refuses temperature and top_p), and what each call accepts.
func TestHeaders(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Turn{Text: "a"}, llmtest.Turn{Text: "b"})
	c := newClient(t, srv, &anthropic.Options{APIKey: "sk-ant-configured"})
	if _, err := c.Generate(t.Context(), userRequest("hi")); err != nil {
		t.Fatal(err)
	}
	if _, err := llm.Collect(c.Stream(t.Context(), userRequest("hi"))); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	for i, accept := range []string{"application/json", "text/event-stream"} {
		h := reqs[i].Header
		want := map[string]string{
			"X-Api-Key":         "sk-ant-configured",
			"Authorization":     "",
			"Anthropic-Version": "2023-06-01",
			"Content-Type":      "application/json",
			"Accept":            accept,
		}
		for name, v := range want {
			if got := h.Get(name); got != v {
				t.Errorf("request %d: %s = %q, want %q", i, name, got, v)
			}
		}
		if ua := h.Get("User-Agent"); !strings.Contains(ua, "AgentCraft") {
			t.Errorf("request %d: User-Agent %q does not name AgentCraft", i, ua)
		}
		for name := range h {
			if strings.HasPrefix(name, "X-Stainless") {
				t.Errorf("request %d carries the SDK's header %s", i, name)
			}
		}
	}
}

// TestBaseURLTrailingSlash checks that a base URL written with a slash
// still reaches /v1/messages.
func TestBaseURLTrailingSlash(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Turn{Text: "ok"})
	c, err := anthropic.New(&anthropic.Options{BaseURL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Generate(t.Context(), userRequest("hi")); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if p := srv.Requests()[0].Path; p != "/v1/messages" {
		t.Errorf("path %q, want /v1/messages", p)
	}
}

// TestToolSchemaKeepsOrder checks that input_schema is the caller's
// schema byte for byte (property order is what the model reads), with
// only a missing type or properties put in front.
func TestToolSchemaKeepsOrder(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Turn{Text: "ok"})
	req := userRequest("hi")
	req.Tools = []llm.ToolDef{
		{Name: "ordered", Parameters: json.RawMessage(`{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"number"}},"required":["zeta"]}`)},
		{Name: "untyped", Parameters: json.RawMessage(` { "properties": {"b":{},"a":{}} } `)},
		{Name: "bare", Parameters: json.RawMessage(`{}`)},
		{Name: "none"},
		{Name: "string", Parameters: json.RawMessage(`{"type":"string"}`)},
	}
	if _, err := newClient(t, srv, nil).Generate(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Tools []struct {
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tool := range body.Tools {
		got = append(got, string(tool.InputSchema))
	}
	want := []string{
		`{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"number"}},"required":["zeta"]}`,
		`{"type":"object","properties":{"b":{},"a":{}}}`,
		`{"type":"object","properties":{}}`,
		`{"type":"object","properties":{}}`,
		`{"type":"string"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("input_schema as sent (-want +got):\n%s", diff)
	}
}

// TestErrorBodyNotJSON checks an error answer that is not the API's JSON
// (a proxy's HTML page): the status decides the kind, the message is the
// status text, and the error's text carries the start of the page, cut.
func TestErrorBodyNotJSON(t *testing.T) {
	page := "<html><body><h1>502 Bad Gateway</h1>" + strings.Repeat("<!-- padding -->", 1000) + "</body></html>"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, page)
	}))
	t.Cleanup(srv.Close)
	c, err := anthropic.New(&anthropic.Options{BaseURL: srv.URL, APIKey: "sk-ant-secret"})
	if err != nil {
		t.Fatal(err)
	}
	_, genErr := c.Generate(t.Context(), userRequest("hi"))
	_, streamErr := llm.Collect(c.Stream(t.Context(), userRequest("hi")))
	for _, err := range []error{genErr, streamErr} {
		e := asLLMError(t, err)
		if e.Kind != llm.KindProvider || e.Status != 502 || e.Message != "Bad Gateway" || e.RetryAfter.Seconds() != 7 {
			t.Errorf("kind %q status %d message %q retry-after %v, want provider 502 \"Bad Gateway\" 7s: %v",
				e.Kind, e.Status, e.Message, e.RetryAfter, err)
		}
		text := err.Error()
		if !strings.Contains(text, "<h1>502 Bad Gateway</h1>") {
			t.Errorf("error text does not show the page: %.300s", text)
		}
		if len(text) > 4<<10 {
			t.Errorf("error text is %d bytes; the page must be cut", len(text))
		}
		if strings.Contains(text, "sk-ant-secret") {
			t.Errorf("error text holds the API key: %v", err)
		}
	}
}

// TestErrorRequestID checks that the error's text names the status and
// the request id Anthropic's support asks for.
func TestErrorRequestID(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Turn{Fault: &llmtest.Fault{Status: 529}})
	_, err := newClient(t, srv, nil).Generate(t.Context(), userRequest("hi"))
	e := asLLMError(t, err)
	if e.Message != "Overloaded" {
		t.Errorf("message %q, want the body's Overloaded", e.Message)
	}
	for _, want := range []string{"529", "Request-ID: req_llmtest", "overloaded_error"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error text %q lacks %q", err.Error(), want)
		}
	}
}

// TestGenerateAnswerShapes checks the blocks and fields of an answer the
// scripted fake does not produce: thinking, server tools and unknown
// block types are left out, text blocks join, a tool_use keeps its input,
// and a field of an unexpected type does not lose the rest.
func TestGenerateAnswerShapes(t *testing.T) {
	answer := `{"id":"msg_9","type":"message","role":"assistant","model":"claude-x",
		"content":[
			{"type":"thinking","thinking":"hmm","signature":"c2ln"},
			{"type":"text","text":"Part one, "},
			{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"go"}},
			{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]},
			{"type":"hologram","shape":"cube","text":{"rich":true}},
			{"type":"text","text":"part two.","citations":[{"type":"web_search_result_location"}]},
			{"type":"tool_use","id":"toolu_1","name":"calc","input":{"x":2,"y":[1,2]}},
			{"type":"tool_use","id":"toolu_2","name":"now"}
		],
		"stop_reason":"tool_use","stop_sequence":null,
		"usage":{"input_tokens":10,"cache_creation_input_tokens":3,"cache_read_input_tokens":4,"output_tokens":20,
			"server_tool_use":{"web_search_requests":1},"service_tier":{"unexpected":"object"}},
		"container":"not an object"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	c, err := anthropic.New(&anthropic.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Generate(t.Context(), userRequest("hi"))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	want := llm.Response{
		ID: "msg_9", Model: "claude-x",
		Message: llm.Message{Role: llm.RoleAssistant,
			Content: []llm.Part{{Type: llm.PartText, Text: "Part one, part two."}},
			ToolCalls: []llm.ToolCall{
				{ID: "toolu_1", Name: "calc", Arguments: `{"x":2,"y":[1,2]}`},
				{ID: "toolu_2", Name: "now", Arguments: "{}"},
			},
		},
		FinishReason: llm.FinishToolCalls,
		Usage:        llm.Usage{InputTokens: 17, OutputTokens: 20, CachedTokens: 4, CacheWriteTokens: 3},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
}

// FuzzGenerate feeds arbitrary answers to Generate's decoder, under an
// arbitrary status: it must never panic, every failure is an *llm.Error,
// and an error status is reported as that status.
func FuzzGenerate(f *testing.F) {
	f.Add(200, []byte(`{"id":"msg_1","model":"m","content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"t","name":"f","input":{}}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":2}}`))
	f.Add(200, []byte(`{"content":[{"type":"tool_use","input":null},{"type":7}],"usage":{"input_tokens":"x"}}`))
	f.Add(429, []byte(`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`))
	f.Add(502, []byte(`<html>bad gateway</html>`))
	f.Add(200, []byte(`{"content":[`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 200 || status > 599 {
			return
		}
		tr := statusTransport{status: status, body: body}
		c, err := anthropic.New(&anthropic.Options{BaseURL: "http://fuzz.invalid", HTTPClient: &http.Client{Transport: tr}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Generate(t.Context(), userRequest("hi"))
		if err == nil {
			if status >= 400 {
				t.Fatalf("status %d answered without error", status)
			}
			return
		}
		e := asLLMError(t, err)
		if status >= 400 && e.Status != status {
			t.Errorf("status %d reported as %d", status, e.Status)
		}
	})
}

// statusTransport answers every request with status and body.
type statusTransport struct {
	status int
	body   []byte
}

func (st statusTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{
		StatusCode: st.status,
		Header:     http.Header{"Content-Type": {"application/json"}},
		Body:       io.NopCloser(bytes.NewReader(st.body)),
		Request:    r,
	}, nil
}
