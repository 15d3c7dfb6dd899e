package aguiserver

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/internal/sse"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/rag"
)

// AG-UI event types this server sends.
const (
	typeRunStarted              = "RUN_STARTED"
	typeRunFinished             = "RUN_FINISHED"
	typeRunError                = "RUN_ERROR"
	typeTextMessageStart        = "TEXT_MESSAGE_START"
	typeTextMessageContent      = "TEXT_MESSAGE_CONTENT"
	typeTextMessageEnd          = "TEXT_MESSAGE_END"
	typeReasoningStart          = "REASONING_START"
	typeReasoningMessageStart   = "REASONING_MESSAGE_START"
	typeReasoningMessageContent = "REASONING_MESSAGE_CONTENT"
	typeReasoningMessageEnd     = "REASONING_MESSAGE_END"
	typeReasoningEnd            = "REASONING_END"
	typeToolCallStart           = "TOOL_CALL_START"
	typeToolCallArgs            = "TOOL_CALL_ARGS"
	typeToolCallEnd             = "TOOL_CALL_END"
	typeToolCallResult          = "TOOL_CALL_RESULT"
	typeCustom                  = "CUSTOM"
	typeStepStarted             = "STEP_STARTED"
	typeStepFinished            = "STEP_FINISHED"
	typeStateSnapshot           = "STATE_SNAPSHOT"
	typeStateDelta              = "STATE_DELTA"
)

// wireEvent is every AG-UI event this server sends, its fields left out
// when empty; Content is a pointer because a tool's result may be empty
// and TOOL_CALL_RESULT must still carry it.
type wireEvent struct {
	Type            string   `json:"type"`
	ThreadID        string   `json:"threadId,omitempty"`
	RunID           string   `json:"runId,omitempty"`
	ParentRunID     string   `json:"parentRunId,omitempty"`
	MessageID       string   `json:"messageId,omitempty"`
	Role            string   `json:"role,omitempty"`
	Delta           string   `json:"delta,omitempty"`
	ToolCallID      string   `json:"toolCallId,omitempty"`
	ToolCallName    string   `json:"toolCallName,omitempty"`
	ParentMessageID string   `json:"parentMessageId,omitempty"`
	Content         *string  `json:"content,omitempty"`
	Outcome         *outcome `json:"outcome,omitempty"`
	Message         string   `json:"message,omitempty"`
	Code            string   `json:"code,omitempty"`
	Name            string   `json:"name,omitempty"`
	Value           any      `json:"value,omitempty"`
	StepName        string   `json:"stepName,omitempty"`
	Snapshot        any      `json:"snapshot,omitempty"`
	Result          any      `json:"result,omitempty"`
}

// stateDelta is STATE_DELTA, whose delta is a JSON Patch (RFC 6902),
// not the text delta of wireEvent.
type stateDelta struct {
	Type  string    `json:"type"`
	Delta []patchOp `json:"delta"`
}

// patchOp is one JSON Patch operation.
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// outcome is RUN_FINISHED's outcome: success (naming the frontend tool
// calls the client is to answer), interrupt (a workflow's human node
// waits) or cancelled.
type outcome struct {
	Type               string      `json:"type"`
	PendingToolCallIDs []string    `json:"pendingToolCallIds,omitempty"`
	Interrupts         []interrupt `json:"interrupts,omitempty"`
}

// interrupt is what a parked run asks for: the next run answers it by id
// in RunAgentInput.resume.
type interrupt struct {
	ID             string         `json:"id"`
	Reason         string         `json:"reason"`
	Message        string         `json:"message,omitempty"`
	ResponseSchema map[string]any `json:"responseSchema,omitempty"`
	ExpiresAt      string         `json:"expiresAt,omitempty"`
	Metadata       map[string]any `json:"metadata,omitempty"`
}

