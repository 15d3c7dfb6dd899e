package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/agentcraftlab/agentcraft/agent"
)

// ErrUnknownAgent is what Agents.Get returns for a name it does not know.
var ErrUnknownAgent = errors.New("unknown agent")

// RefusalError is what Agents.Get returns for a caller that may not run
// the agent now, such as a workspace that has spent its budget: the
// server answers Status (429) with Message instead of an internal error.
// Describe never returns it: a card, or a task already run, is the
// caller's to read whatever it may spend.
type RefusalError struct {
	Status  int
	Message string
	Err     error
}

func (e *RefusalError) Error() string { return e.Message }
func (e *RefusalError) Unwrap() error { return e.Err }

// AgentInfo is what a card says about an agent.
type AgentInfo struct {
	Name        string
	Description string
}

// Agents is what a Server publishes: the agents of the caller, found from
// the request's context (the server package puts the API key's workspace
// there).
type Agents interface {
	// List returns the caller's agents.
	List(ctx context.Context) ([]AgentInfo, error)
	// Describe finds one of them for what only reads about it: its card
	// and the requests on its tasks. An unknown name gives an error
	// wrapping ErrUnknownAgent; a caller that may see the agent but not
	// run it now (a spent budget) gets its AgentInfo.
	Describe(ctx context.Context, name string) (AgentInfo, error)
	// Get resolves one of them to run, for a message that starts a task;
	// an unknown name gives an error wrapping ErrUnknownAgent, a caller
	// that may not run it now a *RefusalError.
	Get(ctx context.Context, name string) (*agent.Agent, AgentInfo, error)
	// Scope names the caller's tenant (the workspace id); a task is
	// visible only in the scope that created it.
	Scope(ctx context.Context) string
}

// ServerOptions configure a Server.
type ServerOptions struct {
	// Agents is required.
	Agents Agents
	// Prefix is the path the handler is mounted at. Default "/a2a".
	Prefix string
	// PublicURL is the server's external root URL (such as
	// https://agents.example.com), used in cards; default: from the
	// request's Host and X-Forwarded-Proto.
	PublicURL string
	// Bearer makes cards declare the HTTP bearer scheme (API keys).
	Bearer bool
	// TaskTTL is how long a finished task can still be read. Default 1 h.
	TaskTTL time.Duration
	// TaskTimeout bounds one task's run. Default 10 min.
	TaskTimeout time.Duration
	// MaxBodyBytes caps a request. Default 8 MiB.
	MaxBodyBytes int64
	// Version is the agents' version in their cards. Default "1.0.0".
	Version string
	// Logger receives failures. Default: discard.
	Logger *slog.Logger
}

// Server is the http.Handler publishing agents over A2A; see the package
// documentation for its routes. The protocol is the SDK's: one a2asrv
// request handler (task store, execution, streaming) behind its 1.0
// JSON-RPC handler and its 0.3 one (a2av0); Server routes by agent name,
// scopes tasks to the caller and runs the platform's agents.
type Server struct {
	opts   ServerOptions
	logger *slog.Logger
	runs   runs
	rpc10  http.Handler
	rpc03  http.Handler
	cards  http.Handler
}

// NewServer returns a Server.
func NewServer(opts *ServerOptions) (*Server, error) {
	s := &Server{}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Agents == nil {
		return nil, errors.New("a2a: ServerOptions.Agents is required: it says which agents to publish")
	}
	s.opts.Prefix = "/" + strings.Trim(cmpOr(s.opts.Prefix, "/a2a"), "/")
	if s.opts.TaskTTL <= 0 {
		s.opts.TaskTTL = time.Hour
	}
	if s.opts.TaskTimeout <= 0 {
		s.opts.TaskTimeout = 10 * time.Minute
	}
	if s.opts.MaxBodyBytes <= 0 {
		s.opts.MaxBodyBytes = 8 << 20
	}
	s.opts.Version = cmpOr(s.opts.Version, "1.0.0")
	s.logger = s.opts.Logger
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.runs.cancels = map[*context.CancelCauseFunc]struct{}{}
	store := newTaskStore(s.opts.TaskTTL)
	handler := a2asrv.NewHandler(&executor{s: s},
		a2asrv.WithTaskStore(store),
		a2asrv.WithCallInterceptors(endedCancel{store: store}),
		a2asrv.WithCapabilityChecks(&a2a.AgentCapabilities{Streaming: true}),
		a2asrv.WithLogger(s.logger))
	s.rpc10 = a2asrv.NewJSONRPCHandler(handler)
	s.rpc03 = a2av0.NewJSONRPCHandler(handler)
	s.cards = a2asrv.NewAgentCardHandler(a2av0.NewAgentCardProducer(a2asrv.AgentCardProducerFn(
		func(ctx context.Context) (*a2a.AgentCard, error) {
			c, ok := ctx.Value(callKey{}).(*call)
			if !ok {
				return nil, errors.New("a2a: no agent in the card request's context")
			}
			return s.Card(c.info, c.url), nil
		})))
	return s, nil
}

