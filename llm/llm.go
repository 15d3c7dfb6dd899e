// Package llm is the provider-neutral contract between AgentCraft and language models.
//
// A Model generates a whole Response or streams Events. Provider adapters
// (llm/openai, llm/anthropic) implement Model; cross-cutting concerns
// (rate limiting, retry, logging, guardrails, PII masking) wrap a Model as
// Middleware. Request.Model names the provider's model id; one adapter value
// serves every model of its provider.
//
//	m := llm.Chain(provider, middleware.Retry(nil), middleware.Logging(nil))
//	for ev, err := range m.Stream(ctx, req) { ... }
package llm

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
)

// Model is a language model reached through a provider.
type Model interface {
	// Generate sends req and waits for the whole answer.
	Generate(ctx context.Context, req Request) (Response, error)
	// Stream sends req and yields events as they arrive. A stream yields
	// zero or more delta events followed by exactly one EventFinish, or it
	// yields a non-nil error and stops. Breaking out of the loop cancels
	// the upstream request and releases its connection.
	Stream(ctx context.Context, req Request) iter.Seq2[Event, error]
}

// Middleware wraps a Model with one concern.
type Middleware func(Model) Model

// Chain wraps m so that mws[0] is the outermost layer: Chain(m, a, b)
// calls a, then b, then m.
func Chain(m Model, mws ...Middleware) Model {
	for i := len(mws) - 1; i >= 0; i-- {
		if mws[i] != nil {
			m = mws[i](m)
		}
	}
	return m
}

// Role is the author of a message.
type Role string

// Roles of a conversation.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// PartType is the kind of a content part.
type PartType string

// Content part types.
const (
	PartText  PartType = "text"
	PartImage PartType = "image"
)

// Part is one piece of a message's content.
type Part struct {
	Type PartType `json:"type"`
	Text string   `json:"text,omitempty"`
	// ImageURL is an http(s) URL or a data: URI (data:image/png;base64,...).
	ImageURL string `json:"image_url,omitempty"`
	// Detail is OpenAI's image detail hint (auto, low, high); optional.
	Detail string `json:"detail,omitempty"`
}

// Message is one turn of a conversation.
type Message struct {
	Role    Role   `json:"role"`
	Content []Part `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID links a RoleTool message to the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Name is an optional participant or tool name.
	Name string `json:"name,omitempty"`
	// IsError marks a tool result that reports a failure.
	IsError bool `json:"is_error,omitempty"`
}

// Text returns a message of one text part.
func Text(role Role, s string) Message {
	return Message{Role: role, Content: []Part{{Type: PartText, Text: s}}}
}

// ToolResult returns the RoleTool message answering call id.
func ToolResult(id, content string, isError bool) Message {
	m := Text(RoleTool, content)
	m.ToolCallID = id
	m.IsError = isError
	return m
}

// Text concatenates the message's text parts.
func (m Message) Text() string {
	if len(m.Content) == 1 {
		return m.Content[0].Text
	}
	var b strings.Builder
	for _, p := range m.Content {
		if p.Type == PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// ToolDef describes a tool the model may call.
type ToolDef struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is a JSON Schema object; nil means no arguments.
	Parameters json.RawMessage `json:"parameters,omitempty"`
}

// ToolCall is one call the model asks for.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the JSON text of the arguments, as the model wrote it.
	Arguments string `json:"arguments"`
}

// Request is one call to a model.
type Request struct {
	// Model is the provider's model id, e.g. "gpt-4o-mini" or "llama3.2".
	Model    string    `json:"model"`
	Messages []Message `json:"messages"`
	Tools    []ToolDef `json:"tools,omitempty"`
	// ToolChoice is "", "auto", "none", "required" or a tool name.
	ToolChoice string `json:"tool_choice,omitempty"`
	// ParallelToolCalls, when non-nil, allows or forbids several calls per turn.
	ParallelToolCalls *bool    `json:"parallel_tool_calls,omitempty"`
	Temperature       *float64 `json:"temperature,omitempty"`
	TopP              *float64 `json:"top_p,omitempty"`
	// MaxTokens caps the answer; 0 means the provider's default.
	MaxTokens int      `json:"max_tokens,omitempty"`
	Stop      []string `json:"stop,omitempty"`
	// User attributes the request to an end user, when known.
	User string `json:"user,omitempty"`
}

// FinishReason says why the model stopped.
type FinishReason string

// Finish reasons, in OpenAI's vocabulary; adapters map theirs onto these.
const (
	FinishStop          FinishReason = "stop"
	FinishLength        FinishReason = "length"
	FinishToolCalls     FinishReason = "tool_calls"
	FinishContentFilter FinishReason = "content_filter"
)

// Usage counts tokens of one or more requests.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	// CachedTokens is the part of InputTokens served from the provider's prompt cache.
	CachedTokens int `json:"cached_tokens"`
	// CacheWriteTokens is the part of InputTokens written to the
	// provider's prompt cache (Anthropic charges them above the input
	// price; OpenAI reports none).
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
}

// Add returns the sum of u and o.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:  u.InputTokens + o.InputTokens,
		OutputTokens: u.OutputTokens + o.OutputTokens,
		CachedTokens: u.CachedTokens + o.CachedTokens,

		CacheWriteTokens: u.CacheWriteTokens + o.CacheWriteTokens,
	}
}

// Total is input plus output tokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// Response is a whole answer.
type Response struct {
	// ID is the provider's response id, when it gives one.
	ID string `json:"id,omitempty"`
	// Model is the model that answered, as the provider names it.
	Model        string       `json:"model,omitempty"`
	Message      Message      `json:"message"`
	FinishReason FinishReason `json:"finish_reason"`
	Usage        Usage        `json:"usage"`
}

// EventType is the kind of a stream event.
type EventType string

// Stream event types.
const (
	// EventTextDelta carries a fragment of the answer's text in Text.
	EventTextDelta EventType = "text_delta"
	// EventReasoningDelta carries a fragment of the model's reasoning in Text.
	EventReasoningDelta EventType = "reasoning_delta"
	// EventToolCallDelta carries a fragment of a tool call in ToolCall.
	EventToolCallDelta EventType = "tool_call_delta"
	// EventFinish ends a stream; it carries FinishReason, Usage, ID and Model.
	EventFinish EventType = "finish"
)

// ToolCallDelta is a fragment of the Index-th tool call of a turn. ID and
// Name are set on the first fragment of a call; ArgumentsDelta appends to
// the call's arguments.
type ToolCallDelta struct {
	Index          int    `json:"index"`
	ID             string `json:"id,omitempty"`
	Name           string `json:"name,omitempty"`
	ArgumentsDelta string `json:"arguments_delta,omitempty"`
}

// Event is one item of a stream.
type Event struct {
	Type         EventType      `json:"type"`
	Text         string         `json:"text,omitempty"`
	ToolCall     *ToolCallDelta `json:"tool_call,omitempty"`
	FinishReason FinishReason   `json:"finish_reason,omitempty"`
	Usage        *Usage         `json:"usage,omitempty"`
	ID           string         `json:"id,omitempty"`
	Model        string         `json:"model,omitempty"`
}
