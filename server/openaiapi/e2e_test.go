package openaiapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"go.uber.org/goleak"

	"github.com/agentcraftlab/agentcraft/internal/sse"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/llm/middleware"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// Idle keep-alive connections of http.DefaultTransport-derived pools
		// are closed lazily by the runtime; they are not leaks of ours.
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
	)
}

// fastRetry keeps fault tests quick: the backoff is the middleware's, scaled down.
func fastRetry() middleware.Settings {
	return middleware.Settings{Retry: middleware.RetrySettings{MaxRetries: 3, BaseDelay: time.Millisecond, MaxDelay: 50 * time.Millisecond}}
}

type fixture struct {
	env    *servertest.Env
	fake   *llmtest.Server
	client openai.Client
}

// newOpenAIFixture serves agent "helper" (calculator, current_time) on a
// fake OpenAI-compatible provider.
func newOpenAIFixture(t *testing.T, turns ...llmtest.Turn) *fixture {
	t.Helper()
	fake := llmtest.NewOpenAI(t, turns...)
	return newFixture(t, fake, platform.ProviderConfig{Name: "fake", Type: "openai", BaseURL: fake.URL + "/v1", APIKey: "upstream-key", Middleware: fastRetry()})
}

func newAnthropicFixture(t *testing.T, turns ...llmtest.Turn) *fixture {
	t.Helper()
	fake := llmtest.NewAnthropic(t, turns...)
	return newFixture(t, fake, platform.ProviderConfig{Name: "fake", Type: "anthropic", BaseURL: fake.URL, APIKey: "upstream-key", Middleware: fastRetry()})
}

func newFixture(t *testing.T, fake *llmtest.Server, prov platform.ProviderConfig) *fixture {
	t.Helper()
	env := servertest.New(t, &servertest.Options{
		Providers: []platform.ProviderConfig{prov},
		Agents: []platform.AgentSpec{{
			Name: "helper", Model: "fake/fake-model", Instructions: "You are helpful.",
			Tools: []string{"calculator", "current_time"},
		}},
	})
	client := openai.NewClient(option.WithBaseURL(env.URL+"/v1"), option.WithAPIKey(env.Key), option.WithMaxRetries(0))
	return &fixture{env: env, fake: fake, client: client}
}

func userMessage(s string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    "helper",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(s)},
	}
}

var calcTurns = []llmtest.Turn{
	{ToolCalls: []llm.ToolCall{{ID: "call_calc", Name: "calculator", Arguments: `{"expression":"6*7"}`}}, Usage: llm.Usage{InputTokens: 20, OutputTokens: 5}},
	{Text: "The answer is 42.", Usage: llm.Usage{InputTokens: 30, OutputTokens: 6, CachedTokens: 10}},
}

func TestModelsListsAgents(t *testing.T) {
	f := newOpenAIFixture(t)
	page, err := f.client.Models.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].ID != "helper" || page.Data[0].OwnedBy != "agentcraft" || page.Data[0].Object != "model" {
		t.Fatalf("models = %+v", page.Data)
	}
}

