package openaiapi

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/internal/sse"
	"github.com/agentcraftlab/agentcraft/llm"
)

// chunkWriter encodes chat.completion.chunk objects into one reused buffer.
type chunkWriter struct {
	sse   *sse.Writer
	buf   bytes.Buffer
	enc   *json.Encoder
	chunk chatCompletion
	ch    [1]choice
	delta outMessage
	// text holds the content being sent, so that the delta can point at
	// it without a heap copy per chunk.
	text string
}

func newChunkWriter(w http.ResponseWriter, c *call) *chunkWriter {
	cw := &chunkWriter{sse: sse.NewWriter(w)}
	cw.enc = json.NewEncoder(&cw.buf)
	cw.chunk = chatCompletion{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.req.Model}
	return cw
}

func (cw *chunkWriter) write(v any) error {
	cw.buf.Reset()
	if err := cw.enc.Encode(v); err != nil {
		return err
	}
	return cw.sse.WriteData(bytes.TrimSuffix(cw.buf.Bytes(), []byte("\n")))
}

// delta sends one chunk whose single choice carries d.
func (cw *chunkWriter) sendDelta(d outMessage, finish *string) error {
	cw.delta = d
	cw.ch[0] = choice{Index: 0, Delta: &cw.delta, FinishReason: finish}
	cw.chunk.Choices = cw.ch[:]
	cw.chunk.Usage = nil
	return cw.write(&cw.chunk)
}

// stream answers with SSE chunks. Nothing is written until the run yields
// its first event, so an error before the answer starts is still a proper
// OpenAI error with a non-2xx status.
func (c *call) stream(w http.ResponseWriter, events func(yield func(agent.Event, error) bool)) {
	var cw *chunkWriter
	var finish llm.FinishReason = llm.FinishStop
	begin := func() error {
		if cw != nil {
			return nil
		}
		c.setOverhead(w.Header())
		w.Header().Set("Trailer", OverheadHeader)
		cw = newChunkWriter(w, c)
		empty := ""
		return cw.sendDelta(outMessage{Role: "assistant", Content: &empty}, nil)
	}
	var writeErr error
	for ev, err := range events {
		if err != nil {
			if cw == nil {
				c.failEarly(w, err)
				return
			}
			// The answer has begun: report in-band, as OpenAI does.
			_ = cw.write(toAPIError(err).Body())
			return
		}
		if writeErr = begin(); writeErr != nil {
			break
		}
		switch ev.Type {
		case agent.EventTextDelta:
			if ev.Text == "" {
				continue
			}
			cw.text = ev.Text
			writeErr = cw.sendDelta(outMessage{Content: &cw.text}, nil)
		case agent.EventToolCallDelta:
			d := ev.ToolCall
			idx := d.Index
			tc := wireToolCall{Index: &idx, ID: d.ID}
			if d.ID != "" || d.Name != "" {
				tc.Type = "function"
			}
			tc.Function.Name = d.Name
			tc.Function.Arguments = d.ArgumentsDelta
			writeErr = cw.sendDelta(outMessage{ToolCalls: []wireToolCall{tc}}, nil)
		case agent.EventToolStarted, agent.EventToolFinished:
			if c.agent.Def.ToolProgress {
				writeErr = cw.sendDelta(outMessage{ReasoningContent: progressText(ev)}, nil)
			}
		case agent.EventWarning:
			// Such as MCP tools left out because their server is down.
			if c.agent.Def.ToolProgress {
				writeErr = cw.sendDelta(outMessage{ReasoningContent: "Warning: " + ev.Text + "\n"}, nil)
			}
		case agent.EventFinish:
			finish = ev.FinishReason
			if ev.Usage != nil {
				c.usage = *ev.Usage
			}
		}
		if writeErr != nil {
			break
		}
	}
	if writeErr != nil {
		// The client went away; the run's context is already canceled
		// and the run recorded as abandoned.
		return
	}
	if cw == nil {
		if err := begin(); err != nil {
			return
		}
	}
	fr := string(finish)
	_ = cw.sendDelta(outMessage{}, &fr)
	if c.req.StreamOptions != nil && c.req.StreamOptions.IncludeUsage {
		cw.chunk.Choices = []choice{}
		cw.chunk.Usage = toWireUsage(c.usage)
		_ = cw.write(&cw.chunk)
	}
	_ = cw.sse.WriteData([]byte("[DONE]"))
	w.Header().Set(OverheadHeader, formatMs(c.overhead()))
}

// progressText renders a server tool call for reasoning_content, which chat
// UIs show as the model's thinking.
func progressText(ev agent.Event) string {
	t := ev.Tool
	if ev.Type == agent.EventToolStarted {
		return "Calling " + t.Name + " " + t.Arguments + "\n"
	}
	status := "returned"
	if t.IsError {
		status = "failed"
	}
	return t.Name + " " + status + ": " + t.Result + "\n"
}
