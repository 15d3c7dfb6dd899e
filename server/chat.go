package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/internal/sse"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/run"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/server/openaiapi"
)

// The internal chat API runs an agent and shows everything it did: every
// server tool call with its arguments, result and duration. The
// OpenAI-compatible API (/v1/chat/completions) hides those calls, because
// its clients would try to execute them; this one is for AgentCraft's own
// UI, scripts and tests.
//
//	POST /api/chat         JSON answer with the tool calls
//	POST /api/chat/stream  the same as server-sent events

func (s *Server) registerChat() {
	s.handle("POST /api/chat", identity.PermChat, s.chat)
	s.handle("POST /api/chat/stream", identity.PermChat, s.chatStream)
}

// chatBody is a request of the chat API.
type chatBody struct {
	// Agent names the agent (GET /api/agents).
	Agent string `json:"agent"`
	// Messages is the conversation, OpenAI-style or simply
	// [{"role":"user","content":"..."}].
	Messages []chatMessage `json:"messages"`
	// MaxSteps and MaxTokens lower the agent's step limit and token
	// budget (input plus output over the whole run) for this request.
	MaxSteps  int `json:"max_steps"`
	MaxTokens int `json:"max_tokens"`
	// ConversationID continues a stored conversation of the caller's
	// (POST /api/conversations): messages then hold only the new turn,
	// the thread's history goes before it (its summary and recent turns,
	// compacted past the agent's budget), and the turn and the answer are
	// stored before the answer is sent.
	ConversationID string `json:"conversation_id"`
	// Files names uploads (POST /api/upload) for the conversation, as on
	// /v1/chat/completions; content parts {"type":"file"} work too.
	Files []struct {
		ID string `json:"id"`
	} `json:"files"`
}

// chatMessage is one message of a chat request. Unknown fields inside a
// message are ignored, as OpenAI SDKs add some (refusal, audio); the
// request's own fields are strict.
type chatMessage openaiapi.Message

// UnmarshalJSON decodes a message leniently (see chatMessage).
func (m *chatMessage) UnmarshalJSON(b []byte) error {
	return json.Unmarshal(b, (*openaiapi.Message)(m))
}

// chatCall is one chat request in flight.
type chatCall struct {
	s     *Server
	start time.Time
	pr    platform.Principal
	agent *run.Agent
	usage llm.Usage
}

// beginChat decodes and checks the request, resolves the agent and starts the
// run. On failure it has answered with a 4xx or 5xx error.
func (s *Server) beginChat(w http.ResponseWriter, r *http.Request, buffered bool) (*chatCall, func(yield func(agent.Event, error) bool), bool) {
	c := &chatCall{s: s, start: time.Now()}
	ctx := r.Context()
	c.pr, _ = platform.PrincipalFrom(ctx)
	var body chatBody
	if !s.decodeBody(w, r, &body) {
		return nil, nil, false
	}
	switch {
	case body.Agent == "":
		apierr.Write(w, apierr.BadRequest("agent", "agent is required: name an agent listed by GET /api/agents"))
		return nil, nil, false
	case len(body.Messages) == 0:
		apierr.Write(w, apierr.BadRequest("messages", "messages is required and must hold at least one message, such as {\"role\":\"user\",\"content\":\"Hello\"}"))
		return nil, nil, false
	case body.MaxSteps < 0:
		apierr.Write(w, apierr.BadRequest("max_steps", "max_steps must be positive, or left out for the agent's limit"))
		return nil, nil, false
	case body.MaxTokens < 0:
		apierr.Write(w, apierr.BadRequest("max_tokens", "max_tokens must be positive, or left out for the agent's budget"))
		return nil, nil, false
	}
	wire := make([]openaiapi.Message, len(body.Messages))
	for i, m := range body.Messages {
		wire[i] = openaiapi.Message(m)
	}
	var fileIDs []string
	msgs, ae := openaiapi.DecodeMessages(wire, &openaiapi.MessageOptions{Files: &fileIDs})
	if ae != nil {
		apierr.Write(w, ae)
		return nil, nil, false
	}
	for i, f := range body.Files {
		if f.ID == "" {
			apierr.Write(w, apierr.BadRequest(fmt.Sprintf("files[%d].id", i), fmt.Sprintf("files[%d].id is required: the fileId POST /api/upload returned", i)))
			return nil, nil, false
		}
		if !slices.Contains(fileIDs, f.ID) {
			fileIDs = append(fileIDs, f.ID)
		}
	}
	a, err := s.runner.Agent(ctx, run.Caller{Principal: run.PrincipalOf(c.pr), Surface: run.SurfaceChat,
		ConversationID: strings.TrimSpace(body.ConversationID)}, body.Agent)
	if err != nil {
		c.fail(w, err)
		return nil, nil, false
	}
	c.agent = a
	if len(fileIDs) > 0 {
		var attach openaiapi.Attachments
		if s.attach != nil {
			attach = s.attach
		}
		if ctx, msgs, err = openaiapi.AttachFiles(ctx, attach, c.pr.WorkspaceID, fileIDs, msgs); err != nil {
			a.Refused(err)
			c.fail(w, err)
			return nil, nil, false
		}
	}
	events := a.Run(ctx, agent.Input{
		Messages: msgs, User: c.pr.User, Buffered: buffered,
		MaxSteps: body.MaxSteps, TokenBudget: body.MaxTokens,
	})
	return c, events, true
}