// Stop cancels the running tasks and waits for their agents to return.
// Idempotent.
func (s *Server) Stop() { s.runs.stop() }

// call is what ServeHTTP resolved for a request to one agent; it rides in
// the request's context to the executor, the card producer and the task
// store, which the SDK calls with that context.
type call struct {
	// agent is the resolved agent of a message that starts a task; nil
	// for a request that only reads (a card, GetTask), which the
	// executor then resolves itself before it runs anything.
	agent *agent.Agent
	name  string
	info  AgentInfo
	url   string
	// scope is the caller's scope and the agent: a task is visible only
	// to the workspace and agent that created it.
	scope string
}

type callKey struct{}

func callFrom(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, s.opts.Prefix)
	if !ok {
		http.NotFound(w, r)
		return
	}
	rest = strings.Trim(rest, "/")
	if rest == "" {
		if r.Method != http.MethodGet {
			methodNotAllowed(w, "GET")
			return
		}
		s.index(w, r)
		return
	}
	name, sub, _ := strings.Cut(rest, "/")
	isCard := sub == "" || "/"+sub == CardPath || "/"+sub == LegacyCardPath
	switch {
	case sub == "" && r.Method == http.MethodPost:
		s.rpc(w, r, name)
	case isCard && (r.Method == http.MethodGet || r.Method == http.MethodOptions):
		s.card(w, r, name)
	case isCard:
		methodNotAllowed(w, "GET, POST")
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no A2A route " + r.URL.Path + "; cards are at " + s.opts.Prefix + "/{agent}" + CardPath})
	}
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method not allowed; use " + allow})
}

func (s *Server) baseURL(r *http.Request) string {
	if s.opts.PublicURL != "" {
		return strings.TrimRight(s.opts.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
		scheme = p
	}
	return scheme + "://" + r.Host
}

func (s *Server) agentURL(r *http.Request, name string) string {
	return s.baseURL(r) + s.opts.Prefix + "/" + url.PathEscape(name)
}

// index lists the caller's agents with their card URLs.
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	agents, err := s.opts.Agents.List(r.Context())
	if err != nil {
		s.logger.Error("a2a_list_agents_failed", "error", err)
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "cannot list agents now; try again"})
		return
	}
	type entry struct {
		Name        string `json:"name"`
		Description string `json:"description,omitempty"`
		URL         string `json:"url"`
		CardURL     string `json:"cardUrl"`
	}
	out := make([]entry, 0, len(agents))
	for _, a := range agents {
		u := s.agentURL(r, a.Name)
		out = append(out, entry{Name: a.Name, Description: a.Description, URL: u, CardURL: u + CardPath})
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": out})
}