func TestChatNonStreaming(t *testing.T) {
	f := newOpenAIFixture(t, llmtest.Turn{Text: "Hello there!", Usage: llm.Usage{InputTokens: 11, OutputTokens: 3}})
	var resp *http.Response
	c, err := f.client.Chat.Completions.New(context.Background(), userMessage("hi"), option.WithResponseInto(&resp))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Choices[0].Message.Content; got != "Hello there!" {
		t.Errorf("content = %q", got)
	}
	if c.Choices[0].FinishReason != "stop" || c.Usage.PromptTokens != 11 || c.Usage.CompletionTokens != 3 || c.Model != "helper" {
		t.Errorf("completion = %+v", c)
	}
	if v := resp.Header.Get("X-AgentCraft-Overhead-Ms"); v == "" {
		t.Error("X-AgentCraft-Overhead-Ms header missing")
	}
	// The agent's instructions lead the upstream conversation.
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	reqs := f.fake.Requests()
	if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Messages[0].Role != "system" || !strings.Contains(toJSON(body.Messages[0].Content), "You are helpful.") {
		t.Errorf("upstream conversation does not start with the instructions: %s", reqs[0].Body)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// serverToolRoundTrip runs the calculator round trip and checks that the
// agent's tool call never reaches the client.
func serverToolRoundTrip(t *testing.T, f *fixture) {
	t.Helper()
	params := userMessage("what is 6*7?")
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := f.client.Chat.Completions.NewStreaming(context.Background(), params)
	var text strings.Builder
	var finish string
	var usage openai.CompletionUsage
	chunks := 0
	for stream.Next() {
		ch := stream.Current()
		chunks++
		if ch.Object != "chat.completion.chunk" {
			t.Errorf("object = %q", ch.Object)
		}
		for _, c := range ch.Choices {
			if len(c.Delta.ToolCalls) > 0 {
				t.Fatalf("server-side tool call leaked to the client: %s", ch.RawJSON())
			}
			text.WriteString(c.Delta.Content)
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
		}
		if len(ch.Choices) == 0 && ch.Usage.TotalTokens > 0 {
			usage = ch.Usage
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if text.String() != "The answer is 42." || finish != "stop" {
		t.Errorf("text %q finish %q", text.String(), finish)
	}
	if usage.PromptTokens != 50 || usage.CompletionTokens != 11 || usage.PromptTokensDetails.CachedTokens != 10 {
		t.Errorf("usage = %+v, want the sum of both steps", usage)
	}
	reqs := f.fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("upstream saw %d requests, want 2", len(reqs))
	}
	if !bytes.Contains(reqs[1].Body, []byte("42")) || !bytes.Contains(reqs[1].Body, []byte("call_calc")) {
		t.Errorf("second upstream request lacks the calculator result: %s", reqs[1].Body)
	}

	// The same round trip, not streamed.
	f.fake.Push(calcTurns...)
	c, err := f.client.Chat.Completions.New(context.Background(), userMessage("what is 6*7?"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Choices[0].Message.ToolCalls) != 0 || c.Choices[0].Message.Content != "The answer is 42." {
		t.Errorf("non-streaming answer = %+v", c.Choices[0].Message)
	}
}

func TestServerToolRoundTripOpenAI(t *testing.T) {
	serverToolRoundTrip(t, newOpenAIFixture(t, calcTurns...))
}

func TestServerToolRoundTripAnthropic(t *testing.T) {
	serverToolRoundTrip(t, newAnthropicFixture(t, calcTurns...))
}

func TestClientToolsAreReturned(t *testing.T) {
	weather := llm.ToolCall{ID: "call_w", Name: "get_weather", Arguments: `{"city":"Tokyo","unit":"celsius"}`}
	f := newOpenAIFixture(t, llmtest.Turn{ToolCalls: []llm.ToolCall{weather}}, llmtest.Turn{ToolCalls: []llm.ToolCall{weather}})
	params := userMessage("weather in Tokyo?")
	params.Tools = []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:       "get_weather",
		Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
	})}
	stream := f.client.Chat.Completions.NewStreaming(context.Background(), params)
	var acc openai.ChatCompletionAccumulator
	idSeen, nameSeen, argFragments := 0, 0, 0
	for stream.Next() {
		ch := stream.Current()
		acc.AddChunk(ch)
		for _, c := range ch.Choices {
			for _, tc := range c.Delta.ToolCalls {
				if tc.ID != "" {
					idSeen++
				}
				if tc.Function.Name != "" {
					nameSeen++
				}
				if tc.Function.Arguments != "" {
					argFragments++
				}
			}
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if idSeen != 1 || nameSeen != 1 || argFragments < 2 {
		t.Errorf("tool call deltas: id %d times, name %d times, %d argument fragments; want 1, 1, several", idSeen, nameSeen, argFragments)
	}
	got := acc.Choices[0].Message.ToolCalls
	if len(got) != 1 || got[0].ID != "call_w" || got[0].Function.Name != "get_weather" || got[0].Function.Arguments != weather.Arguments {
		t.Errorf("accumulated tool calls = %+v", got)
	}
	if acc.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("finish = %q", acc.Choices[0].FinishReason)
	}
	c, err := f.client.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if tc := c.Choices[0].Message.ToolCalls; len(tc) != 1 || tc[0].Function.Arguments != weather.Arguments || c.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("non-streaming tool calls = %+v", c.Choices[0])
	}
}

// noRedirects reports a redirect as the answer: curl and many SDKs do not
// follow a 307 for a POST, so the server must answer the path itself.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// rawPost sends body to path with the fixture's key and returns status and decoded error.
func rawPost(t *testing.T, url, key, body string) (int, map[string]any, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: body is not JSON: %q", url, raw)
	}
	return resp.StatusCode, out, resp.Header
}