// chatError maps an error of a chat request to an API error.
func chatError(err error) *apierr.Error {
	var ae *apierr.Error
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, platform.ErrUnknownAgent):
		return apierr.NotFound("agent_not_found", err.Error()+": name an agent listed by GET /api/agents")
	case errors.Is(err, platform.ErrUnknownProvider):
		return &apierr.Error{Status: http.StatusBadGateway, Type: apierr.TypeUpstream, Code: "provider_not_configured", Message: err.Error()}
	}
	if ae := openaiapi.ConversationError(err); ae != nil {
		return ae
	}
	return apierr.FromLLM(err)
}

// fail answers err before anything else was written. A run records its
// own usage; so does a.Refused for a request that never ran.
func (c *chatCall) fail(w http.ResponseWriter, err error) {
	ae := chatError(err)
	apierr.Write(w, ae)
	if ae.Status >= 500 {
		c.s.logger.Warn("chat_failed", "workspace_id", c.pr.WorkspaceID, "error", err)
	}
}

// chatToolCall is one server tool call in a chat answer.
type chatToolCall struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Arguments  string  `json:"arguments"`
	Result     string  `json:"result"`
	IsError    bool    `json:"is_error"`
	DurationMs float64 `json:"duration_ms"`
	Step       int     `json:"step"`
}