// encoder turns a run's agent events into AG-UI events, keeping the
// open text message, reasoning and frontend tool call so that each is
// started once and ended before anything else begins.
type encoder struct {
	sse             *sse.Writer
	buf             bytes.Buffer
	enc             *json.Encoder
	threadID, runID string

	// step is the model call the events belong to; stepMsg is the id of
	// its assistant message (its text, and the parent of its tool
	// calls); textUsed says a text message with that id was sent, so a
	// second one in the step needs an id of its own.
	step     int
	stepMsg  string
	textUsed bool
	// text and reasoning are the ids of the open text message and
	// reasoning, "" when closed.
	text, reasoning string
	// call is the id of the open frontend tool call, callIndex its
	// index; calls are the ids of the frontend calls sent, by index.
	call      string
	callIndex int
	calls     []string
	finished  bool
	// cites holds the passages retrieval gave the model; nil: none.
	cites *rag.Collector
}

// citation is one entry of the "citations" CUSTOM event: the passage the
// answer's [n] refers to, with its text, so a front end can show it
// without another request, and the label the model saw it under.
type citation struct {
	rag.Citation
	Label string `json:"label"`
}

// citations sends the "citations" CUSTOM event when retrieval gave the
// model passages: {"citations": [...]}, numbered as the answer cites them.
func (e *encoder) citations() error {
	if e.cites == nil {
		return nil
	}
	cs := e.cites.Citations()
	if len(cs) == 0 {
		return nil
	}
	out := make([]citation, len(cs))
	for i, c := range cs {
		out[i] = citation{Citation: c, Label: c.Label()}
	}
	return e.write(&wireEvent{Type: typeCustom, Name: "citations", Value: map[string]any{"citations": out}})
}

func newEncoder(w http.ResponseWriter, threadID, runID string) *encoder {
	e := &encoder{sse: sse.NewWriter(w), threadID: threadID, runID: runID, callIndex: -1}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}

// write sends one event: a *wireEvent or a *stateDelta.
func (e *encoder) write(ev any) error {
	e.buf.Reset()
	if err := e.enc.Encode(ev); err != nil {
		return err
	}
	return e.sse.WriteData(bytes.TrimSuffix(e.buf.Bytes(), []byte("\n")))
}

func (e *encoder) runStarted(parent string) error {
	return e.write(&wireEvent{Type: typeRunStarted, ThreadID: e.threadID, RunID: e.runID, ParentRunID: parent})
}

func (e *encoder) runError(message, code string) error {
	e.finished = true
	return e.write(&wireEvent{Type: typeRunError, Message: message, Code: code})
}

// event sends what one agent event means on the wire.
func (e *encoder) event(ev agent.Event) error {
	if ev.Step != e.step && ev.Step > 0 {
		e.step, e.stepMsg, e.textUsed = ev.Step, "", false
	}
	switch ev.Type {
	case agent.EventTextDelta:
		if ev.Text == "" {
			return nil
		}
		if err := e.openText(); err != nil {
			return err
		}
		return e.write(&wireEvent{Type: typeTextMessageContent, MessageID: e.text, Delta: ev.Text})
	case agent.EventReasoningDelta:
		if ev.Text == "" {
			return nil
		}
		if err := e.openReasoning(); err != nil {
			return err
		}
		return e.write(&wireEvent{Type: typeReasoningMessageContent, MessageID: e.reasoning, Delta: ev.Text})
	case agent.EventToolStarted:
		t := ev.Tool
		if err := e.closeAll(); err != nil {
			return err
		}
		if err := e.write(&wireEvent{Type: typeToolCallStart, ToolCallID: t.CallID, ToolCallName: t.Name, ParentMessageID: e.message()}); err != nil {
			return err
		}
		if t.Arguments != "" {
			if err := e.write(&wireEvent{Type: typeToolCallArgs, ToolCallID: t.CallID, Delta: t.Arguments}); err != nil {
				return err
			}
		}
		return e.write(&wireEvent{Type: typeToolCallEnd, ToolCallID: t.CallID})
	case agent.EventToolFinished:
		t := ev.Tool
		if err := e.closeAll(); err != nil {
			return err
		}
		content := t.Content
		if content == "" {
			content = t.Result
		}
		return e.write(&wireEvent{Type: typeToolCallResult, MessageID: newID("msg_"), ToolCallID: t.CallID, Content: &content, Role: "tool"})
	case agent.EventToolCallDelta:
		return e.clientCall(ev.ToolCall)
	case agent.EventWarning:
		if ev.Text == "" {
			return nil
		}
		return e.write(&wireEvent{Type: typeCustom, Name: "warning", Value: ev.Text})
	case agent.EventFinish:
		if err := e.closeAll(); err != nil {
			return err
		}
		if err := e.citations(); err != nil {
			return err
		}
		e.finished = true
		out := &outcome{Type: "success"}
		if ev.FinishReason == llm.FinishToolCalls {
			out.PendingToolCallIDs = e.calls
		}
		return e.write(&wireEvent{Type: typeRunFinished, ThreadID: e.threadID, RunID: e.runID, Outcome: out})
	}
	return nil
}

