// Package aguiserver runs AgentCraft agents over the AG-UI protocol
// (docs.ag-ui.com), the event stream that agent front ends such as
// CopilotKit read: POST /agui/{agent} takes a RunAgentInput as JSON and
// answers with server-sent events, one JSON event per "data:" line, from
// RUN_STARTED to RUN_FINISHED or RUN_ERROR. The route needs the caller's
// API key or session with the chat permission; the agent is the caller's
// workspace's, run through package run as on every surface.
//
// The stream carries the answer as TEXT_MESSAGE_START/CONTENT/END, the
// model's reasoning as REASONING_START, REASONING_MESSAGE_START/CONTENT/END
// and REASONING_END (the names that replace the deprecated THINKING_*
// events), each server tool call as TOOL_CALL_START/ARGS/END followed by
// TOOL_CALL_RESULT, and warnings (an MCP server down, say) as CUSTOM events
// named "warning". The input's tools are the front end's own: when the
// model calls one, the stream carries TOOL_CALL_START/ARGS/END for it and
// the run finishes, naming the call in RUN_FINISHED's outcome
// (pendingToolCallIds); the front end runs the tool and starts the next
// run with its result as a tool message.
//
// The input's context entries reach the model as one system message.
// forwardedProps.fileId (or a list, forwardedProps.fileIds) attaches
// uploads of POST /api/upload through Options.Attachments, the pipeline
// of /v1's files: documents become the run's searchable context, images
// join the last user message; an unknown or expired id is a 400. When
// retrieval gave the model passages, a CUSTOM event named "citations"
// comes before RUN_FINISHED, its value {"citations": [{n, source, label,
// kb, page, heading, start, end, score, text}]}: what the answer's [n]
// refer to, each with the passage's text, so a front end can show it.
// state is accepted and not used, and an agent run is never interrupted,
// so resume must be empty. With Options.Conversations the
// threadId names a stored conversation of the caller's (external ref
// "agui:<threadId>", created on first use, listed by GET
// /api/conversations), as X-OpenWebUI-Chat-Id does on /v1: the client
// resends the whole thread, and only the turns the conversation lacks are
// stored. Without it runs are stateless and the model reads the messages
// as sent.
//
// POST /agui/workflows/{name} (run permission; Options.Runs) starts a
// durable workflow run of package controlplane from the last user
// message (or state.input and state.vars) and streams its event stream:
// STATE_SNAPSHOT of the node states, STEP_STARTED/FINISHED and STATE_DELTA
// patches per node, the output as a text message and RUN_FINISHED. A
// human node ends the stream with an interrupt outcome whose id names the
// run and node; the next input's resume answers it exactly once, through
// Service.Resume, and streams the rest. Workflows read no conversation,
// so their threadId is echoed and not stored.
//
//	g, err := aguiserver.New(p, &aguiserver.Options{Runner: runner, Conversations: convs, Runs: runs})
//	srv, err := server.New(p, &server.Options{Mounts: g.Mounts()})
package aguiserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/internal/sse"
	"github.com/agentcraftlab/agentcraft/memory"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/rag"
	"github.com/agentcraftlab/agentcraft/run"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/server/openaiapi"
)

// Options configure a Server.
type Options struct {
	// Runner runs the agents. Default: run.New(p, nil).
	Runner *run.Runner
	// Conversations keeps a thread's runs in one stored conversation of
	// the caller's; the Runner must have the same service (its
	// Options.Conversations). Default nil: runs are stateless.
	Conversations *memory.Conversations
	// Runs runs the workflows of POST /agui/workflows/{name}. Default
	// nil: that route answers 503 workflows_not_configured.
	Runs *controlplane.Service
	// Attachments resolves the uploads a run names in
	// forwardedProps.fileId / fileIds, as on /v1 (server.NewAttachments).
	// Default nil: such a run is a 400 saying attachments are not
	// available.
	Attachments openaiapi.Attachments
	// MaxBodyBytes caps a request. Default 8 MiB.
	MaxBodyBytes int64
	// KeepAlive is how often a quiet stream (a long model call, a slow
	// tool) sends an SSE comment, so that proxies do not cut it.
	// Default 15 s.
	KeepAlive time.Duration
	// Logger receives failures. Default: discard.
	Logger *slog.Logger
}

// Server serves POST /agui/{agent} and POST /agui/workflows/{name}.
type Server struct {
	runner         *run.Runner
	conv           *memory.Conversations
	runs           *controlplane.Service
	attach         openaiapi.Attachments
	maxBody        int64
	keepAliveEvery time.Duration
	logger         *slog.Logger
}

