// Package anthropic adapts Anthropic's Messages API to llm.Model.
//
// One Client serves every Claude model; Request.Model picks the model:
//
//	c, err := anthropic.New(&anthropic.Options{APIKey: key})
//	resp, err := c.Generate(ctx, llm.Request{Model: "claude-sonnet-4-5", Messages: msgs})
//
// The adapter speaks the wire itself, with net/http, encoding/json and
// internal/sse, into plain structs holding only the fields it sends and
// reads. It used the official SDK (github.com/anthropics/anthropic-sdk-go)
// until the binary had to fit in 80 MB: a program of goja and
// text/template is 10.4 MB stripped, adding the OpenAI and Anthropic
// adapters and search/embed over their SDKs made it 74.8 MB. The SDKs
// register every API type at init, and goja, expr and text/template look
// methods up by name through reflect, which turns off the linker's
// dead-code elimination of methods, so every exported method of every
// SDK type was kept. goja and text/template with this package alone were
// 24.1 MB over the SDK and are 12.1 MB without it. The SDK stays a test
// dependency: bench_test.go measures the adapter against it.
//
// What goes on the wire, per the Messages API reference:
//   - POST {BaseURL}/v1/messages with Content-Type application/json,
//     Accept application/json (Generate) or text/event-stream (Stream),
//     and a User-Agent naming AgentCraft.
//   - X-Api-Key carries Options.APIKey, the header the API reference
//     documents for API keys (the SDK's v2 sent Authorization: Bearer;
//     gateways that read only X-Api-Key work with this one). No key, no
//     header.
//   - anthropic-version: 2023-06-01. Version 2026-10-21, which the SDK's
//     v2 sends, answers 400 to any request carrying temperature, top_p or
//     top_k, even at their defaults; llm.Request has Temperature and TopP,
//     and 2023-06-01 still takes them.
//
// Nothing is retried here and nothing is read from the environment:
// retrying belongs to llm/middleware, which reads the *llm.Error kinds,
// statuses and Retry-After values this package returns, and credentials
// come from Options only.
//
// Streams are decoded with internal/sse and one json.Decoder per stream
// into small structs. The SDK's event union and its reflection-based
// decoder cost about 26 allocations per text delta, which a proxy pays
// for every token; the adapter's costs two (the event name and the text).
// BenchmarkStream and BenchmarkGenerate measure the adapter against the
// SDK on the same bytes: a 200-delta stream takes 542 allocations (19 KB)
// against the SDK's 5161 (576 KB), a whole answer with two tool calls 132
// (14 KB) against 314 (39 KB).
//
// Mapping notes:
//   - System messages, wherever they appear, become the top-level system
//     prompt, in order.
//   - Consecutive RoleTool messages become one user message of
//     tool_result blocks, as Anthropic expects after a turn of parallel
//     tool calls.
//   - A tool's Parameters are sent as given, property order included;
//     only a missing "type" (object) or "properties" ({}) is added.
//   - Usage.InputTokens counts every prompt token, including prompt-cache
//     reads and writes, Usage.CachedTokens the cache reads and
//     Usage.CacheWriteTokens the cache writes (priced apart). Anthropic's
//     own input_tokens excludes both; adding them back makes totals
//     comparable with OpenAI, whose prompt_tokens include cached tokens.
package anthropic

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
)

// Defaults of Options.
const (
	DefaultName      = "anthropic"
	DefaultBaseURL   = "https://api.anthropic.com"
	DefaultMaxTokens = 4096
)

// Wire constants; see the package doc for why these values.
const (
	apiVersion = "2023-06-01"
	userAgent  = "AgentCraft/llm-anthropic (+https://github.com/agentcraftlab/agentcraft)"
)

// Options configure a Client. The zero value talks to api.anthropic.com
// without an API key.
type Options struct {
	// Name is the provider configuration's name, reported in errors as
	// llm.Error.Provider. Default "anthropic".
	Name string
	// BaseURL is the API root, without /v1. Default https://api.anthropic.com.
	BaseURL string
	// APIKey is the credential, sent as X-Api-Key. Empty sends none, for
	// gateways that authenticate otherwise. The environment
	// (ANTHROPIC_API_KEY and friends) is never read: configuration is
	// explicit.
	APIKey string
	// HTTPClient sends the requests. Default http.DefaultClient.
	HTTPClient *http.Client
	// Timeout bounds one request, from sending it to reading the last
	// byte of the answer, streams included. Default 0: only ctx bounds it.
	Timeout time.Duration
	// DefaultMaxTokens caps answers of requests whose MaxTokens is 0;
	// Anthropic requires a cap. Default 4096.
	DefaultMaxTokens int
}

// Client is an llm.Model backed by the Anthropic Messages API. It is safe
// for concurrent use.
type Client struct {
	name      string
	timeout   time.Duration
	maxTokens int
	url       string // of the messages endpoint
	apiKey    string
	http      *http.Client
}

var _ llm.Model = (*Client)(nil)