// message is the id of the current step's assistant message.
func (e *encoder) message() string {
	if e.stepMsg == "" {
		e.stepMsg = newID("msg_")
	}
	return e.stepMsg
}

func (e *encoder) openText() error {
	if e.text != "" {
		return nil
	}
	if err := e.closeAll(); err != nil {
		return err
	}
	id := e.message()
	if e.textUsed {
		id = newID("msg_")
	}
	e.text, e.textUsed = id, true
	return e.write(&wireEvent{Type: typeTextMessageStart, MessageID: id, Role: "assistant"})
}

func (e *encoder) openReasoning() error {
	if e.reasoning != "" {
		return nil
	}
	if err := e.closeAll(); err != nil {
		return err
	}
	e.reasoning = newID("rsn_")
	if err := e.write(&wireEvent{Type: typeReasoningStart, MessageID: e.reasoning}); err != nil {
		return err
	}
	return e.write(&wireEvent{Type: typeReasoningMessageStart, MessageID: e.reasoning, Role: "reasoning"})
}

// clientCall sends a fragment of a frontend tool call: the first of a
// call starts it (ending the call before it), the others carry its
// arguments.
func (e *encoder) clientCall(d *llm.ToolCallDelta) error {
	if d == nil {
		return nil
	}
	if d.Index != e.callIndex {
		if err := e.closeAll(); err != nil {
			return err
		}
		for len(e.calls) <= d.Index {
			e.calls = append(e.calls, "")
		}
		id := d.ID
		if id == "" {
			id = newID("call_")
		}
		e.calls[d.Index], e.call, e.callIndex = id, id, d.Index
		if err := e.write(&wireEvent{Type: typeToolCallStart, ToolCallID: id, ToolCallName: d.Name, ParentMessageID: e.message()}); err != nil {
			return err
		}
	}
	if d.ArgumentsDelta == "" {
		return nil
	}
	return e.write(&wireEvent{Type: typeToolCallArgs, ToolCallID: e.calls[d.Index], Delta: d.ArgumentsDelta})
}

// closeAll ends the open text message, reasoning and frontend call.
func (e *encoder) closeAll() error {
	if e.text != "" {
		id := e.text
		e.text = ""
		if err := e.write(&wireEvent{Type: typeTextMessageEnd, MessageID: id}); err != nil {
			return err
		}
	}
	if e.reasoning != "" {
		id := e.reasoning
		e.reasoning = ""
		if err := e.write(&wireEvent{Type: typeReasoningMessageEnd, MessageID: id}); err != nil {
			return err
		}
		if err := e.write(&wireEvent{Type: typeReasoningEnd, MessageID: id}); err != nil {
			return err
		}
	}
	if e.call != "" {
		id := e.call
		e.call = ""
		if err := e.write(&wireEvent{Type: typeToolCallEnd, ToolCallID: id}); err != nil {
			return err
		}
	}
	return nil
}
