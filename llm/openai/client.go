// Package openai adapts the OpenAI Chat Completions API, and every server
// that speaks it (Ollama, vLLM, llama.cpp, LM Studio, gateways), to
// llm.Model.
//
// One Client serves every model behind one base URL; Request.Model picks
// the model:
//
//	c, err := openai.New(&openai.Options{APIKey: key})
//	resp, err := c.Generate(ctx, llm.Request{Model: "gpt-4o-mini", Messages: msgs})
//
//	local, err := openai.New(&openai.Options{Name: "ollama", BaseURL: "http://localhost:11434/v1"})
//	ids, err := local.ListModels(ctx)
//
// The adapter speaks the wire itself: plain structs for the request and
// for the parts of the answer it reads, net/http, and internal/sse for
// streams. It used to send requests through the official SDK
// (github.com/openai/openai-go/v3), but the SDK registers every type of
// the whole OpenAI API at start-up, and in a binary where goja, expr and
// text/template call methods by name the linker then keeps every method of
// every one of them: the two providers' SDKs were 64 MB of the release
// binary, for two endpoints each (docs/architecture.md, "Footprint").
// Nothing retries here: retrying belongs to llm/middleware, which reads
// the *llm.Error kinds, statuses and Retry-After values this package
// returns. No OPENAI_* environment variable is read: an API key meant for
// OpenAI must not leak to a local server configured without one.
//
// Mapping notes:
//   - Streams ask for usage (stream_options.include_usage), so the finish
//     event carries token counts; Usage.CachedTokens is
//     prompt_tokens_details.cached_tokens.
//   - reasoning_content (vLLM, DeepSeek, llama.cpp) and reasoning (Ollama,
//     OpenRouter) deltas become EventReasoningDelta.
//   - A refusal is reported as answer text.
//   - finish_reason "stop" on an answer with tool calls becomes
//     FinishToolCalls: some local servers say stop when they mean it.
//   - MaxTokens is sent as max_completion_tokens to api.openai.com (its
//     reasoning models refuse max_tokens) and as max_tokens elsewhere
//     (what compatible servers understand).
//   - OpenAI has no error flag on tool results; Message.IsError is not
//     sent, so the tool's text should say what went wrong.
package openai

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
)

// Defaults of Options.
const (
	DefaultName    = "openai"
	DefaultBaseURL = "https://api.openai.com/v1"
)

// Options configure a Client. The zero value talks to api.openai.com
// without an API key.
type Options struct {
	// Name is the provider configuration's name, reported in errors as
	// llm.Error.Provider. Default "openai".
	Name string
	// BaseURL is the API root, /v1 included, e.g.
	// http://localhost:11434/v1 for Ollama. Default https://api.openai.com/v1.
	BaseURL string
	// APIKey is sent as a bearer token. Empty sends none, as local
	// servers expect.
	APIKey string
	// HTTPClient sends the requests. Default http.DefaultClient.
	HTTPClient *http.Client
	// Headers are added to every request, e.g. OpenAI-Organization or a
	// gateway's routing header. Default none.
	Headers map[string]string
	// Timeout bounds one call, from sending the request to reading the
	// last byte of the answer, streams included. Default 0: only ctx
	// bounds it.
	Timeout time.Duration
}

// LogValue logs the options without the API key.
func (o Options) LogValue() slog.Value {
	key := ""
	if o.APIKey != "" {
		key = "[redacted]"
	}
	return slog.GroupValue(
		slog.String("name", o.Name),
		slog.String("base_url", o.BaseURL),
		slog.String("api_key", key),
		slog.Duration("timeout", o.Timeout),
	)
}

// String formats the options without the API key, for %v.
func (o Options) String() string { return o.LogValue().String() }

// Client is an llm.Model backed by an OpenAI-compatible Chat Completions
// API. It is safe for concurrent use.
type Client struct {
	name    string
	timeout time.Duration
	// maxCompletionTokens sends MaxTokens as max_completion_tokens.
	maxCompletionTokens bool
	http                *http.Client
	base                string // BaseURL without its trailing slash
	// header is sent with every request: authorization and
	// Options.Headers. Never written after New.
	header http.Header
}

var _ llm.Model = (*Client)(nil)

// New returns a Client configured by opts; nil opts means defaults.
func New(opts *Options) (*Client, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Timeout < 0 {
		return nil, fmt.Errorf("openai: new client: Timeout is %v; use 0 for none or a positive duration", o.Timeout)
	}
	base := cmp.Or(o.BaseURL, DefaultBaseURL)
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: new client: BaseURL %q is not an http(s) URL; use e.g. %s or http://localhost:11434/v1", base, DefaultBaseURL)
	}
	header := http.Header{}
	for k, v := range o.Headers {
		header.Set(k, v)
	}
	if o.APIKey != "" {
		header.Set("Authorization", "Bearer "+o.APIKey)
	}
	header.Set("User-Agent", userAgent)
	return &Client{
		name:                cmp.Or(o.Name, DefaultName),
		timeout:             o.Timeout,
		maxCompletionTokens: u.Hostname() == "api.openai.com",
		http:                cmp.Or(o.HTTPClient, http.DefaultClient),
		base:                strings.TrimRight(base, "/"),
		header:              header,
	}, nil
}