// chatUsage is the token count of a run.
type chatUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	CachedTokens int `json:"cached_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

func toChatUsage(u llm.Usage) chatUsage {
	return chatUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CachedTokens: u.CachedTokens, TotalTokens: u.Total()}
}

// chatAnswerMessage is the assistant's answer, ready to append to the
// request's messages for the next turn.
type chatAnswerMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// chatAnswer is the JSON answer of POST /api/chat.
type chatAnswer struct {
	Message      chatAnswerMessage `json:"message"`
	ToolCalls    []chatToolCall    `json:"tool_calls"`
	Usage        chatUsage         `json:"usage"`
	Steps        int               `json:"steps"`
	FinishReason llm.FinishReason  `json:"finish_reason"`
	// Warnings say what the run went without (an MCP server that is
	// down, say).
	Warnings []string `json:"warnings,omitempty"`
}

func durationMs(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// chat answers POST /api/chat with the whole run.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	c, events, ok := s.beginChat(w, r, true)
	if !ok {
		return
	}
	var text bytes.Buffer
	ans := chatAnswer{ToolCalls: []chatToolCall{}, FinishReason: llm.FinishStop}
	byID := map[string]int{} // index in ans.ToolCalls by call id
	for ev, err := range events {
		if err != nil {
			c.fail(w, err)
			return
		}
		switch ev.Type {
		case agent.EventTextDelta:
			text.WriteString(ev.Text)
		case agent.EventToolStarted:
			byID[ev.Tool.CallID] = len(ans.ToolCalls)
			ans.ToolCalls = append(ans.ToolCalls, chatToolCall{ID: ev.Tool.CallID, Name: ev.Tool.Name, Arguments: ev.Tool.Arguments, Step: ev.Step})
		case agent.EventToolFinished:
			if i, ok := byID[ev.Tool.CallID]; ok {
				tc := &ans.ToolCalls[i]
				tc.Result, tc.IsError, tc.DurationMs = ev.Tool.Content, ev.Tool.IsError, durationMs(ev.Tool.Duration)
			}
		case agent.EventWarning:
			ans.Warnings = append(ans.Warnings, ev.Text)
		case agent.EventFinish:
			ans.FinishReason = ev.FinishReason
			ans.Steps = ev.Steps
			if ev.Usage != nil {
				c.usage = *ev.Usage
			}
		}
	}
	ans.Message = chatAnswerMessage{Role: "assistant", Content: text.String()}
	ans.Usage = toChatUsage(c.usage)
	httpapi.WriteJSON(w, http.StatusOK, ans)
}

// Events of POST /api/chat/stream, each an SSE event of that name whose
// data is a JSON object.
const (
	chatEventText       = "text"        // {"text", "step"}
	chatEventReasoning  = "reasoning"   // {"text", "step"}
	chatEventToolCall   = "tool_call"   // {"id", "name", "arguments", "step"}
	chatEventToolResult = "tool_result" // {"id", "name", "content", "is_error", "duration_ms", "step"}
	chatEventWarning    = "warning"     // {"text"}: the run goes on without something configured
	chatEventDone       = "done"        // {"message", "usage", "steps", "finish_reason"}
	chatEventError      = "error"       // {"error": {"message", "type", "param", "code"}}
)

// chatStream answers POST /api/chat/stream with server-sent events. An
// error before the first event is a plain JSON error with its status; an
// error after it is an error event, which ends the stream.
func (s *Server) chatStream(w http.ResponseWriter, r *http.Request) {
	c, events, ok := s.beginChat(w, r, false)
	if !ok {
		return
	}
	var (
		sw   *sse.Writer
		text bytes.Buffer
		buf  bytes.Buffer
	)
	send := func(name string, v any) error {
		if sw == nil {
			sw = sse.NewWriter(w)
		}
		buf.Reset()
		if err := json.NewEncoder(&buf).Encode(v); err != nil {
			return err
		}
		return sw.WriteEvent(sse.Event{Event: name, Data: bytes.TrimSuffix(buf.Bytes(), []byte("\n"))})
	}
	var writeErr error
	for ev, err := range events {
		if err != nil {
			if sw == nil {
				c.fail(w, err)
				return
			}
			_ = send(chatEventError, chatError(err).Body())
			return
		}
		switch ev.Type {
		case agent.EventTextDelta:
			text.WriteString(ev.Text)
			writeErr = send(chatEventText, map[string]any{"text": ev.Text, "step": ev.Step})
		case agent.EventReasoningDelta:
			writeErr = send(chatEventReasoning, map[string]any{"text": ev.Text, "step": ev.Step})
		case agent.EventToolStarted:
			writeErr = send(chatEventToolCall, map[string]any{"id": ev.Tool.CallID, "name": ev.Tool.Name, "arguments": ev.Tool.Arguments, "step": ev.Step})
		case agent.EventToolFinished:
			writeErr = send(chatEventToolResult, chatToolCall{ID: ev.Tool.CallID, Name: ev.Tool.Name, Result: ev.Tool.Content,
				IsError: ev.Tool.IsError, DurationMs: durationMs(ev.Tool.Duration), Step: ev.Step})
		case agent.EventFinish:
			if ev.Usage != nil {
				c.usage = *ev.Usage
			}
			writeErr = send(chatEventDone, map[string]any{
				"message":       chatAnswerMessage{Role: "assistant", Content: text.String()},
				"usage":         toChatUsage(c.usage),
				"steps":         ev.Steps,
				"finish_reason": ev.FinishReason,
			})
		case agent.EventWarning:
			writeErr = send(chatEventWarning, map[string]any{"text": ev.Text})
		}
		if writeErr != nil {
			break // the client went away; the run's context is cancelled with it
		}
	}
}
