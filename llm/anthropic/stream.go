package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"

	"github.com/agentcraftlab/agentcraft/internal/sse"
	"github.com/agentcraftlab/agentcraft/llm"
)

const streamOp = "stream message"

// Stream sends req with "stream": true and yields its events. Text,
// thinking and tool-input deltas are passed on as they arrive; the
// EventFinish comes at message_stop. Breaking out of the loop closes the
// response body. Options.Timeout bounds the whole stream.
func (c *Client) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		body, err := c.params(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		body.Stream = true
		rctx, cancel := c.withTimeout(ctx)
		defer cancel()
		res, err := c.post(rctx, &body, "text/event-stream")
		if err != nil {
			yield(llm.Event{}, c.wrap(ctx, streamOp, err))
			return
		}
		defer res.Body.Close()
		done, err := c.decode(ctx, res, yield)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		if done {
			// Read what follows message_stop (the end of the chunked
			// body): a body closed before its end takes its connection
			// with it, and every stream would pay for a new connection.
			_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 4<<10))
		}
	}
}

// decode reads the event stream of res; it returns the error to yield,
// or nil when the stream ended (done: with message_stop) or the consumer
// stopped.
func (c *Client) decode(ctx context.Context, res *http.Response, yield func(llm.Event, error) bool) (done bool, err error) {
	// Each event is decoded at once, so its data may share the reader's
	// buffer.
	r := sse.NewReader(res.Body, &sse.ReaderOptions{ReuseData: true, BufferSize: streamBuffer})
	var st streamState
	var ev wireEvent
	dec := sse.NewJSONDecoder()
	for {
		sev, err := r.Next()
		if err == io.EOF {
			return false, c.incomplete(nil)
		}
		if err != nil {
			return false, c.wrapStream(ctx, err, st.started)
		}
		data := bytes.TrimSpace(sev.Data)
		if len(data) == 0 {
			continue
		}
		if sev.Event == "error" {
			return false, c.wrapStream(ctx, streamError(res, data), st.started)
		}
		// A fresh event each time: encoding/json leaves absent fields
		// alone, so a reused value would carry the previous event's.
		ev = wireEvent{}
		if err := dec.Decode(data, &ev); err != nil {
			var typ *json.UnmarshalTypeError
			if !errors.As(err, &typ) {
				// Most often an event cut short: the stream broke off.
				return false, c.wrapStream(ctx, fmt.Errorf("decode stream event %q: %w", snippet(data), err), st.started)
			}
			// A field of an unexpected type (a newer API's extension)
			// is skipped; the rest of the event is good.
		}
		if ev.Type == typeError {
			return false, c.wrapStream(ctx, streamError(res, data), st.started)
		}
		out, stop := st.apply(&ev)
		for _, e := range out {
			if !yield(e, nil) {
				return false, nil
			}
		}
		if stop {
			return true, nil
		}
	}
}

func snippet(b []byte) []byte {
	if len(b) > 200 {
		return b[:200]
	}
	return b
}

// wireEvent is the part of a Messages stream event the adapter reads;
// one struct serves every event type, each filling its own fields.
type wireEvent struct {
	Type wireType `json:"type"`
	// Index is the content block of content_block_*.
	Index        int         `json:"index"`
	Message      wireMessage `json:"message"`       // message_start
	ContentBlock wireBlock   `json:"content_block"` // content_block_start
	Delta        wireDelta   `json:"delta"`         // content_block_delta, message_delta
	Usage        wireUsage   `json:"usage"`         // message_delta
}

type wireMessage struct {
	ID    string    `json:"id"`
	Model string    `json:"model"`
	Usage wireUsage `json:"usage"`
}

type wireBlock struct {
	Type     wireType `json:"type"`
	Text     string   `json:"text"`
	Thinking string   `json:"thinking"`
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	// Input is the tool_use input object, when the start carries it.
	Input json.RawMessage `json:"input"`
}

type wireDelta struct {
	Type        wireType `json:"type"`
	Text        string   `json:"text"`
	Thinking    string   `json:"thinking"`
	PartialJSON string   `json:"partial_json"`
	StopReason  string   `json:"stop_reason"`
}

