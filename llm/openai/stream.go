package openai

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/respjson"

	"github.com/agentcraftlab/agentcraft/llm"
)

const streamOp = "stream chat completion"

// Stream sends req and yields events as chunks arrive. The finish event
// comes after the last chunk, since usage follows the finish_reason.
// Breaking out of the loop closes the response body and cancels the
// request.
func (c *Client) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		params, err := c.params(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		params.StreamOptions.IncludeUsage = param.NewOpt(true)
		ctx, cancel := c.withTimeout(ctx)
		defer cancel()
		var rec response
		stream := c.chat.NewStreaming(ctx, params, option.WithMiddleware(rec.middleware))
		defer stream.Close()

		var st streamState
		for stream.Next() {
			chunk := stream.Current()
			if !st.add(&chunk, yield) {
				return
			}
		}
		if err := stream.Err(); err != nil {
			yield(llm.Event{}, c.wrap(ctx, streamOp, &rec, err))
			return
		}
		if !st.finished {
			yield(llm.Event{}, c.incomplete(streamOp))
			return
		}
		yield(st.finish(), nil)
	}
}

// streamState folds chunks into events.
type streamState struct {
	id, model string
	finished  bool   // a finish_reason arrived
	reason    string // the finish_reason
	usage     llm.Usage
	// calls counts the tool calls seen; last and lastID locate the call
	// the latest fragment belongs to, for servers that omit "index".
	calls  int
	last   int
	lastID string
}

// add yields the events of one chunk; it reports false when the consumer
// stopped.
func (s *streamState) add(chunk *openai.ChatCompletionChunk, yield func(llm.Event, error) bool) bool {
	if s.id == "" {
		s.id = chunk.ID
	}
	if s.model == "" {
		s.model = chunk.Model
	}
	if chunk.JSON.Usage.Valid() {
		s.usage = usage(chunk.Usage)
	}
	for i := range chunk.Choices {
		ch := &chunk.Choices[i]
		if ch.Index != 0 {
			continue // n > 1 is never requested
		}
		d := &ch.Delta
		if text := reasoning(d.JSON.ExtraFields); text != "" {
			if !yield(llm.Event{Type: llm.EventReasoningDelta, Text: text}, nil) {
				return false
			}
		}
		if d.Content != "" {
			if !yield(llm.Event{Type: llm.EventTextDelta, Text: d.Content}, nil) {
				return false
			}
		}
		if d.Refusal != "" {
			if !yield(llm.Event{Type: llm.EventTextDelta, Text: d.Refusal}, nil) {
				return false
			}
		}
		for j := range d.ToolCalls {
			tc := &d.ToolCalls[j]
			delta := &llm.ToolCallDelta{Index: s.index(tc), ID: tc.ID, Name: tc.Function.Name, ArgumentsDelta: tc.Function.Arguments}
			if !yield(llm.Event{Type: llm.EventToolCallDelta, ToolCall: delta}, nil) {
				return false
			}
		}
		if ch.FinishReason != "" {
			s.finished, s.reason = true, ch.FinishReason
		}
	}
	return true
}

// index places a tool-call fragment. OpenAI numbers fragments by call;
// some servers send whole calls without an index, each with its own id.
func (s *streamState) index(tc *openai.ChatCompletionChunkChoiceDeltaToolCall) int {
	i := int(tc.Index)
	if !tc.JSON.Index.Valid() {
		i = s.last
		if tc.ID != "" && (s.calls == 0 || tc.ID != s.lastID) {
			i = s.calls
		}
	}
	s.calls = max(s.calls, i+1)
	s.last = i
	if tc.ID != "" {
		s.lastID = tc.ID
	}
	return i
}

func (s *streamState) finish() llm.Event {
	u := s.usage
	return llm.Event{
		Type:         llm.EventFinish,
		FinishReason: finishReason(s.reason, s.calls > 0),
		Usage:        &u,
		ID:           s.id,
		Model:        s.model,
	}
}

// reasoning returns the reasoning text of a delta: reasoning_content
// (vLLM, DeepSeek, llama.cpp) or reasoning (Ollama, OpenRouter), which the
// SDK keeps among the fields it does not know.
func reasoning(extra map[string]respjson.Field) string {
	for _, key := range [...]string{"reasoning_content", "reasoning"} {
		// Unknown fields are never decoded, so the SDK marks them
		// invalid: only their raw JSON tells.
		f, ok := extra[key]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}
