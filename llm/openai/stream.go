package openai

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

const streamOp = "stream chat completion"

// Stream sends req and yields events as chunks arrive. The finish event
// comes after the last chunk, since usage follows the finish_reason.
// Breaking out of the loop closes the response body and cancels the
// request.
//
// The chunks are decoded into plain structs: the SDK's reflection-based
// decoder cost about 65 allocations and most of the CPU time of a proxied
// chunk; a plain struct decode is several times cheaper (BenchmarkStream
// measures both).
func (c *Client) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		ctx, cancel := c.withTimeout(ctx)
		defer cancel()
		var rec response
		res, err := c.send(ctx, req, &rec)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		defer res.Body.Close()
		done, err := c.decode(ctx, res.Body, &rec, yield)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		if done {
			// Read what follows [DONE] (the end of the chunked body): a
			// body closed before its end takes its connection with it,
			// and every stream would pay for a new connection.
			_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 4<<10))
		}
	}
}

// send sends the streaming request and returns the response whose body
// is the event stream. It is a function of its own so that the request
// parameters (a 4 KB frame) are off the stack while the stream is read,
// which is where an open stream's goroutine spends its life.
func (c *Client) send(ctx context.Context, req llm.Request, rec *response) (*http.Response, error) {
	params, err := c.params(req)
	if err != nil {
		return nil, err
	}
	params.Stream = true
	params.StreamOptions = &wireStreamOptions{IncludeUsage: true}
	res, err := c.do(ctx, http.MethodPost, "chat/completions", params, rec)
	if err != nil {
		return nil, c.wrap(ctx, streamOp, rec, err)
	}
	return res, nil
}

// decode reads the event stream; it returns the error to yield, or nil
// when the stream ended (done: with [DONE]) or the consumer stopped.
func (c *Client) decode(ctx context.Context, body io.Reader, rec *response, yield func(llm.Event, error) bool) (done bool, err error) {
	// Each event is decoded at once, so its data may share the reader's
	// buffer.
	r := sse.NewReader(body, &sse.ReaderOptions{ReuseData: true, BufferSize: streamBuffer})
	var st streamState
	var chunk wireChunk
	dec := sse.NewJSONDecoder()
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return false, c.wrap(ctx, streamOp, rec, err)
		}
		data := bytes.TrimSpace(ev.Data)
		if len(data) == 0 {
			continue
		}
		if bytes.Equal(data, []byte("[DONE]")) {
			done = true
			break
		}
		// A fresh chunk each time, but for the choices' backing array:
		// encoding/json decodes slice elements in place, so the elements
		// are zeroed first, or the previous chunk's fields would leak into
		// this one. Reusing it saves an allocation per chunk, which keeps
		// the forwarding goroutine out of GC assists while a collection
		// runs (the chunk latency tail of BenchmarkGatewayOverhead). id
		// and model repeat in every chunk; only the first one's are
		// decoded (two strings saved per chunk).
		choices := chunk.Choices[:cap(chunk.Choices)]
		clear(choices)
		chunk = wireChunk{wireChunkBody: wireChunkBody{Choices: choices[:0]}}
		var into any = &chunk
		if st.id != "" || st.model != "" {
			into = &chunk.wireChunkBody
		}
		if err := dec.Decode(data, into); err != nil {
			var typ *json.UnmarshalTypeError
			if !errors.As(err, &typ) {
				// Most often a chunk cut short: the stream broke off.
				return false, &llm.Error{Kind: llm.KindProvider, Provider: c.name, Message: "stream broke off",
					Err: fmt.Errorf("openai: %s: %w: decode chunk %q: %w", streamOp, llm.ErrIncompleteStream, snippet(data), err)}
			}
			// A field of an unexpected type (a server's extension) is
			// skipped; the rest of the chunk is good.
		}
		if len(chunk.Error) > 0 && !bytes.Equal(chunk.Error, []byte("null")) || ev.Event == "error" {
			return false, c.streamError(streamOp, data)
		}
		if !st.add(&chunk, yield) {
			return false, nil
		}
	}
	if !st.finished {
		return false, c.incomplete(streamOp)
	}
	yield(st.finish(), nil)
	return done, nil
}

func snippet(b []byte) []byte {
	if len(b) > 200 {
		return b[:200]
	}
	return b
}

// wireChunk is the part of a chat.completion.chunk the adapter reads.
type wireChunk struct {
	ID    string `json:"id"`
	Model string `json:"model"`
	wireChunkBody
}

// wireChunkBody is what changes from chunk to chunk.
type wireChunkBody struct {
	Choices []wireChoice    `json:"choices"`
	Usage   *wireUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type wireChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	FinishReason string    `json:"finish_reason"`
}

type wireDelta struct {
	Content string `json:"content"`
	Refusal string `json:"refusal"`
	// ReasoningContent (vLLM, DeepSeek, llama.cpp) and Reasoning (Ollama,
	// OpenRouter) carry the model's reasoning.
	ReasoningContent string         `json:"reasoning_content"`
	Reasoning        string         `json:"reasoning"`
	ToolCalls        []wireToolCall `json:"tool_calls"`
}

type wireToolCall struct {
	// Index is nil when a server omits it.
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// llm maps OpenAI's token counts; prompt_tokens include cached tokens.
func (u *wireUsage) llm() llm.Usage {
	return llm.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, CachedTokens: u.PromptTokensDetails.CachedTokens}
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
func (s *streamState) add(chunk *wireChunk, yield func(llm.Event, error) bool) bool {
	if s.id == "" {
		s.id = chunk.ID
	}
	if s.model == "" {
		s.model = chunk.Model
	}
	if chunk.Usage != nil {
		s.usage = chunk.Usage.llm()
	}
	for i := range chunk.Choices {
		ch := &chunk.Choices[i]
		if ch.Index != 0 {
			continue // n > 1 is never requested
		}
		d := &ch.Delta
		if text := d.ReasoningContent + d.Reasoning; text != "" {
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
func (s *streamState) index(tc *wireToolCall) int {
	i := s.last
	if tc.Index != nil {
		i = *tc.Index
	} else if tc.ID != "" && (s.calls == 0 || tc.ID != s.lastID) {
		i = s.calls
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

// streamBuffer is the event stream's read buffer: chunks are a few hundred
// bytes, longer ones are assembled across reads, and every open stream
// holds one (BenchmarkGatewayOverhead/idle).
const streamBuffer = 1024