// Card returns the card of the agent described by info, reachable at
// agentURL: one JSON-RPC interface per version (1.0 first, then 0.3) at
// the same URL. Served, it also carries the 0.3 top-level fields (url,
// protocolVersion, preferredTransport, security), which the SDK's 0.3
// card producer adds, so that clients of either version read it.
func (s *Server) Card(info AgentInfo, agentURL string) *AgentCard {
	desc := cmpOr(info.Description, "AgentCraft agent "+info.Name)
	c := &AgentCard{
		Name:        info.Name,
		Description: desc,
		SupportedInterfaces: []*AgentInterface{
			{URL: agentURL, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version},
			{URL: agentURL, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version},
		},
		Version:            s.opts.Version,
		Capabilities:       a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             []a2a.AgentSkill{{ID: "chat", Name: info.Name, Description: desc, Tags: []string{"chat"}}},
	}
	if s.opts.Bearer {
		c.SecuritySchemes = a2a.NamedSecuritySchemes{"bearer": a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", Description: "AgentCraft API key"}}
		c.SecurityRequirements = a2a.SecurityRequirementsOptions{{"bearer": {}}}
	}
	return c
}

// resolve finds the named agent for the caller, to run it when run is set
// (Agents.Get, which refuses a caller that may not run it now) and only to
// describe it otherwise (Agents.Describe); on failure it has answered.
func (s *Server) resolve(w http.ResponseWriter, r *http.Request, name string, run bool, fail func(status int, code int, msg string)) (*http.Request, bool) {
	var (
		a    *agent.Agent
		info AgentInfo
		err  error
	)
	if run {
		a, info, err = s.opts.Agents.Get(r.Context(), name)
	} else {
		info, err = s.opts.Agents.Describe(r.Context(), name)
	}
	if err != nil {
		if errors.Is(err, ErrUnknownAgent) {
			fail(http.StatusNotFound, CodeInvalidRequest, fmt.Sprintf("no agent named %q; GET %s lists the agents", name, s.opts.Prefix))
			return nil, false
		}
		var refused *RefusalError
		if errors.As(err, &refused) {
			fail(refused.Status, CodeInvalidRequest, refused.Message)
			return nil, false
		}
		s.logger.Error("a2a_agent_resolve_failed", "agent", name, "error", err)
		fail(http.StatusInternalServerError, CodeInternal, fmt.Sprintf("cannot resolve agent %q now; try again", name))
		return nil, false
	}
	c := &call{agent: a, name: name, info: info, url: s.agentURL(r, name), scope: s.opts.Agents.Scope(r.Context()) + "\x00" + name}
	return r.WithContext(context.WithValue(r.Context(), callKey{}, c)), true
}

// startsRun reports whether a JSON-RPC method sends a message, which runs
// the agent; the others read or end tasks (or the card) and run nothing.
func startsRun(method string) bool {
	switch method {
	case "SendMessage", "SendStreamingMessage", "message/send", "message/stream":
		return true
	}
	return false
}

func (s *Server) card(w http.ResponseWriter, r *http.Request, name string) {
	// A card describes the agent: a caller that may not run it now (a
	// spent budget) still reads it.
	r, ok := s.resolve(w, r, name, false, func(status, _ int, msg string) {
		writeJSON(w, status, map[string]string{"error": msg})
	})
	if !ok {
		return
	}
	w.Header().Set("Cache-Control", "private, max-age=60")
	s.cards.ServeHTTP(w, r)
}

// rpc serves one JSON-RPC request: the 0.3 method names (message/send …)
// go to the SDK's 0.3 handler, the others to its 1.0 one.
func (s *Server) rpc(w http.ResponseWriter, r *http.Request, name string) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	if err != nil {
		writeRPCError(w, http.StatusRequestEntityTooLarge, nil, CodeInvalidRequest, fmt.Sprintf("request body larger than %d bytes", s.opts.MaxBodyBytes))
		return
	}
	var probe struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(body, &probe) // a broken body is the SDK handler's to report
	if v := r.Header.Get(VersionHeader); v != "" && !strings.HasPrefix(v, "1.") && v != "1" && !strings.HasPrefix(v, "0.3") {
		writeRPCError(w, http.StatusOK, probe.ID, CodeVersionNotSupported, fmt.Sprintf("A2A version %q is not supported; this agent speaks 1.0 and 0.3", v))
		return
	}
	// A message is refused here, with its HTTP status (429 for a spent
	// budget), before the SDK creates a task; the executor resolves the
	// agent itself for a message this probe missed.
	r, ok := s.resolve(w, r, name, startsRun(probe.Method), func(status, code int, msg string) {
		writeRPCError(w, status, probe.ID, code, msg)
	})
	if !ok {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if strings.Contains(probe.Method, "/") {
		s.rpc03.ServeHTTP(w, r)
		return
	}
	s.rpc10.ServeHTTP(w, r)
}

// writeRPCError answers a request the SDK handlers never see.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	writeJSON(w, status, map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
