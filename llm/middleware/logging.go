package middleware

import (
	"context"
	"errors"
	"iter"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentcraftlab/agentcraft/llm"
)

// PreviewLen is the length, in characters, of the input preview logged at
// Info.
const PreviewLen = 100

// LoggingOptions configure Logging. The zero value means defaults.
type LoggingOptions struct {
	// Logger receives the records. Default: discard.
	Logger *slog.Logger
	// Provider is logged under the provider key. Default: empty, and the
	// key is left out — use it when Logger does not already carry it.
	Provider string
}

// Logging returns middleware that writes one record per request with
// constant messages and the project's snake_case keys:
//
//   - Info "llm request finished": provider, model, latency_ms,
//     first_event_ms (streams), input_tokens, output_tokens, cached_tokens,
//     finish_reason, tool_calls (a count) and input_preview, the last user
//     message cut to PreviewLen characters, key-like strings redacted.
//   - Warn "llm request failed": the same keys known at that point, plus
//     status, error and error_kind; Info when the caller cancelled.
//   - Info "llm stream abandoned": the consumer stopped reading first.
//   - Debug "llm request sent" with the whole prompt and Debug "llm
//     response received" with the whole completion.
//
// Nothing at Info carries content beyond the preview, and tool call
// arguments are logged at no level: they often hold the very data (mail
// bodies, customer records) a prompt preview leaves out. Inside the
// platform's chain the PII layer runs first, so the preview is masked.
func Logging(opts *LoggingOptions) llm.Middleware {
	var o LoggingOptions
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return func(next llm.Model) llm.Model { return &logged{next: next, o: o} }
}

type logged struct {
	next llm.Model
	o    LoggingOptions
}

func (m *logged) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	m.logPrompt(ctx, req)
	start := time.Now()
	resp, err := m.next.Generate(ctx, req)
	if err != nil {
		m.logFailure(ctx, req, time.Since(start), 0, err)
		return resp, err
	}
	m.logSuccess(ctx, req, time.Since(start), 0, resp)
	return resp, nil
}

func (m *logged) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		m.logPrompt(ctx, req)
		start := time.Now()
		var firstEvent time.Duration
		// sum is the answer as far as the records need it: text only when
		// Debug is on, tool calls by name only. (llm.Accumulator would keep
		// the arguments, and it panics on a second tool call — see the
		// report accompanying this package.)
		var (
			sum      llm.Response
			text     strings.Builder
			debug    = m.o.Logger.Enabled(ctx, slog.LevelDebug)
			finished bool
		)
		for ev, err := range m.next.Stream(ctx, req) {
			if err != nil {
				m.logFailure(ctx, req, time.Since(start), firstEvent, err)
				yield(ev, err)
				return
			}
			if firstEvent == 0 {
				firstEvent = max(time.Since(start), time.Nanosecond)
			}
			switch ev.Type {
			case llm.EventTextDelta:
				if debug {
					text.WriteString(ev.Text)
				}
			case llm.EventToolCallDelta:
				if ev.ToolCall != nil && ev.ToolCall.Name != "" {
					sum.Message.ToolCalls = append(sum.Message.ToolCalls, llm.ToolCall{Name: ev.ToolCall.Name})
				}
			case llm.EventFinish:
				if finished {
					break
				}
				finished = true
				sum.FinishReason = ev.FinishReason
				if ev.Usage != nil {
					sum.Usage = *ev.Usage
				}
				sum.Message.Role = llm.RoleAssistant
				if text.Len() > 0 {
					sum.Message.Content = []llm.Part{{Type: llm.PartText, Text: text.String()}}
				}
				m.logSuccess(ctx, req, time.Since(start), firstEvent, sum)
			}
			if !yield(ev, nil) {
				if !finished {
					m.o.Logger.LogAttrs(ctx, slog.LevelInfo, "llm stream abandoned",
						append(m.baseAttrs(req, time.Since(start)), slog.String("input_preview", inputPreview(req)))...)
				}
				return
			}
		}
		if !finished {
			err := &llm.Error{Kind: llm.KindProvider, Message: "stream ended without a finish event", Err: llm.ErrIncompleteStream}
			m.logFailure(ctx, req, time.Since(start), firstEvent, err)
		}
	}
}

func (m *logged) baseAttrs(req llm.Request, latency time.Duration) []slog.Attr {
	attrs := make([]slog.Attr, 0, 14)
	if m.o.Provider != "" {
		attrs = append(attrs, slog.String("provider", m.o.Provider))
	}
	return append(attrs,
		slog.String("model", req.Model),
		slog.Int64("latency_ms", latency.Milliseconds()))
}

