package anthropic

import (
	"context"
	"iter"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/agentcraftlab/agentcraft/llm"
)

// Stream sends req with "stream": true and yields its events. Text,
// thinking and tool-input deltas are passed on as they arrive; the
// EventFinish comes at message_stop. Breaking out of the loop closes the
// response body.
func (c *Client) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		params, err := c.params(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		var opts []option.RequestOption
		if c.timeout > 0 {
			opts = append(opts, option.WithRequestTimeout(c.timeout))
		}
		stream := c.messages.NewStreaming(ctx, params, opts...)
		defer stream.Close()

		var st streamState
		for stream.Next() {
			ev := stream.Current()
			out, done := st.apply(&ev)
			for _, e := range out {
				if !yield(e, nil) {
					return
				}
			}
			if done {
				return
			}
		}
		if err := stream.Err(); err != nil {
			yield(llm.Event{}, c.wrapStream(ctx, err, st.started))
			return
		}
		yield(llm.Event{}, c.incomplete(nil))
	}
}

// streamState folds Anthropic's block-structured events into llm events.
type streamState struct {
	started bool // message_start was seen
	id      string
	model   string
	reason  anthropic.StopReason
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
	input string
}

func (s *streamState) block(i int64) *blockState {
	for int64(len(s.blocks)) <= i {
		s.blocks = append(s.blocks, blockState{})
	}
	return &s.blocks[i]
}

// apply maps one SDK event to zero or more llm events; done reports
// message_stop. The returned slice is valid until the next call.
func (s *streamState) apply(ev *anthropic.MessageStreamEventUnion) (out []llm.Event, done bool) {
	out = s.buf[:0]
	switch ev.Type {
	case "message_start":
		s.started = true
		s.id, s.model = ev.Message.ID, string(ev.Message.Model)
		u := ev.Message.Usage
		s.usage = usage(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens)
	case "content_block_start":
		if ev.Index < 0 {
			return out, false
		}
		b := ev.ContentBlock
		switch b.Type {
		case "tool_use":
			bs := s.block(ev.Index)
			*bs = blockState{tool: true, call: s.calls, input: b.JSON.Input.Raw()}
			s.calls++
			out = append(out, llm.Event{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: bs.call, ID: b.ID, Name: b.Name}})
		case "text":
			if b.Text != "" {
				out = append(out, llm.Event{Type: llm.EventTextDelta, Text: b.Text})
			}
		case "thinking":
			if b.Thinking != "" {
				out = append(out, llm.Event{Type: llm.EventReasoningDelta, Text: b.Thinking})
			}
		}
	case "content_block_delta":
		d := &ev.Delta
		switch d.Type {
		case "text_delta":
			if d.Text != "" {
				out = append(out, llm.Event{Type: llm.EventTextDelta, Text: d.Text})
			}
		case "thinking_delta":
			if d.Thinking != "" {
				out = append(out, llm.Event{Type: llm.EventReasoningDelta, Text: d.Thinking})
			}
		case "input_json_delta":
			if ev.Index < 0 || int(ev.Index) >= len(s.blocks) || !s.blocks[ev.Index].tool || d.PartialJSON == "" {
				return out, false
			}
			bs := &s.blocks[ev.Index]
			bs.args = true
			out = append(out, llm.Event{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: bs.call, ArgumentsDelta: d.PartialJSON}})
		}
	case "content_block_stop":
		if ev.Index < 0 || int(ev.Index) >= len(s.blocks) || !s.blocks[ev.Index].tool || s.blocks[ev.Index].args {
			return out, false
		}
		// A call without input deltas (no arguments) still needs valid
		// JSON arguments: the start's input object, or {}.
		bs := &s.blocks[ev.Index]
		args := bs.input
		if args == "" || args == "null" {
			args = "{}"
		}
		bs.args = true
		out = append(out, llm.Event{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: bs.call, ArgumentsDelta: args}})
	case "message_delta":
		if ev.Delta.StopReason != "" {
			s.reason = ev.Delta.StopReason
		}
		// output_tokens is cumulative. Newer API versions also repeat the
		// input counters here, final values included; take them when sent.
		u := &ev.Usage
		if u.JSON.OutputTokens.Valid() {
			s.usage.OutputTokens = int(u.OutputTokens)
		}
		if u.JSON.InputTokens.Valid() {
			in := usage(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, 0)
			s.usage.InputTokens, s.usage.CachedTokens = in.InputTokens, in.CachedTokens
		}
	case "message_stop":
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
