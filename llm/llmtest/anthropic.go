package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/sse"
	"github.com/agentcraftlab/agentcraft/llm"
)

// NewAnthropic starts a fake Anthropic Messages API serving turns at
// POST /v1/messages; point an Anthropic client's base URL at srv.URL.
//
// A request with "stream": true gets Anthropic's SSE sequence
// (message_start, ping, content_block_start/delta/stop per block,
// message_delta, message_stop); any other request gets one message
// object. Usage is written the way Anthropic counts it: input_tokens
// excludes cache reads and writes, so the wire carries
// input_tokens = Usage.InputTokens - Usage.CachedTokens -
// Usage.CacheWriteTokens, cache_read_input_tokens = Usage.CachedTokens and
// cache_creation_input_tokens = Usage.CacheWriteTokens, and an adapter
// that adds both back recovers Turn.Usage.
//
// Fault.AfterChunks counts content_block_delta events. When the answer has
// fewer deltas than that, the fault strikes after the last one, before
// message_delta, so a scripted fault is never silently skipped; Truncate
// or Stall with AfterChunks 0 strike right after message_start. On a
// non-streaming request such a fault still bites: Status answers with
// that error, Stall delays the answer, Truncate cuts the body short.
//
// Like the real API, the fake answers 400 invalid_request_error to a body
// without model, max_tokens or messages (the turn is consumed), and 404
// to any other path.
func NewAnthropic(t testing.TB, turns ...Turn) *Server {
	t.Helper()
	var n atomic.Int64
	return newServer(t, func(w http.ResponseWriter, r *http.Request, turn Turn, body map[string]any) {
		answerAnthropic(w, r, turn, body, fmt.Sprintf("msg_llmtest_%d", n.Add(1)))
	}, turns)
}

// anthropicPieceLen is the size of the text pieces streamed when a turn
// gives no Chunks.
const anthropicPieceLen = 4

// anthropicArgFragments is how many input_json_delta fragments a tool
// call's arguments are cut into, so adapters must concatenate.
const anthropicArgFragments = 3

func answerAnthropic(w http.ResponseWriter, r *http.Request, turn Turn, body map[string]any, id string) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		writeAnthropicError(w, http.StatusNotFound, &Fault{Message: "llmtest: no route " + r.Method + " " + r.URL.Path})
		return
	}
	f := turn.Fault
	if f != nil && f.Status != 0 && f.AfterChunks == 0 {
		writeAnthropicError(w, f.Status, f)
		return
	}
	// Refuse what the real API refuses, so an adapter that forgets a
	// required field fails here rather than in production.
	model, _ := body["model"].(string)
	for _, field := range []string{"model", "max_tokens", "messages"} {
		if _, ok := body[field]; !ok {
			writeAnthropicError(w, http.StatusBadRequest, &Fault{Message: field + ": Field required"})
			return
		}
	}
	msg := anthropicMessageFor(turn, id, model)
	if stream, _ := body["stream"].(bool); stream {
		streamAnthropic(w, r, msg, f)
		return
	}
	writeAnthropicMessage(w, r, msg, f)
}

// anthropicMessage is the Messages API response object; field order
// follows the real API so golden transcripts read naturally.
type anthropicMessage struct {
	ID           string           `json:"id"`
	Type         string           `json:"type"`
	Role         string           `json:"role"`
	Model        string           `json:"model"`
	Content      []anthropicBlock `json:"content"`
	StopReason   *string          `json:"stop_reason"`
	StopSequence *string          `json:"stop_sequence"`
	Usage        anthropicUsage   `json:"usage"`
}

type anthropicBlock struct {
	Type  string          `json:"type"`
	Text  *string         `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`

	// args is the tool call's argument text, streamed as partial_json.
	args string
	// pieces is the text streamed as text_delta.
	pieces []string
}

type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