// wireUsage holds Anthropic's counters. Pointers tell a count that was
// sent from one that was not: message_delta carries output_tokens and,
// in newer API versions, the final input counters.
type wireUsage struct {
	InputTokens              *int64 `json:"input_tokens"`
	CacheCreationInputTokens int64  `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64  `json:"cache_read_input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// wireType is a "type" value the adapter acts on. It is decoded without
// allocating: two type strings per delta were a tenth of the cost of a
// proxied delta.
type wireType uint8

// Event, content block and delta types; typeOther is any other.
const (
	typeOther wireType = iota
	typeMessageStart
	typeContentBlockStart
	typeContentBlockDelta
	typeContentBlockStop
	typeMessageDelta
	typeMessageStop
	typeError
	typeText
	typeToolUse
	typeThinking
	typeTextDelta
	typeInputJSONDelta
	typeThinkingDelta
)

func (t *wireType) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"message_start"`:
		*t = typeMessageStart
	case `"content_block_start"`:
		*t = typeContentBlockStart
	case `"content_block_delta"`:
		*t = typeContentBlockDelta
	case `"content_block_stop"`:
		*t = typeContentBlockStop
	case `"message_delta"`:
		*t = typeMessageDelta
	case `"message_stop"`:
		*t = typeMessageStop
	case `"error"`:
		*t = typeError
	case `"text"`:
		*t = typeText
	case `"tool_use"`:
		*t = typeToolUse
	case `"thinking"`:
		*t = typeThinking
	case `"text_delta"`:
		*t = typeTextDelta
	case `"input_json_delta"`:
		*t = typeInputJSONDelta
	case `"thinking_delta"`:
		*t = typeThinkingDelta
	default:
		// ping, server_tool_use, signature_delta, whatever comes next.
		*t = typeOther
	}
	return nil
}

// maxBlocks bounds the content block index the adapter tracks, so that a
// corrupt index cannot make it allocate without limit. Real answers hold
// a handful of blocks.
const maxBlocks = 1 << 12

// streamState folds Anthropic's block-structured events into llm events.
type streamState struct {
	started bool // message_start was seen
	id      string
	model   string
	reason  string
	usage   llm.Usage
	blocks  []blockState // by content block index
	calls   int          // tool_use blocks seen so far
	buf     [1]llm.Event // backing store for apply's result
}

// blockState remembers what a content block is, so that its deltas and
// its stop can be mapped.
type blockState struct {
	tool bool
	// call is the block's ordinal among the turn's tool_use blocks.
	call int
	// args reports whether any argument text was passed on.
	args bool
	// input is the input object of content_block_start, used when no
	// input_json_delta follows.
	input json.RawMessage
}

// block returns the state of block i, or nil for an index out of range.
func (s *streamState) block(i int) *blockState {
	if i < 0 || i >= maxBlocks {
		return nil
	}
	for len(s.blocks) <= i {
		s.blocks = append(s.blocks, blockState{})
	}
	return &s.blocks[i]
}

// toolBlock returns the state of block i if it is a tool_use block.
func (s *streamState) toolBlock(i int) *blockState {
	if i < 0 || i >= len(s.blocks) || !s.blocks[i].tool {
		return nil
	}
	return &s.blocks[i]
}

// apply maps one event to zero or more llm events; done reports
// message_stop. The returned slice is valid until the next call.
func (s *streamState) apply(ev *wireEvent) (out []llm.Event, done bool) {
	out = s.buf[:0]
	switch ev.Type {
	case typeMessageStart:
		s.started = true
		m := &ev.Message
		s.id, s.model = m.ID, m.Model
		u := &m.Usage
		s.usage = usage(deref(u.InputTokens), u.CacheReadInputTokens, u.CacheCreationInputTokens, deref(u.OutputTokens))
	case typeContentBlockStart:
		b := &ev.ContentBlock
		switch b.Type {
		case typeToolUse:
			bs := s.block(ev.Index)
			if bs == nil {
				return out, false
			}
			*bs = blockState{tool: true, call: s.calls, input: b.Input}
			s.calls++
			out = append(out, llm.Event{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: bs.call, ID: b.ID, Name: b.Name}})
		case typeText:
			if b.Text != "" {
				out = append(out, llm.Event{Type: llm.EventTextDelta, Text: b.Text})
			}
		case typeThinking:
			if b.Thinking != "" {
				out = append(out, llm.Event{Type: llm.EventReasoningDelta, Text: b.Thinking})
			}
		}
	case typeContentBlockDelta:
		d := &ev.Delta
		switch d.Type {
		case typeTextDelta:
			if d.Text != "" {
				out = append(out, llm.Event{Type: llm.EventTextDelta, Text: d.Text})
			}
		case typeThinkingDelta:
			if d.Thinking != "" {
				out = append(out, llm.Event{Type: llm.EventReasoningDelta, Text: d.Thinking})
			}
		case typeInputJSONDelta:
			bs := s.toolBlock(ev.Index)
			if bs == nil || d.PartialJSON == "" {
				return out, false
			}
			bs.args = true
			out = append(out, llm.Event{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: bs.call, ArgumentsDelta: d.PartialJSON}})
		}
	case typeContentBlockStop:
		bs := s.toolBlock(ev.Index)
		if bs == nil || bs.args {
			return out, false
		}
		// A call without input deltas (no arguments) still needs valid
		// JSON arguments: the start's input object, or {}.
		args := string(bs.input)
		if args == "" || args == "null" {
			args = "{}"
		}
		bs.args = true
		out = append(out, llm.Event{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: bs.call, ArgumentsDelta: args}})
	case typeMessageDelta:
		if ev.Delta.StopReason != "" {
			s.reason = ev.Delta.StopReason
		}
		// output_tokens is cumulative. Newer API versions also repeat the
		// input counters here, final values included; take them when sent.
		u := &ev.Usage
		if u.OutputTokens != nil {
			s.usage.OutputTokens = int(*u.OutputTokens)
		}
		if u.InputTokens != nil {
			in := usage(*u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, 0)
			s.usage.InputTokens, s.usage.CachedTokens = in.InputTokens, in.CachedTokens
		}
	case typeMessageStop:
		u := s.usage
		out = append(out, llm.Event{
			Type:         llm.EventFinish,
			FinishReason: finishReason(s.reason),
			Usage:        &u,
			ID:           s.id,
			Model:        s.model,
		})
		return out, true
	}
	return out, false
}

// streamBuffer is the event stream's read buffer: chunks are a few hundred
// bytes, longer ones are assembled across reads, and every open stream
// holds one (BenchmarkGatewayOverhead/idle).
const streamBuffer = 1024
