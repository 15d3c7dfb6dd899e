// Package openaiapi serves AgentCraft's agents through the OpenAI API:
// GET /v1/models lists the workspace's agents as models and
// POST /v1/chat/completions runs one, streaming or not, so Open WebUI and
// every OpenAI SDK work against AgentCraft unchanged.
//
// The agent's own tool calls run on the server and never reach the client as
// tool_calls (Open WebUI executes every tool call it receives); tools the
// client sends are honoured as client-side tools and returned as tool_calls.
// Errors use OpenAI's error JSON and are always sent before the first SSE
// byte when they happen before the answer starts.
//
// With Options.Runs set, the workspace's workflows are models too, named
// "workflow/<name>" (owned_by "agentcraft-workflow"); agents keep their
// bare names, so an agent called "workflow" does not collide. A completion
// on a workflow starts a durable run (newest version pinned) whose {{input}}
// is the last user message's text and whose {{vars.<key>}} are the
// request's metadata strings; the X-AgentCraft-Run-Id header names the run.
// The answer is the run's final output (strings as they are, other values
// as compact JSON), streamed as content after the run finishes; with
// metadata "progress": "true" a stream also carries node progress and the
// agents' text as reasoning_content. A run parked on a human node answers
// 200 with a message naming the run and the node's prompt. A run that fails
// a contract or whose input is blocked answers 422, a failed run 502 and a
// canceled run 409, with the run's error as the message and its status as
// the error type. The run is durable: it goes on when the client leaves.
package openaiapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/memory"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/run"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
)

// OverheadHeader reports, in milliseconds, the time AgentCraft spent on a
// request excluding upstream provider calls. Streams send it as a header
// (overhead before the first byte) and again as a trailer (whole request).
const OverheadHeader = "X-AgentCraft-Overhead-Ms"

// Options configure a Handler.
type Options struct {
	// MaxBodyBytes caps request bodies. Default 8 MiB.
	MaxBodyBytes int64
	// Logger receives request failures. Default: discard.
	Logger *slog.Logger
	// Runs executes workflows, which are then listed and run as models
	// named WorkflowModelPrefix+name. Default nil: agents only.
	Runs *controlplane.Service
	// Attachments resolves the uploads a chat references; nil makes such
	// a chat a 400 saying attachments are not available.
	Attachments Attachments
	// Runner runs the agents. Default: run.New(p, nil).
	Runner *run.Runner
	// Conversations attaches a completion to a stored thread when the
	// client names one (HeaderOpenWebUIChatID); nil: completions stay
	// stateless, whatever the header says.
	Conversations *memory.Conversations
}

// HeaderOpenWebUIChatID names the Open WebUI chat a completion belongs
// to; with Options.Conversations the completion continues the thread
// whose external ref is "openwebui:<id>", created on first use.
const HeaderOpenWebUIChatID = "X-OpenWebUI-Chat-Id"

// Attachments turns uploaded files referenced by a chat into what the
// agent sees: documents become searchable context for this request (the
// returned ctx carries it), images become image parts of the last user
// message.
type Attachments interface {
	Attach(ctx context.Context, workspaceID string, fileIDs []string) (context.Context, []llm.Part, error)
}

// Handler serves /v1/models and /v1/chat/completions.
type Handler struct {
	p       *platform.Platform
	runner  *run.Runner
	maxBody int64
	logger  *slog.Logger
	runs    *controlplane.Service // nil: no workflow models
	attach  Attachments           // nil: no file attachments
	conv    *memory.Conversations // nil: stateless completions
}

// New returns a Handler resolving agents through p.
func New(p *platform.Platform, opts *Options) *Handler {
	h := &Handler{p: p, maxBody: 8 << 20, logger: slog.New(slog.DiscardHandler)}
	if opts != nil {
		if opts.MaxBodyBytes > 0 {
			h.maxBody = opts.MaxBodyBytes
		}
		if opts.Logger != nil {
			h.logger = opts.Logger
		}
		h.runs = opts.Runs
		h.attach = opts.Attachments
		h.runner = opts.Runner
		h.conv = opts.Conversations
	}
	if h.runner == nil {
		h.runner = run.New(p, nil)
	}
	return h
}

