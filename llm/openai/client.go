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
// The adapter speaks the wire through the official SDK
// (github.com/openai/openai-go/v3) with the SDK's own retries turned off:
// retrying belongs to llm/middleware, which reads the *llm.Error kinds,
// statuses and Retry-After values this package returns. The SDK's types
// never appear in this package's API, and the SDK's OPENAI_* environment
// variables are never read: an API key meant for OpenAI must not leak to a
// local server configured without one.
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
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

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
	models              openai.ModelService
	// raw sends requests whose answer the adapter reads itself (streams).
	raw openai.Client
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
	ropts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(cmp.Or(o.HTTPClient, http.DefaultClient)),
		// Retries belong to llm/middleware; an SDK retry underneath would
		// multiply attempts and hide 429s and 5xx from it.
		option.WithMaxRetries(0),
	}
	if o.APIKey != "" {
		ropts = append(ropts, option.WithAPIKey(o.APIKey))
	}
	for k, v := range o.Headers {
		ropts = append(ropts, option.WithHeader(k, v))
	}
	// The services are built directly rather than through
	// openai.NewClient, which would read OPENAI_API_KEY, OPENAI_BASE_URL
	// and friends from the environment.
	return &Client{
		name:                cmp.Or(o.Name, DefaultName),
		timeout:             o.Timeout,
		maxCompletionTokens: u.Hostname() == "api.openai.com",
		models:              openai.NewModelService(ropts...),
		raw:                 openai.Client{Options: ropts},
	}, nil
}

// Name returns the provider configuration's name.
func (c *Client) Name() string { return c.name }

// withTimeout applies Options.Timeout to ctx.
func (c *Client) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.timeout > 0 {
		return context.WithTimeout(ctx, c.timeout)
	}
	return context.WithCancel(ctx)
}

// Generate sends req and waits for the whole answer. As in Stream, the SDK
// sends the request and the adapter decodes the answer itself.
func (c *Client) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	const op = "create chat completion"
	params, err := c.params(req)
	if err != nil {
		return llm.Response{}, err
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	var rec response
	var res *http.Response
	err = c.raw.Post(ctx, "chat/completions", params, &res, option.WithMiddleware(rec.middleware))
	if res != nil {
		defer res.Body.Close()
	}
	if err != nil {
		return llm.Response{}, c.wrap(ctx, op, &rec, err)
	}
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
	var rec response
	page, err := c.models.List(ctx, option.WithMiddleware(rec.middleware))
	if err != nil {
		return nil, c.wrap(ctx, "list models", &rec, err)
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