// New returns the AG-UI server of p's agents.
func New(p *platform.Platform, opts *Options) (*Server, error) {
	if p == nil {
		return nil, errors.New("aguiserver: the platform is required")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	s := &Server{runner: o.Runner, conv: o.Conversations, runs: o.Runs, attach: o.Attachments, maxBody: o.MaxBodyBytes, keepAliveEvery: o.KeepAlive, logger: o.Logger}
	if s.runner == nil {
		s.runner = run.New(p, nil)
	}
	if s.maxBody <= 0 {
		s.maxBody = 8 << 20
	}
	if s.keepAliveEvery <= 0 {
		s.keepAliveEvery = 15 * time.Second
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

// Mounts are POST /agui/{agent}, behind the server's authentication with
// the chat permission, and POST /agui/workflows/{name}, with the run
// permission (as POST /api/workflows/{id}/runs).
func (s *Server) Mounts() []httpapi.Mount {
	return []httpapi.Mount{
		{Pattern: "POST /agui/{agent}", Handler: http.HandlerFunc(s.serveRun), Permission: identity.PermChat},
		{Pattern: "POST /agui/workflows/{name}", Handler: http.HandlerFunc(s.serveWorkflow), Permission: identity.PermRun},
	}
}

// readBody reads a request body of at most s.maxBody bytes; it answers
// the error itself and returns ok false.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			apierr.Write(w, &apierr.Error{Status: http.StatusRequestEntityTooLarge, Type: apierr.TypeInvalidRequest, Code: "request_too_large",
				Message: "request body is larger than " + strconv.FormatInt(mbe.Limit, 10) + " bytes; send a shorter thread or raise server.max_body_bytes"})
			return nil, false
		}
		apierr.Write(w, apierr.BadRequest("", "the request body could not be read: "+err.Error()))
		return nil, false
	}
	return body, true
}

// serveRun runs one agent for one RunAgentInput. Everything that can be
// refused before the run starts is a JSON error with a 4xx or 5xx
// status; once RUN_STARTED is sent, failures are RUN_ERROR events.
func (s *Server) serveRun(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	pr, _ := platform.PrincipalFrom(ctx)
	name := r.PathValue("agent")
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	in, ae := decodeInput(body)
	if ae != nil {
		apierr.Write(w, ae)
		return
	}
	caller := run.Caller{Principal: run.PrincipalOf(pr), Surface: run.SurfaceAGUI}
	a, err := s.runner.Agent(ctx, caller, name)
	if err != nil {
		s.failEarly(w, pr, name, err)
		return
	}
	if s.conv != nil {
		cv, err := s.conv.Attach(ctx, caller.Principal, "agui:"+in.ThreadID, name)
		if err != nil {
			a.Refused(err)
			s.failEarly(w, pr, name, err)
			return
		}
		// Bound again in the thread: its history and its memory tools.
		a = a.InConversation(cv.ID, true)
	}
	msgs := in.Messages
	if len(in.FileIDs) > 0 {
		// The same attachment pipeline as /v1: documents become this
		// run's searchable context, images join the last user message.
		if ctx, msgs, err = openaiapi.AttachFiles(ctx, s.attach, pr.WorkspaceID, in.FileIDs, msgs); err != nil {
			a.Refused(err)
			s.failEarly(w, pr, name, err)
			return
		}
	}
	// The collector keeps the passages retrieval gave the model, sent as
	// the "citations" CUSTOM event before RUN_FINISHED.
	ctx, col := rag.WithCollector(ctx)
	events := a.Run(ctx, agent.Input{Messages: msgs, ClientTools: in.Tools, User: caller.EndUser})
	s.stream(ctx, w, in, events, col)
}

// failEarly answers an error before the stream began.
func (s *Server) failEarly(w http.ResponseWriter, pr platform.Principal, name string, err error) {
	ae := toAPIError(err)
	apierr.Write(w, ae)
	if ae.Status >= 500 {
		s.logger.Warn("agui_run_refused", "workspace_id", pr.WorkspaceID, "agent", name, "error", err)
	}
}

func toAPIError(err error) *apierr.Error {
	var ae *apierr.Error
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, run.ErrUnknownAgent):
		return apierr.NotFound("agent_not_found", err.Error()+": the path must name an agent listed by GET /api/agents")
	case errors.Is(err, platform.ErrUnknownProvider):
		return &apierr.Error{Status: http.StatusBadGateway, Type: apierr.TypeUpstream, Code: "provider_not_configured", Message: err.Error()}
	}
	if ae := openaiapi.ConversationError(err); ae != nil {
		return ae
	}
	return apierr.FromLLM(err)
}

// stream sends the run's events. A quiet run still sends a keep-alive
// comment every s.keepAliveEvery; a client that goes away cancels ctx, which
// stops the run, and a failed write stops it too.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, in input, events func(yield func(agent.Event, error) bool), col *rag.Collector) {
	e := newEncoder(w, in.ThreadID, in.RunID)
	e.cites = col
	var mu sync.Mutex // serializes the events and the keep-alives on e
	if err := e.runStarted(in.ParentRunID); err != nil {
		return
	}
	defer sse.KeepAlive(e.sse, s.keepAliveEvery, &mu)()
	for ev, err := range events {
		mu.Lock()
		if err != nil {
			ae := toAPIError(err)
			if ctx.Err() == nil {
				_ = e.runError(ae.Message, ae.Code)
				if ae.Status >= 500 {
					s.logger.WarnContext(ctx, "agui_run_failed", "run_id", in.RunID, "error", err)
				}
			}
			mu.Unlock()
			return
		}
		werr := e.event(ev)
		mu.Unlock()
		if werr != nil {
			// The client went away: breaking the loop ends the run.
			return
		}
	}
	if !e.finished && ctx.Err() == nil {
		mu.Lock()
		_ = e.runError("the run ended without finishing", "internal")
		mu.Unlock()
	}
}

// newID is a random message id.
func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