// Routes are the OpenAI-compatible routes with the permission each needs.
func (h *Handler) Routes() []httpapi.Route {
	return []httpapi.Route{
		{Pattern: "GET /v1/models", Permission: identity.PermRead, Handler: http.HandlerFunc(h.models)},
		{Pattern: "GET /v1/models/{id...}", Permission: identity.PermRead, Handler: http.HandlerFunc(h.model)},
		{Pattern: "POST /v1/chat/completions", Permission: identity.PermChat, Handler: http.HandlerFunc(h.chat)},
	}
}

func (h *Handler) models(w http.ResponseWriter, r *http.Request) {
	pr, _ := platform.PrincipalFrom(r.Context())
	agents, err := h.p.Agents(r.Context(), pr.WorkspaceID)
	if err != nil {
		h.fail(w, err)
		return
	}
	list := modelList{Object: "list", Data: make([]modelInfo, 0, len(agents))}
	for _, a := range agents {
		list.Data = append(list.Data, modelInfo{ID: a.Name, Object: "model", Created: a.CreatedAt.Unix(), OwnedBy: "agentcraft"})
	}
	if h.runs != nil {
		wfs, err := h.workflowModels(r.Context(), pr.WorkspaceID, agents)
		if err != nil {
			h.fail(w, err)
			return
		}
		list.Data = append(list.Data, wfs...)
	}
	httpapi.WriteJSON(w, http.StatusOK, list)
}

func (h *Handler) model(w http.ResponseWriter, r *http.Request) {
	pr, _ := platform.PrincipalFrom(r.Context())
	a, err := h.p.Agent(r.Context(), pr.WorkspaceID, r.PathValue("id"))
	if name, ok := h.workflowName(r.PathValue("id"), err); ok {
		wf, err := h.getWorkflow(r.Context(), pr.WorkspaceID, name)
		if err != nil {
			h.fail(w, err)
			return
		}
		httpapi.WriteJSON(w, http.StatusOK, modelInfo{ID: WorkflowModelPrefix + wf.Name, Object: "model", Created: wf.CreatedAt.Unix(), OwnedBy: workflowOwner})
		return
	}
	if err != nil {
		h.fail(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, modelInfo{ID: a.Row.Name, Object: "model", Created: a.Row.CreatedAt.Unix(), OwnedBy: "agentcraft"})
}

// fail writes err as an OpenAI error.
func (h *Handler) fail(w http.ResponseWriter, err error) {
	apierr.Write(w, toAPIError(err))
}

// ConversationError maps the errors of continuing a conversation, nil for
// any other: an unknown (or someone else's) conversation is a 404, a
// server without conversations a 503. Every chat surface answers them
// alike.
func ConversationError(err error) *apierr.Error {
	switch {
	case errors.Is(err, memory.ErrUnknownConversation):
		return apierr.NotFound("conversation_not_found", "the conversation does not exist: create one with POST /api/conversations, or leave conversation out for a stateless chat")
	case errors.Is(err, run.ErrNoConversations):
		return &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer, Code: "conversations_not_configured", Message: "conversations are not configured on this server"}
	}
	return nil
}

func toAPIError(err error) *apierr.Error {
	var re *requestError
	var ae *apierr.Error
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &re):
		return apierr.BadRequest(re.Param, re.Message)
	case errors.As(err, &mbe):
		return &apierr.Error{Status: http.StatusRequestEntityTooLarge, Type: apierr.TypeInvalidRequest, Code: "request_too_large",
			Message: "request body is larger than " + strconv.FormatInt(mbe.Limit, 10) + " bytes; send a shorter conversation or raise server.max_body_bytes"}
	case errors.Is(err, platform.ErrUnknownAgent):
		return apierr.NotFound("model_not_found", err.Error()+": the model must name an agent listed by GET /v1/models")
	case errors.Is(err, platform.ErrUnknownProvider):
		return &apierr.Error{Status: http.StatusBadGateway, Type: apierr.TypeUpstream, Code: "provider_not_configured", Message: err.Error()}
	}
	if ae := ConversationError(err); ae != nil {
		return ae
	}
	return apierr.FromLLM(err)
}

// call is one chat completion in flight.
type call struct {
	h     *Handler
	start time.Time
	pr    platform.Principal
	agent *run.Agent
	// ran is set once the agent runs: from then on the run records
	// itself.
	ran     bool
	req     chatRequest
	id      string
	created int64
	usage   llm.Usage
}

