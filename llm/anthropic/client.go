// Package anthropic adapts Anthropic's Messages API to llm.Model.
//
// One Client serves every Claude model; Request.Model picks the model:
//
//	c, err := anthropic.New(&anthropic.Options{APIKey: key})
//	resp, err := c.Generate(ctx, llm.Request{Model: "claude-sonnet-4-5", Messages: msgs})
//
// The adapter speaks the wire through the official SDK
// (github.com/anthropics/anthropic-sdk-go/v2) with the SDK's own retries
// turned off: retrying belongs to llm/middleware, which reads the
// *llm.Error kinds, statuses and Retry-After values this package returns.
// The SDK's types never appear in this package's API.
//
// Streams are decoded by the adapter: the SDK sends the request (base URL,
// auth, headers, parameters) and reports error statuses, and the adapter
// reads the server-sent events itself (internal/sse and encoding/json into
// small structs, one json.Decoder per stream). The SDK's event union and
// its reflection-based decoder cost about 26 allocations per text delta,
// which a proxy pays for every token; the adapter's decoder costs two (the
// event name and the text). BenchmarkStream measures both: a 200-delta
// answer took 5170 allocations and 1.6 ms through the SDK's decoder, 635
// and 0.6 ms through the adapter's. Generate still lets the SDK decode its
// one answer: once per request, the cost does not matter.
//
// Mapping notes:
//   - System messages, wherever they appear, become the top-level system
//     prompt, in order.
//   - Consecutive RoleTool messages become one user message of
//     tool_result blocks, as Anthropic expects after a turn of parallel
//     tool calls.
//   - Usage.InputTokens counts every prompt token, including prompt-cache
//     reads and writes, and Usage.CachedTokens the cache reads. Anthropic's
//     own input_tokens excludes both; adding them back makes totals
//     comparable with OpenAI, whose prompt_tokens include cached tokens.
package anthropic

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/agentcraftlab/agentcraft/llm"
)

// Defaults of Options.
const (
	DefaultName      = "anthropic"
	DefaultBaseURL   = "https://api.anthropic.com"
	DefaultMaxTokens = 4096
)

// Options configure a Client. The zero value talks to api.anthropic.com
// without an API key.
type Options struct {
	// Name is the provider configuration's name, reported in errors as
	// llm.Error.Provider. Default "anthropic".
	Name string
	// BaseURL is the API root, without /v1. Default https://api.anthropic.com.
	BaseURL string
	// APIKey is the credential, sent as the SDK sends API keys (v2.15:
	// Authorization: Bearer). Empty sends none, for gateways that
	// authenticate otherwise. The environment (ANTHROPIC_API_KEY and
	// friends) is never read: configuration is explicit.
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
	messages  anthropic.MessageService
	// raw sends requests whose answer the adapter reads itself (streams).
	raw anthropic.Client
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
	c := &Client{
		name:      cmp.Or(o.Name, DefaultName),
		timeout:   o.Timeout,
		maxTokens: cmp.Or(o.DefaultMaxTokens, DefaultMaxTokens),
	}
	ropts := []option.RequestOption{
		// Credentials come from Options only, never from the process
		// environment or a profile on disk.
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(cmp.Or(o.BaseURL, DefaultBaseURL)),
		option.WithHTTPClient(cmp.Or(o.HTTPClient, http.DefaultClient)),
		// Retries belong to llm/middleware; an SDK retry underneath would
		// multiply attempts and hide 429s and 529s from it.
		option.WithMaxRetries(0),
	}
	if o.APIKey != "" {
		ropts = append(ropts, option.WithAPIKey(o.APIKey))
	}
	c.raw = anthropic.NewClient(ropts...)
	c.messages = c.raw.Messages
	return c, nil
}

// Name returns the provider configuration's name.
func (c *Client) Name() string { return c.name }

// unboundedTimeout stands for "no per-request bound" where the SDK needs
// a value: it refuses non-streaming requests whose max_tokens suggests
// more than ten minutes of work unless a request timeout is set, and our
// contract leaves that bound to ctx.
const unboundedTimeout = 100 * 365 * 24 * time.Hour

// Generate sends req and waits for the whole answer.
func (c *Client) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	params, err := c.params(req)
	if err != nil {
		return llm.Response{}, err
	}
	opts := []option.RequestOption{option.WithRequestTimeout(c.timeout)}
	if c.timeout == 0 {
		// The SDK would announce the stand-in bound to the server.
		opts = []option.RequestOption{option.WithRequestTimeout(unboundedTimeout), option.WithHeaderDel("X-Stainless-Timeout")}
	}
	msg, err := c.messages.New(ctx, params, opts...)
	if err != nil {
		return llm.Response{}, c.wrap(ctx, "create message", err)
	}
	return c.response(msg), nil
}

// response maps a whole Anthropic message onto an llm.Response. Text
// blocks join into one text part, as a stream's Accumulator would build.
func (c *Client) response(msg *anthropic.Message) llm.Response {
	resp := llm.Response{
		ID:           msg.ID,
		Model:        string(msg.Model),
		Message:      llm.Message{Role: llm.RoleAssistant},
		FinishReason: finishReason(msg.StopReason),
		Usage: usage(msg.Usage.InputTokens, msg.Usage.CacheReadInputTokens,
			msg.Usage.CacheCreationInputTokens, msg.Usage.OutputTokens),
	}
	var text string
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text += b.Text
		case "tool_use":
			args := string(b.Input)
			if args == "" || args == "null" {
				args = "{}"
			}
			resp.Message.ToolCalls = append(resp.Message.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	if text != "" {
		resp.Message.Content = []llm.Part{{Type: llm.PartText, Text: text}}
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
	}
}

// finishReason maps Anthropic's stop_reason onto llm's vocabulary.
func finishReason(r anthropic.StopReason) llm.FinishReason {
	switch r {
	case anthropic.StopReasonToolUse:
		return llm.FinishToolCalls
	case anthropic.StopReasonMaxTokens, anthropic.StopReasonModelContextWindowExceeded:
		return llm.FinishLength
	case anthropic.StopReasonRefusal:
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