func TestBadInputGetsOpenAIErrors(t *testing.T) {
	f := newOpenAIFixture(t)
	url := f.env.URL + "/v1/chat/completions"
	huge := `{"model":"helper","messages":[{"role":"user","content":"` + strings.Repeat("a", 9<<20) + `"}]}`
	for _, tc := range []struct {
		name, key, body string
		status          int
		code            string
	}{
		{"malformed json", f.env.Key, `{"model":"helper",`, 400, "invalid_request"},
		{"not an object", f.env.Key, `[1,2]`, 400, "invalid_request"},
		{"missing messages", f.env.Key, `{"model":"helper"}`, 400, "invalid_request"},
		{"bad role", f.env.Key, `{"model":"helper","messages":[{"role":"wizard","content":"x"}]}`, 400, "invalid_request"},
		{"unknown model", f.env.Key, `{"model":"nope","messages":[{"role":"user","content":"x"}]}`, 404, "model_not_found"},
		{"oversized body", f.env.Key, huge, 413, "request_too_large"},
		{"missing key", "", `{"model":"helper","messages":[{"role":"user","content":"x"}]}`, 401, "missing_api_key"},
		{"wrong key", "ac_wrong", `{"model":"helper","messages":[{"role":"user","content":"x"}]}`, 401, "invalid_api_key"},
		{"stream unknown model", f.env.Key, `{"model":"nope","stream":true,"messages":[{"role":"user","content":"x"}]}`, 404, "model_not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, _ := rawPost(t, url, tc.key, tc.body)
			e, _ := body["error"].(map[string]any)
			if status != tc.status || e == nil || e["code"] != tc.code || e["message"] == "" {
				t.Errorf("status %d body %v; want %d with code %s", status, body, tc.status, tc.code)
			}
		})
	}
	// The SDK sees these as typed API errors.
	_, err := f.client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "nope", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Code != "model_not_found" {
		t.Errorf("SDK error = %v", err)
	}
	if len(f.fake.Requests()) != 0 {
		t.Error("bad requests reached the provider")
	}
}

func TestDoubledSlashPath(t *testing.T) {
	f := newOpenAIFixture(t, llmtest.Turn{Text: "ok"})
	client := openai.NewClient(option.WithBaseURL(f.env.URL+"//v1/"), option.WithAPIKey(f.env.Key), option.WithMaxRetries(0),
		option.WithHTTPClient(noRedirects))
	for _, path := range []string{"/v1//chat/completions", "//v1/chat/completions"} {
		status, _, _ := rawPost(t, f.env.URL+path, f.env.Key, `{"model":"helper","messages":[{"role":"user","content":"x"}]}`)
		if status != 200 {
			t.Fatalf("%s status %d", path, status)
		}
		f.fake.Push(llmtest.Turn{Text: "ok"})
	}
	if _, err := client.Chat.Completions.New(context.Background(), userMessage("x")); err != nil {
		t.Fatalf("base URL with doubled slash: %v", err)
	}
}

func TestRetriesBeforeFirstChunk(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault llmtest.Fault
	}{
		{"429 retry-after-ms", llmtest.Fault{Status: 429, RetryAfterMs: "20", Message: "slow down"}},
		{"429 retry-after", llmtest.Fault{Status: 429, RetryAfter: "0", Message: "slow down"}},
		{"503", llmtest.Fault{Status: 503, Message: "unavailable"}},
		{"529", llmtest.Fault{Status: 529, Message: "overloaded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fault := tc.fault
			f := newOpenAIFixture(t, llmtest.Turn{Fault: &fault}, llmtest.Turn{Text: "recovered"})
			stream := f.client.Chat.Completions.NewStreaming(context.Background(), userMessage("x"))
			var text strings.Builder
			for stream.Next() {
				for _, c := range stream.Current().Choices {
					text.WriteString(c.Delta.Content)
				}
			}
			if err := stream.Err(); err != nil || text.String() != "recovered" {
				t.Fatalf("text %q err %v; want a retried success", text.String(), err)
			}
			if n := len(f.fake.Requests()); n != 2 {
				t.Errorf("upstream saw %d requests, want 2", n)
			}
		})
	}
}

func TestExhaustedRetriesGiveOpenAIError(t *testing.T) {
	fault := llmtest.Fault{Status: 503, Message: "down for maintenance"}
	turns := []llmtest.Turn{{Fault: &fault}, {Fault: &fault}, {Fault: &fault}, {Fault: &fault}}
	f := newOpenAIFixture(t, turns...)
	status, body, _ := rawPost(t, f.env.URL+"/v1/chat/completions", f.env.Key, `{"model":"helper","stream":true,"messages":[{"role":"user","content":"x"}]}`)
	e, _ := body["error"].(map[string]any)
	if status != 502 || e == nil || !strings.Contains(e["message"].(string), "503") {
		t.Fatalf("status %d body %v; want 502 naming the upstream 503", status, body)
	}
	if !strings.Contains(f.env.Log.String(), "level=ERROR") {
		t.Error("exhausted retries were not logged as an error")
	}
}