func (m *logged) logSuccess(ctx context.Context, req llm.Request, latency, firstEvent time.Duration, resp llm.Response) {
	if m.o.Logger.Enabled(ctx, slog.LevelInfo) {
		attrs := m.baseAttrs(req, latency)
		if firstEvent > 0 {
			attrs = append(attrs, slog.Int64("first_event_ms", firstEvent.Milliseconds()))
		}
		attrs = append(attrs,
			slog.Int("input_tokens", resp.Usage.InputTokens),
			slog.Int("output_tokens", resp.Usage.OutputTokens),
			slog.Int("cached_tokens", resp.Usage.CachedTokens),
			slog.String("finish_reason", string(resp.FinishReason)),
			slog.Int("tool_calls", len(resp.Message.ToolCalls)),
			slog.String("input_preview", inputPreview(req)))
		if resp.Usage.CacheWriteTokens > 0 {
			attrs = append(attrs, slog.Int("cache_write_tokens", resp.Usage.CacheWriteTokens))
		}
		m.o.Logger.LogAttrs(ctx, slog.LevelInfo, "llm request finished", attrs...)
	}
	if m.o.Logger.Enabled(ctx, slog.LevelDebug) {
		m.o.Logger.LogAttrs(ctx, slog.LevelDebug, "llm response received",
			slog.String("model", req.Model),
			slog.Any("completion", debugMessage(resp.Message)))
	}
}

func (m *logged) logFailure(ctx context.Context, req llm.Request, latency, firstEvent time.Duration, err error) {
	kind := llm.KindOf(err)
	level := slog.LevelWarn
	if kind == llm.KindCanceled {
		level = slog.LevelInfo
	}
	if !m.o.Logger.Enabled(ctx, level) {
		return
	}
	attrs := m.baseAttrs(req, latency)
	if firstEvent > 0 {
		attrs = append(attrs, slog.Int64("first_event_ms", firstEvent.Milliseconds()))
	}
	var le *llm.Error
	if errors.As(err, &le) && le.Status != 0 {
		attrs = append(attrs, slog.Int("status", le.Status))
	}
	attrs = append(attrs,
		slog.String("error", err.Error()),
		slog.String("error_kind", string(kind)),
		slog.String("input_preview", inputPreview(req)))
	m.o.Logger.LogAttrs(ctx, level, "llm request failed", attrs...)
}

func (m *logged) logPrompt(ctx context.Context, req llm.Request) {
	if !m.o.Logger.Enabled(ctx, slog.LevelDebug) {
		return
	}
	msgs := make([]loggedMessage, len(req.Messages))
	for i, msg := range req.Messages {
		msgs[i] = debugMessage(msg)
	}
	tools := make([]string, len(req.Tools))
	for i, t := range req.Tools {
		tools[i] = t.Name
	}
	m.o.Logger.LogAttrs(ctx, slog.LevelDebug, "llm request sent",
		slog.String("model", req.Model),
		slog.Any("prompt", msgs),
		slog.Any("tools", tools))
}

// loggedMessage is a message as the Debug records show it: text in full,
// tool calls by name only.
type loggedMessage struct {
	Role       llm.Role `json:"role"`
	Text       string   `json:"text,omitempty"`
	Images     int      `json:"images,omitempty"`
	ToolCalls  []string `json:"tool_calls,omitempty"`
	ToolCallID string   `json:"tool_call_id,omitempty"`
}

func debugMessage(msg llm.Message) loggedMessage {
	out := loggedMessage{Role: msg.Role, Text: msg.Text(), ToolCallID: msg.ToolCallID}
	for _, p := range msg.Content {
		if p.Type == llm.PartImage {
			out.Images++
		}
	}
	for _, c := range msg.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, c.Name)
	}
	return out
}

// inputPreview returns the text of the last user message, cut to
// PreviewLen characters ending in "…" when cut.
func inputPreview(req llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			return preview(req.Messages[i].Text())
		}
	}
	return ""
}

// previewSlack is how far past PreviewLen the text is searched for
// secrets, so that one cut by the preview's end is still recognised.
const previewSlack = 64

// preview is the start of a user's text for the Info record, key-like
// strings redacted (llm.RedactSecrets): people paste API keys into chats,
// and Info logs are kept and shipped more widely than Debug ones. Only the
// head is scanned, so a long prompt costs no more than a short one.
func preview(s string) string {
	if utf8.RuneCountInString(s) > PreviewLen+previewSlack {
		s = truncate(s, PreviewLen+previewSlack)
	}
	return truncate(llm.RedactSecrets(s), PreviewLen)
}

// truncate cuts s to at most n characters, the last being "…" when cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return s[:i] + "…"
}