func (h *Handler) chat(w http.ResponseWriter, r *http.Request) {
	c := &call{h: h, start: time.Now()}
	ctx := r.Context()
	c.pr, _ = platform.PrincipalFrom(ctx)

	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		c.failEarly(w, err)
		return
	}
	req, msgs, err := decodeChatRequest(body)
	c.req = req
	if err != nil {
		c.failEarly(w, err)
		return
	}
	caller := run.Caller{Principal: run.PrincipalOf(c.pr), Surface: run.SurfaceOpenAI}
	caller.EndUser = c.user()
	c.agent, err = h.runner.Agent(ctx, caller, req.Model)
	if name, ok := h.workflowName(req.Model, err); ok {
		if len(req.fileIDs) > 0 {
			c.failEarly(w, badParam("files", "file attachments are read by agents; workflow models take text input (give the workflow a rag node instead)"))
			return
		}
		c.runWorkflow(ctx, w, body, msgs, name)
		return
	}
	if err != nil {
		c.failEarly(w, err)
		return
	}
	if au := c.agent.Def.Row.Params.Autonomous; au != nil && h.runs != nil {
		if len(req.fileIDs) > 0 {
			c.failEarly(w, badParam("files", "file attachments are read by ordinary agents; an autonomous agent takes text (give it kb_search or web_fetch instead)"))
			return
		}
		c.runAutonomous(ctx, w, body, msgs, c.agent.Def.Row.Name, au)
		return
	}
	task := isOpenWebUITask(msgs)
	if id, ok, err := h.conversation(ctx, r, req, caller.Principal); err != nil {
		c.failEarly(w, err)
		return
	} else if ok && !task {
		// Bound again in the thread: its history and its memory tools.
		c.agent = c.agent.InConversation(id, true)
	}
	if len(req.fileIDs) > 0 {
		if ctx, msgs, err = h.attachFiles(ctx, c.pr.WorkspaceID, req.fileIDs, msgs); err != nil {
			c.failEarly(w, err)
			return
		}
	}
	choice, err := req.toolChoice()
	if err != nil {
		c.failEarly(w, err)
		return
	}
	stop, err := req.stop()
	if err != nil {
		c.failEarly(w, err)
		return
	}
	c.id = newID()
	c.created = c.start.Unix()

	var events func(yield func(agent.Event, error) bool)
	if task {
		events = c.agent.Direct(ctx, llm.Request{Model: c.agent.Def.ModelID, Messages: msgs, Temperature: req.Temperature, TopP: req.TopP, MaxTokens: req.maxTokens(), Stop: stop, User: c.user()}, !req.Stream)
	} else {
		rt := *c.agent.Runtime
		if req.Temperature != nil {
			rt.Temperature = req.Temperature
		}
		if n := req.maxTokens(); n > 0 {
			rt.MaxTokens = n
		}
		c.agent.Runtime = &rt
		events = c.agent.Run(ctx, agent.Input{Messages: msgs, ClientTools: req.clientTools(), ToolChoice: choice, User: c.user(), Buffered: !req.Stream})
	}
	c.ran = true
	if req.Stream {
		c.stream(w, events)
	} else {
		c.whole(w, events)
	}
}

// conversation is the thread a completion continues, if any: the
// request's conversation field (a conversation id), else the Open WebUI
// chat of HeaderOpenWebUIChatID (attached, created on first use). Both
// treat the messages as the client's whole history (run.Caller
// ClientHistory): Open WebUI resends every turn, so only the turns the
// thread lacks are stored, and the model gets the stored history
// (compacted past the budget) followed by them.
func (h *Handler) conversation(ctx context.Context, r *http.Request, req chatRequest, p run.Principal) (string, bool, error) {
	if req.conversation != "" {
		return req.conversation, true, nil
	}
	chat := strings.TrimSpace(r.Header.Get(HeaderOpenWebUIChatID))
	if chat == "" || h.conv == nil {
		return "", false, nil
	}
	cv, err := h.conv.Attach(ctx, p, "openwebui:"+chat, req.Model)
	if err != nil {
		return "", false, err
	}
	return cv.ID, true, nil
}