// streamError runs a stream that fails after it began and returns the
// error the SDK saw and the text received before it.
func streamError(t *testing.T, f *fixture) (string, error) {
	t.Helper()
	stream := f.client.Chat.Completions.NewStreaming(context.Background(), userMessage("x"))
	var text strings.Builder
	for stream.Next() {
		for _, c := range stream.Current().Choices {
			text.WriteString(c.Delta.Content)
		}
	}
	return text.String(), stream.Err()
}

func TestFaultsAfterStreamBegan(t *testing.T) {
	long := "The quick brown fox jumps over the lazy dog."
	t.Run("anthropic 529 mid-stream", func(t *testing.T) {
		f := newAnthropicFixture(t, llmtest.Turn{Text: long, Fault: &llmtest.Fault{AfterChunks: 2, Status: 529, Message: "Overloaded"}})
		text, err := streamError(t, f)
		if err == nil || text == "" || !strings.Contains(err.Error(), "529") {
			t.Fatalf("text %q err %v; want partial text then an error naming 529", text, err)
		}
		if n := len(f.fake.Requests()); n != 1 {
			t.Errorf("a stream that reached the client was retried (%d requests)", n)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		f := newOpenAIFixture(t, llmtest.Turn{Text: long, Fault: &llmtest.Fault{AfterChunks: 2, Truncate: true}})
		text, err := streamError(t, f)
		if err == nil || text == "" {
			t.Fatalf("text %q err %v; a truncated stream must end in an error, not a short success", text, err)
		}
	})
	t.Run("stalled", func(t *testing.T) {
		fake := llmtest.NewOpenAI(t, llmtest.Turn{Text: long, Fault: &llmtest.Fault{AfterChunks: 2, Stall: time.Minute}})
		f := newFixture(t, fake, platform.ProviderConfig{Name: "fake", Type: "openai", BaseURL: fake.URL + "/v1", Timeout: 300 * time.Millisecond, Middleware: fastRetry()})
		start := time.Now()
		text, err := streamError(t, f)
		if err == nil || text == "" || time.Since(start) > 10*time.Second {
			t.Fatalf("text %q err %v after %v; want a timeout error soon", text, err, time.Since(start))
		}
	})
}

func TestClientDisconnectCancelsUpstream(t *testing.T) {
	f := newOpenAIFixture(t, llmtest.Turn{Text: "partial answer", Fault: &llmtest.Fault{AfterChunks: 1, Stall: time.Minute}})
	ctx, cancel := context.WithCancel(context.Background())
	stream := f.client.Chat.Completions.NewStreaming(ctx, userMessage("x"))
	if !stream.Next() {
		t.Fatalf("no first chunk: %v", stream.Err())
	}
	if f.fake.Active() != 1 {
		t.Fatalf("upstream active = %d, want 1 while streaming", f.fake.Active())
	}
	cancel()
	stream.Close()
	deadline := time.Now().Add(5 * time.Second)
	for f.fake.Active() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("upstream request still running 5s after the client went away")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestOpenWebUITaskSkipsToolsAndInstructions(t *testing.T) {
	f := newOpenAIFixture(t, llmtest.Turn{Text: `{"title":"Math"}`})
	c, err := f.client.Chat.Completions.New(context.Background(), userMessage("### Task:\nGenerate a concise title for the chat history.\n### Chat History:\nUSER: 6*7?"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Choices[0].Message.Content != `{"title":"Math"}` {
		t.Errorf("content = %q", c.Choices[0].Message.Content)
	}
	body := f.fake.Requests()[0].Body
	if bytes.Contains(body, []byte(`"tools"`)) || bytes.Contains(body, []byte("You are helpful.")) {
		t.Errorf("task prompt went through the agent: %s", body)
	}
}

func TestUsageAttributedToOpenWebUIUser(t *testing.T) {
	f := newOpenAIFixture(t, llmtest.Turn{Text: "hi", Usage: llm.Usage{InputTokens: 7, OutputTokens: 2}})
	_, err := f.client.Chat.Completions.New(context.Background(), userMessage("hi"), option.WithHeader("X-OpenWebUI-User-Email", "ann@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	f.env.Platform.Stop() // flush the usage recorder
	recs, err := f.env.Store.Usage().List(context.Background(), f.env.Workspace.ID, time.Time{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].User != "ann@example.com" || recs[0].InputTokens != 7 || recs[0].Agent != "helper" || recs[0].Status != store.StatusOK {
		t.Fatalf("usage records = %+v", recs)
	}
}

func TestStreamGoldenShape(t *testing.T) {
	f := newOpenAIFixture(t, llmtest.Turn{Text: "Hi!", Chunks: []string{"H", "i!"}, Usage: llm.Usage{InputTokens: 3, OutputTokens: 2}})
	req, _ := http.NewRequest(http.MethodPost, f.env.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"helper","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+f.env.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	r := sse.NewReader(resp.Body, nil)
	var shapes []string
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if string(ev.Data) == "[DONE]" {
			shapes = append(shapes, "[DONE]")
			continue
		}
		var ch struct {
			Choices []struct {
				Delta        map[string]any `json:"delta"`
				FinishReason *string        `json:"finish_reason"`
			} `json:"choices"`
			Usage *struct {
				TotalTokens int `json:"total_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(ev.Data, &ch); err != nil {
			t.Fatal(err)
		}
		switch {
		case len(ch.Choices) == 0 && ch.Usage != nil:
			shapes = append(shapes, "usage")
		case ch.Choices[0].FinishReason != nil:
			shapes = append(shapes, "finish:"+*ch.Choices[0].FinishReason)
		case ch.Choices[0].Delta["role"] == "assistant":
			shapes = append(shapes, "role")
		default:
			shapes = append(shapes, "content:"+ch.Choices[0].Delta["content"].(string))
		}
	}
	want := "role content:H content:i! finish:stop usage [DONE]"
	if got := strings.Join(shapes, " "); got != want {
		t.Errorf("stream shape\n got %s\nwant %s", got, want)
	}
	if resp.Trailer.Get("X-AgentCraft-Overhead-Ms") == "" {
		t.Error("overhead trailer missing")
	}
}

func TestStoredKeyIsNeverInClear(t *testing.T) {
	fake := llmtest.NewOpenAI(t, llmtest.Turn{Text: "ok"})
	// A provider without a configured key: the stored credential is used.
	env := servertest.New(t, &servertest.Options{
		Providers: []platform.ProviderConfig{{Name: "fake", Type: "openai", BaseURL: fake.URL + "/v1"}},
		Agents:    []platform.AgentSpec{{Name: "helper", Model: "fake/fake-model"}},
	})
	const secretKey = "sk-live-THIS-MUST-NEVER-LEAK-0123456789"
	req, _ := http.NewRequest(http.MethodPost, env.URL+"/api/credentials", strings.NewReader(`{"provider":"fake","api_key":"`+secretKey+`"}`))
	req.Header.Set("Authorization", "Bearer "+env.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(raw), `"saved":true`) || strings.Contains(string(raw), secretKey) {
		t.Fatalf("POST /api/credentials = %d %s", resp.StatusCode, raw)
	}
	var responses []string
	for _, path := range []string{"/api/credentials", "/api/providers", "/api/agents"} {
		req, _ := http.NewRequest(http.MethodGet, env.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+env.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		responses = append(responses, string(b))
	}
	client := openai.NewClient(option.WithBaseURL(env.URL+"/v1"), option.WithAPIKey(env.Key), option.WithMaxRetries(0))
	c, err := client.Chat.Completions.New(context.Background(), userMessage("hi"))
	if err != nil {
		t.Fatal(err)
	}
	responses = append(responses, c.RawJSON())
	// The key was decrypted for the upstream call...
	if got := fake.Requests()[0].Header.Get("Authorization"); got != "Bearer "+secretKey {
		t.Errorf("upstream Authorization = %q, want the stored key", got)
	}
	// ...and is nowhere else.
	env.Platform.Stop()
	for _, r := range responses {
		if strings.Contains(r, secretKey) {
			t.Errorf("an API response holds the key: %s", r)
		}
	}
	if strings.Contains(env.Log.String(), secretKey) {
		t.Error("the log holds the key")
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(env.DBPath + suffix)
		if err != nil {
			continue
		}
		if bytes.Contains(b, []byte(secretKey)) {
			t.Errorf("database file %s holds the key in clear", env.DBPath+suffix)
		}
	}
}

func TestHealthAndReady(t *testing.T) {
	f := newOpenAIFixture(t)
	for _, path := range []string{"/health", "/ready"} {
		resp, err := http.Get(f.env.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s = %d", path, resp.StatusCode)
		}
	}
	f.env.Store.Close()
	resp, err := http.Get(f.env.URL + "/ready")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 {
		t.Errorf("/ready with a closed database = %d, want 503", resp.StatusCode)
	}
}