// New returns a Client configured by opts; nil opts means defaults.
func New(opts *Options) (*Client, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Timeout < 0 {
		return nil, fmt.Errorf("anthropic: new client: Timeout is %v; use 0 for none or a positive duration", o.Timeout)
	}
	if o.DefaultMaxTokens < 0 {
		return nil, fmt.Errorf("anthropic: new client: DefaultMaxTokens is %d; use 0 for %d or a positive count", o.DefaultMaxTokens, DefaultMaxTokens)
	}
	return &Client{
		name:      cmp.Or(o.Name, DefaultName),
		timeout:   o.Timeout,
		maxTokens: cmp.Or(o.DefaultMaxTokens, DefaultMaxTokens),
		url:       strings.TrimRight(cmp.Or(o.BaseURL, DefaultBaseURL), "/") + "/v1/messages",
		apiKey:    o.APIKey,
		http:      cmp.Or(o.HTTPClient, http.DefaultClient),
	}, nil
}

// Name returns the provider configuration's name.
func (c *Client) Name() string { return c.name }

// withTimeout applies Options.Timeout to ctx. Errors are still judged
// against the caller's ctx: a live caller with an expired request is a
// timeout, not a cancellation.
func (c *Client) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.timeout > 0 {
		return context.WithTimeout(ctx, c.timeout)
	}
	return ctx, func() {}
}

// post sends body to the messages endpoint. A status of 400 or more is
// returned as a *responseError, its body read and closed; otherwise the
// caller owns the response body.
func (c *Client) post(ctx context.Context, body *wireRequest, accept string) (*http.Response, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("Accept", accept)
	h.Set("Anthropic-Version", apiVersion)
	h.Set("User-Agent", userAgent)
	if c.apiKey != "" {
		h.Set("X-Api-Key", c.apiKey)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode >= 400 {
		defer res.Body.Close()
		return nil, readError(res)
	}
	return res, nil
}

// Generate sends req and waits for the whole answer.
func (c *Client) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	const op = "create message"
	body, err := c.params(req)
	if err != nil {
		return llm.Response{}, err
	}
	rctx, cancel := c.withTimeout(ctx)
	defer cancel()
	res, err := c.post(rctx, &body, "application/json")
	if err != nil {
		return llm.Response{}, c.wrap(ctx, op, err)
	}
	defer res.Body.Close()
	var msg wireAnswer
	if err := json.NewDecoder(res.Body).Decode(&msg); err != nil {
		var typ *json.UnmarshalTypeError
		if !errors.As(err, &typ) {
			// Most often a body cut short, or not JSON at all (a proxy's page).
			return llm.Response{}, c.wrap(ctx, op, fmt.Errorf("decode answer: %w", err))
		}
		// A field of an unexpected type (a newer API's extension) is
		// skipped; the rest of the answer is good.
	}
	// Read what follows the object, so the connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 4<<10))
	return c.response(&msg), nil
}

// wireAnswer is the part of a Messages API answer the adapter reads.
type wireAnswer struct {
	ID         string      `json:"id"`
	Model      string      `json:"model"`
	Content    []wireBlock `json:"content"`
	StopReason string      `json:"stop_reason"`
	Usage      wireUsage   `json:"usage"`
}

// response maps a whole Anthropic message onto an llm.Response. Text
// blocks join into one text part, as a stream's Accumulator would build;
// other blocks (thinking, server tools, newer kinds) are left out.
func (c *Client) response(msg *wireAnswer) llm.Response {
	u := &msg.Usage
	resp := llm.Response{
		ID:           msg.ID,
		Model:        msg.Model,
		Message:      llm.Message{Role: llm.RoleAssistant},
		FinishReason: finishReason(msg.StopReason),
		Usage:        usage(deref(u.InputTokens), u.CacheReadInputTokens, u.CacheCreationInputTokens, deref(u.OutputTokens)),
	}
	var text strings.Builder
	for _, b := range msg.Content {
		switch b.Type {
		case typeText:
			text.WriteString(b.Text)
		case typeToolUse:
			args := string(b.Input)
			if args == "" || args == "null" {
				args = "{}"
			}
			resp.Message.ToolCalls = append(resp.Message.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	if text.Len() > 0 {
		resp.Message.Content = []llm.Part{{Type: llm.PartText, Text: text.String()}}
	}
	return resp
}

// usage builds llm.Usage from Anthropic's counters; see the package doc
// for why cache reads and writes join InputTokens.
func usage(input, cacheRead, cacheWrite, output int64) llm.Usage {
	return llm.Usage{
		InputTokens:  int(input + cacheRead + cacheWrite),
		OutputTokens: int(output),
		CachedTokens: int(cacheRead),

		CacheWriteTokens: int(cacheWrite),
	}
}

// finishReason maps Anthropic's stop_reason onto llm's vocabulary.
func finishReason(r string) llm.FinishReason {
	switch r {
	case "tool_use":
		return llm.FinishToolCalls
	case "max_tokens", "model_context_window_exceeded":
		return llm.FinishLength
	case "refusal":
		return llm.FinishContentFilter
	}
	// end_turn, stop_sequence, pause_turn (a server tool paused the turn;
	// the answer so far is complete) and anything newer.
	return llm.FinishStop
}

// callerError reports bad input: KindCaller, never retried.
func (c *Client) callerError(format string, args ...any) error {
	return &llm.Error{Kind: llm.KindCaller, Provider: c.name, Message: fmt.Sprintf(format, args...)}
}