func anthropicMessageFor(turn Turn, id, model string) anthropicMessage {
	msg := anthropicMessage{ID: id, Type: "message", Role: "assistant", Model: model, Content: []anthropicBlock{}}
	if pieces := turn.Pieces(anthropicPieceLen); len(pieces) > 0 {
		text := strings.Join(pieces, "")
		msg.Content = append(msg.Content, anthropicBlock{Type: "text", Text: &text, pieces: pieces})
	}
	for i, c := range turn.ToolCalls {
		callID := c.ID
		if callID == "" {
			callID = fmt.Sprintf("toolu_llmtest_%d", i)
		}
		input := json.RawMessage(c.Arguments)
		if c.Arguments == "" {
			input = json.RawMessage("{}")
		} else if !json.Valid(input) {
			// Not an object: send it as a JSON string so the client sees
			// what the script said instead of a broken response.
			input, _ = json.Marshal(c.Arguments)
		}
		msg.Content = append(msg.Content, anthropicBlock{Type: "tool_use", ID: callID, Name: c.Name, Input: input, args: c.Arguments})
	}
	reason := anthropicStopReason(turn)
	msg.StopReason = &reason
	msg.Usage = anthropicUsage{
		InputTokens:              turn.Usage.InputTokens - turn.Usage.CachedTokens - turn.Usage.CacheWriteTokens,
		CacheReadInputTokens:     turn.Usage.CachedTokens,
		CacheCreationInputTokens: turn.Usage.CacheWriteTokens,
		OutputTokens:             turn.Usage.OutputTokens,
	}
	return msg
}

func anthropicStopReason(turn Turn) string {
	reason := turn.FinishReason
	if reason == "" {
		reason = llm.FinishStop
		if len(turn.ToolCalls) > 0 {
			reason = llm.FinishToolCalls
		}
	}
	switch reason {
	case llm.FinishToolCalls:
		return "tool_use"
	case llm.FinishLength:
		return "max_tokens"
	case llm.FinishContentFilter:
		return "refusal"
	case llm.FinishStop:
		return "end_turn"
	}
	return string(reason)
}