// attachFiles resolves the uploads of a chat: ctx gains their documents as
// context, images join the last user message.
func (h *Handler) attachFiles(ctx context.Context, workspaceID string, ids []string, msgs []llm.Message) (context.Context, []llm.Message, error) {
	return AttachFiles(ctx, h.attach, workspaceID, ids, msgs)
}

// AttachFiles resolves the uploads ids of a chat through a (nil: the
// server takes no attachments, a 400): ctx gains their documents as
// context, images join the last user message. Every chat surface that
// takes files uses it, so they accept the same attachments; its refusals
// are *apierr.Error, which every surface answers as they are.
func AttachFiles(ctx context.Context, a Attachments, workspaceID string, ids []string, msgs []llm.Message) (context.Context, []llm.Message, error) {
	if a == nil {
		return ctx, nil, apierr.BadRequest("files", "this server does not accept file attachments: knowledge search is not configured")
	}
	ctx, images, err := a.Attach(ctx, workspaceID, ids)
	if err != nil {
		return ctx, nil, err
	}
	if len(images) > 0 {
		last := -1
		for i, m := range msgs {
			if m.Role == llm.RoleUser {
				last = i
			}
		}
		if last < 0 {
			return ctx, nil, apierr.BadRequest("messages", "images are attached but there is no user message to attach them to")
		}
		msgs = slices.Clone(msgs)
		m := msgs[last]
		m.Content = append(slices.Clone(m.Content), images...)
		msgs[last] = m
	}
	return ctx, msgs, nil
}

func (c *call) user() string {
	if c.pr.User != "" {
		return c.pr.User
	}
	return c.req.User
}

// failEarly answers an error before anything was sent.
func (c *call) failEarly(w http.ResponseWriter, err error) {
	c.setOverhead(w.Header())
	ae := toAPIError(err)
	apierr.Write(w, ae)
	if c.agent != nil && !c.ran {
		// Resolved but never run (a bad attachment, say): still a
		// request of the agent's, recorded as failed.
		c.agent.Refused(err)
	}
	if ae.Status >= 500 {
		c.h.logger.Warn("chat_completion_failed", "workspace_id", c.pr.WorkspaceID, "model", c.req.Model, "error", err)
	}
}

func (c *call) overhead() time.Duration {
	var up time.Duration
	if c.agent != nil {
		up = c.agent.Upstream()
	}
	return max(0, time.Since(c.start)-up)
}

func (c *call) setOverhead(h http.Header) {
	h.Set(OverheadHeader, formatMs(c.overhead()))
}

func formatMs(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64)
}

// whole collects the run and answers one chat.completion.
func (c *call) whole(w http.ResponseWriter, events func(yield func(agent.Event, error) bool)) {
	var text bytes.Buffer
	var calls []wireToolCall
	var finish llm.FinishReason = llm.FinishStop
	for ev, err := range events {
		if err != nil {
			c.failEarly(w, err)
			return
		}
		switch ev.Type {
		case agent.EventTextDelta:
			text.WriteString(ev.Text)
		case agent.EventToolCallDelta:
			d := ev.ToolCall
			for len(calls) <= d.Index {
				calls = append(calls, wireToolCall{Type: "function"})
			}
			if d.ID != "" {
				calls[d.Index].ID = d.ID
			}
			if d.Name != "" {
				calls[d.Index].Function.Name = d.Name
			}
			calls[d.Index].Function.Arguments += d.ArgumentsDelta
		case agent.EventFinish:
			finish = ev.FinishReason
			if ev.Usage != nil {
				c.usage = *ev.Usage
			}
		}
	}
	msg := &outMessage{Role: "assistant", ToolCalls: calls}
	if text.Len() > 0 || len(calls) == 0 {
		s := text.String()
		msg.Content = &s
	}
	fr := string(finish)
	resp := chatCompletion{
		ID: c.id, Object: "chat.completion", Created: c.created, Model: c.req.Model,
		Choices: []choice{{Index: 0, Message: msg, FinishReason: &fr}},
		Usage:   toWireUsage(c.usage),
	}
	c.setOverhead(w.Header())
	httpapi.WriteJSON(w, http.StatusOK, resp)
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "chatcmpl-" + hex.EncodeToString(b[:])
}