// userAgent names the adapter to servers and gateways.
const userAgent = "agentcraft-openai/1"

// Name returns the provider configuration's name.
func (c *Client) Name() string { return c.name }

// withTimeout applies Options.Timeout to ctx.
func (c *Client) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.timeout > 0 {
		return context.WithTimeout(ctx, c.timeout)
	}
	return context.WithCancel(ctx)
}

// Generate sends req and waits for the whole answer.
func (c *Client) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	const op = "create chat completion"
	params, err := c.params(req)
	if err != nil {
		return llm.Response{}, err
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	var rec response
	res, err := c.do(ctx, http.MethodPost, "chat/completions", params, &rec)
	if err != nil {
		return llm.Response{}, c.wrap(ctx, op, &rec, err)
	}
	defer res.Body.Close()
	var cc wireCompletion
	if err := json.NewDecoder(res.Body).Decode(&cc); err != nil {
		var typ *json.UnmarshalTypeError
		if !errors.As(err, &typ) {
			return llm.Response{}, c.wrap(ctx, op, &rec, fmt.Errorf("decode answer: %w", err))
		}
	}
	if len(cc.Choices) == 0 {
		return llm.Response{}, &llm.Error{Kind: llm.KindProvider, Provider: c.name, Message: "answer holds no choices"}
	}
	ch := cc.Choices[0]
	resp := llm.Response{
		ID:      cc.ID,
		Model:   cc.Model,
		Message: llm.Message{Role: llm.RoleAssistant},
	}
	if cc.Usage != nil {
		resp.Usage = cc.Usage.llm()
	}
	text := cmp.Or(ch.Message.Content, ch.Message.Refusal)
	if text != "" {
		resp.Message.Content = []llm.Part{{Type: llm.PartText, Text: text}}
	}
	for _, tc := range ch.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue // custom tools are never offered by this adapter
		}
		resp.Message.ToolCalls = append(resp.Message.ToolCalls, llm.ToolCall{
			ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments,
		})
	}
	resp.FinishReason = finishReason(ch.FinishReason, len(resp.Message.ToolCalls) > 0)
	return resp, nil
}

// wireCompletion is the part of a chat.completion the adapter reads.
type wireCompletion struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content   string `json:"content"`
			Refusal   string `json:"refusal"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage `json:"usage"`
}

// ListModels returns the ids of the models the server offers. It tells a
// running Ollama (or any compatible server) apart from an absent one.
func (c *Client) ListModels(ctx context.Context) ([]string, error) {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	const op = "list models"
	var rec response
	res, err := c.do(ctx, http.MethodGet, "models", nil, &rec)
	if err != nil {
		return nil, c.wrap(ctx, op, &rec, err)
	}
	defer res.Body.Close()
	var page struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&page); err != nil {
		return nil, c.wrap(ctx, op, &rec, fmt.Errorf("decode answer: %w", err))
	}
	ids := make([]string, 0, len(page.Data))
	for _, m := range page.Data {
		ids = append(ids, m.ID)
	}
	return ids, nil
}

// finishReason maps finish_reason onto llm's vocabulary. hasCalls fixes
// servers that report stop after asking for tool calls.
func finishReason(r string, hasCalls bool) llm.FinishReason {
	switch r {
	case "length":
		return llm.FinishLength
	case "tool_calls", "function_call":
		return llm.FinishToolCalls
	case "content_filter":
		return llm.FinishContentFilter
	}
	// stop, and whatever a compatible server invents (eos, end_turn...).
	if hasCalls {
		return llm.FinishToolCalls
	}
	return llm.FinishStop
}

// do sends one API call: body (nil for none) as JSON to path under the
// base URL. It records the response in rec; an error status is an error
// (wrap turns it into an *llm.Error), with the body kept in rec. On
// success the caller closes the body.
func (c *Client) do(ctx context.Context, method, path string, body any, rec *response) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	hr, err := http.NewRequestWithContext(ctx, method, c.base+"/"+path, rd)
	if err != nil {
		return nil, err
	}
	maps.Copy(hr.Header, c.header)
	hr.Header.Set("Accept", "application/json")
	if r, ok := body.(*wireRequest); ok && r.Stream {
		hr.Header.Set("Accept", "text/event-stream")
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(hr)
	if err != nil {
		return nil, err
	}
	rec.status, rec.header = res.StatusCode, res.Header
	if res.StatusCode >= 400 {
		rec.body, _ = io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		res.Body.Close()
		return nil, fmt.Errorf("status %d", res.StatusCode)
	}
	return res, nil
}