// writeAnthropicMessage answers a non-streaming request. A fault meant
// for a stream (AfterChunks > 0) still bites: Status answers with that
// error, Stall delays the answer, Truncate cuts the body in half.
func writeAnthropicMessage(w http.ResponseWriter, r *http.Request, msg anthropicMessage, f *Fault) {
	if f != nil && f.Status != 0 {
		writeAnthropicError(w, f.Status, f)
		return
	}
	if f != nil && f.Stall > 0 && !stall(r, f.Stall) {
		return
	}
	data, err := json.Marshal(msg)
	if err != nil {
		writeAnthropicError(w, http.StatusInternalServerError, &Fault{Message: "llmtest: encode message: " + err.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_llmtest")
	if f != nil && f.Truncate {
		w.Write(data[:len(data)/2])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	w.Write(data)
}

// anthropicEvent is one SSE data payload; the fields each event type
// uses come out in the real API's order.
type anthropicEvent struct {
	Type         string            `json:"type"`
	Message      *anthropicMessage `json:"message,omitempty"`
	Index        *int              `json:"index,omitempty"`
	ContentBlock *anthropicBlock   `json:"content_block,omitempty"`
	Delta        any               `json:"delta,omitempty"`
	Usage        *outputUsage      `json:"usage,omitempty"`
}

type stopDelta struct {
	StopReason   *string `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
}

type outputUsage struct {
	OutputTokens int `json:"output_tokens"`
}

// streamAnthropic writes msg as Anthropic's SSE event sequence and
// injects f after f.AfterChunks content_block_delta events.
func streamAnthropic(w http.ResponseWriter, r *http.Request, msg anthropicMessage, f *Fault) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Request-Id", "req_llmtest")
	sw := sse.NewWriter(w)

	// send writes one event; a failed write means the client went away,
	// and the handler unwinds through http.ErrAbortHandler.
	send := func(event string, v any) {
		data, err := json.Marshal(v)
		if err != nil {
			panic(fmt.Sprintf("llmtest: encode %s event: %v", event, err))
		}
		if err := sw.WriteEvent(sse.Event{Event: event, Data: data}); err != nil {
			panic(http.ErrAbortHandler)
		}
	}
	// fault injects f once AfterChunks deltas were sent (or, with force,
	// at once); it reports whether the stream must end here.
	deltas := 0
	fault := func(force bool) (stop bool) {
		if f == nil || (f.Status == 0 && !f.Truncate && f.Stall <= 0) || (deltas < f.AfterChunks && !force) {
			return false
		}
		switch {
		case f.Status != 0:
			send("error", anthropicErrorBody(f.Status, f))
			return true
		case f.Truncate:
			panic(http.ErrAbortHandler) // drop the connection: no message_stop
		case f.Stall > 0:
			d := f.Stall
			f = nil // stall once, then finish the answer
			return !stall(r, d)
		}
		return false
	}

	start := msg
	start.Content, start.StopReason = []anthropicBlock{}, nil
	start.Usage.OutputTokens = min(1, msg.Usage.OutputTokens)
	send("message_start", anthropicEvent{Type: "message_start", Message: &start})
	if fault(false) { // Truncate or Stall with AfterChunks 0
		return
	}

	for i, b := range msg.Content {
		block := b
		pieces, kind, field := b.pieces, "text_delta", "text"
		if b.Type == "tool_use" {
			block.Input = json.RawMessage("{}")
			pieces, kind, field = splitN(b.args, anthropicArgFragments), "input_json_delta", "partial_json"
		} else {
			empty := ""
			block.Text = &empty
		}
		send("content_block_start", anthropicEvent{Type: "content_block_start", Index: &i, ContentBlock: &block})
		if i == 0 {
			send("ping", anthropicEvent{Type: "ping"})
		}
		for _, p := range pieces {
			send("content_block_delta", anthropicEvent{Type: "content_block_delta", Index: &i, Delta: anthropicDelta{kind, field, p}})
			deltas++
			if fault(false) {
				return
			}
		}
		send("content_block_stop", anthropicEvent{Type: "content_block_stop", Index: &i})
	}
	if fault(true) {
		return
	}
	send("message_delta", anthropicEvent{Type: "message_delta", Delta: stopDelta{StopReason: msg.StopReason}, Usage: &outputUsage{msg.Usage.OutputTokens}})
	send("message_stop", anthropicEvent{Type: "message_stop"})
}

// anthropicDelta encodes {"type":kind, field:value}: the value's field
// name depends on the delta type (text or partial_json).
type anthropicDelta struct{ kind, field, value string }

func (d anthropicDelta) MarshalJSON() ([]byte, error) {
	kind, _ := json.Marshal(d.kind)
	value, err := json.Marshal(d.value)
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, `{"type":%s,%q:%s}`, kind, d.field, value), nil
}

// splitN cuts s into about n pieces at rune boundaries; "" gives none,
// like the real API, which may send no input_json_delta for a call
// without arguments.
func splitN(s string, n int) []string {
	if s == "" {
		return nil
	}
	return Turn{Text: s}.Pieces(max(1, (len(s)+n-1)/n))
}

// stall waits d (nothing when d ≤ 0) or until the client goes away; it reports whether the
// answer should go on. It never holds the server's Close: closing the
// client connections cancels r's context.
func stall(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return r.Context().Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// anthropicErrorType names Anthropic's error type for an HTTP status.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusPaymentRequired:
		return "billing_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusGatewayTimeout:
		return "timeout_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

type anthropicErrorJSON struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	RequestID string `json:"request_id,omitempty"`
}

func anthropicErrorBody(status int, f *Fault) anthropicErrorJSON {
	var e anthropicErrorJSON
	e.Type = "error"
	e.Error.Type = anthropicErrorType(status)
	e.Error.Message = f.Message
	if e.Error.Message == "" {
		e.Error.Message = http.StatusText(status)
		if status == 529 {
			e.Error.Message = "Overloaded"
		}
	}
	e.RequestID = "req_llmtest"
	return e
}

func writeAnthropicError(w http.ResponseWriter, status int, f *Fault) {
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	if f.RetryAfterMs != "" {
		w.Header().Set("Retry-After-Ms", f.RetryAfterMs)
	}
	data, _ := json.Marshal(anthropicErrorBody(status, f))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Header().Set("Request-Id", "req_llmtest")
	w.WriteHeader(status)
	w.Write(data)
}
