// Package mcpclient gives agents the tools of Model Context Protocol
// servers, using the official SDK (github.com/modelcontextprotocol/go-sdk).
//
// A Manager connects to each configured server — a command speaking MCP
// over stdio, or a streamable HTTP endpoint with a static bearer token or
// OAuth2 client credentials — lists its tools, keeps the list current
// when the server sends notifications/tools/list_changed, and offers them
// as tool.Tool values named "<server>__<tool>" (see ToolName).
//
// A server that cannot be reached, or whose token cannot be fetched, is
// skipped: the Manager logs a warning, reports it through Status, and
// retries in the background with exponential backoff, while agents go on
// with the tools that are available. A call to a tool whose server went
// away returns an error Result the model can read, never a Go error.
//
//	m, err := mcpclient.New(servers, &mcpclient.Options{Logger: logger})
//	if err != nil { ... }
//	m.Start(ctx) // waits for the first connection attempt of every server
//	defer m.Stop()
//	tools, err := m.Resolve("mcp:github") // or "github__create_issue"
package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/agentcraftlab/agentcraft/internal/tracing"
	"github.com/agentcraftlab/agentcraft/tool"
)

// ErrUnavailable reports MCP tools that cannot be used now: their server
// is down or does not offer them (any longer).
var ErrUnavailable = errors.New("mcp tool unavailable")

// ServerPrefix introduces a tool reference meaning every tool of a server:
// "mcp:github".
const ServerPrefix = "mcp:"

// ServerConfig is one MCP server. Set Command (stdio) or URL (streamable
// HTTP), not both.
type ServerConfig struct {
	// Name prefixes the server's tool names: 1 to 32 letters, digits, '-'
	// and single '_'.
	Name string
	// Command and Args start a server speaking MCP on stdin and stdout.
	// Env is added to this process's environment.
	Command string
	Args    []string
	Env     map[string]string
	// URL is a streamable HTTP endpoint.
	URL string
	// Bearer is a static token sent with every HTTP request.
	Bearer string
	// OAuth fetches tokens with the client-credentials grant.
	OAuth *OAuth
}

// OAuth is an OAuth2 client-credentials registration.
type OAuth struct {
	ClientID     string
	ClientSecret string
	Scopes       []string
	// TokenURL is the token endpoint. Empty: discovered from the server's
	// protected-resource metadata (RFC 9728) and its authorization
	// server's metadata (RFC 8414).
	TokenURL string
}

// Options configures a Manager. Nil means defaults.
type Options struct {
	// Logger receives connection warnings. Default: discard.
	Logger *slog.Logger
	// HTTPClient carries requests to HTTP servers, discovery and token
	// requests; its Transport is wrapped to add tokens. It must not set
	// Timeout, which would cut the long-lived event stream. Default: a
	// client on http.DefaultTransport.
	HTTPClient *http.Client
	// ConnectTimeout bounds one connection attempt (connect, token,
	// list). Default 15s.
	ConnectTimeout time.Duration
	// MinBackoff and MaxBackoff bound the delay between reconnection
	// attempts, which doubles after each failure. Defaults 1s and 1m.
	MinBackoff, MaxBackoff time.Duration
	// Version is sent to servers as the client's version. Default "dev".
	Version string
}

// ServerStatus is the health of one server.
type ServerStatus struct {
	Name string `json:"name"`
	// Transport is "stdio" or "http".
	Transport string `json:"transport"`
	Connected bool   `json:"connected"`
	// Error is why the server is not connected, when it is not.
	Error string `json:"error,omitempty"`
	// Tools is the number of tools the server offers.
	Tools int `json:"tools"`
}

// ToolInfo is one tool of a connected server.
type ToolInfo struct {
	// Server is the server's configured name.
	Server string
	// MCPName is the tool's name on the server.
	MCPName string
	// Tool is the tool as agents use it; Tool.Name() is the model-facing
	// name.
	Tool tool.Tool
}

// Manager keeps the connections to MCP servers. Create it with New, then
// Start it; Stop ends it. Its methods are safe for concurrent use, and
// those that read tools accept a nil *Manager, which has no servers.
type Manager struct {
	logger         *slog.Logger
	httpClient     *http.Client // base client, no timeout
	connectTimeout time.Duration
	minBackoff     time.Duration
	maxBackoff     time.Duration
	version        string

	servers []*server          // fixed in New
	byName  map[string]*server // fixed in New

	// dial replaces the transports in tests; nil in production.
	dial func(ctx context.Context, cfg ServerConfig) (mcp.Transport, error)

	// gen counts changes of the available tools (connections, lists).
	gen atomic.Uint64

	// ctx is the lifetime of the background work, set by Start; cancel
	// ends it (Stop).
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	startMu  sync.Mutex // guards started
	started  bool
	stopOnce sync.Once
}

// New checks the server configurations and returns a Manager that has not
// connected yet.
func New(servers []ServerConfig, opts *Options) (*Manager, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	m := &Manager{
		logger:         o.Logger,
		httpClient:     o.HTTPClient,
		connectTimeout: o.ConnectTimeout,
		minBackoff:     o.MinBackoff,
		maxBackoff:     o.MaxBackoff,
		version:        o.Version,
		byName:         make(map[string]*server, len(servers)),
	}
	if m.logger == nil {
		m.logger = slog.New(slog.DiscardHandler)
	}
	if m.httpClient == nil {
		m.httpClient = &http.Client{Transport: http.DefaultTransport}
	}
	if m.connectTimeout <= 0 {
		m.connectTimeout = 15 * time.Second
	}
	if m.minBackoff <= 0 {
		m.minBackoff = time.Second
	}
	if m.maxBackoff <= 0 {
		m.maxBackoff = time.Minute
	}
	m.maxBackoff = max(m.maxBackoff, m.minBackoff)
	if m.version == "" {
		m.version = "dev"
	}
	for i, cfg := range servers {
		if err := ValidateServer(cfg); err != nil {
			return nil, fmt.Errorf("mcp: servers[%d]: %w", i, err)
		}
		if _, dup := m.byName[cfg.Name]; dup {
			return nil, fmt.Errorf("mcp: servers[%d]: name %q is used twice: give each server its own name", i, cfg.Name)
		}
		s := &server{cfg: cfg, m: m, refresh: make(chan struct{}, 1), ready: make(chan struct{})}
		s.lastErr = errors.New("not connected yet")
		s.client = mcp.NewClient(&mcp.Implementation{Name: "agentcraft", Version: m.version}, &mcp.ClientOptions{
			Capabilities: &mcp.ClientCapabilities{},
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				select {
				case s.refresh <- struct{}{}:
				default: // a refresh is already pending
				}
			},
		})
		m.servers = append(m.servers, s)
		m.byName[cfg.Name] = s
	}
	return m, nil
}

// ValidateServer checks one server configuration: a valid name, and
// either a command or an http(s) URL, with auth only for URLs.
func ValidateServer(cfg ServerConfig) error {
	if err := ValidateServerName(cfg.Name); err != nil {
		return err
	}
	switch {
	case cfg.Command == "" && cfg.URL == "":
		return fmt.Errorf("server %q: set command (stdio) or url (streamable HTTP)", cfg.Name)
	case cfg.Command != "" && cfg.URL != "":
		return fmt.Errorf("server %q: set command or url, not both", cfg.Name)
	}
	if cfg.URL != "" && !strings.HasPrefix(cfg.URL, "http://") && !strings.HasPrefix(cfg.URL, "https://") {
		return fmt.Errorf("server %q: url %q must start with http:// or https://", cfg.Name, cfg.URL)
	}
	if cfg.Command != "" && (cfg.Bearer != "" || cfg.OAuth != nil) {
		return fmt.Errorf("server %q: bearer and oauth apply to url servers only: pass credentials to a command through env", cfg.Name)
	}
	if cfg.Bearer != "" && cfg.OAuth != nil {
		return fmt.Errorf("server %q: set bearer or oauth, not both", cfg.Name)
	}
	if o := cfg.OAuth; o != nil {
		if o.ClientID == "" || o.ClientSecret == "" {
			return fmt.Errorf("server %q: oauth needs client_id and client_secret", cfg.Name)
		}
		if o.TokenURL != "" && !strings.HasPrefix(o.TokenURL, "http://") && !strings.HasPrefix(o.TokenURL, "https://") {
			return fmt.Errorf("server %q: oauth token_url %q must start with http:// or https://", cfg.Name, o.TokenURL)
		}
	}
	return nil
}

// ValidateServerName reports whether name can name a server: its tools
// are called <name>__<tool>. ValidateServer checks it too.
func ValidateServerName(name string) error {
	if name == "" || len(name) > 32 {
		return fmt.Errorf("server name %q: use 1 to 32 characters", name)
	}
	if sanitize(name) != name || strings.Contains(name, NameSeparator) || strings.HasSuffix(name, "_") {
		return fmt.Errorf("server name %q: use letters, digits, '-' and single '_' (not at the end), since %q separates server and tool in tool names", name, NameSeparator)
	}
	return nil
}

// Start connects to every server in the background and waits until each
// has connected or failed its first attempt (or ctx ends). Servers that
// failed are retried until Stop. Start returns an error only when called
// twice; a server that is down is not an error.
func (m *Manager) Start(ctx context.Context) error {
	m.startMu.Lock()
	if m.started {
		m.startMu.Unlock()
		return errors.New("mcp: manager already started")
	}
	m.started = true
	m.ctx, m.cancel = context.WithCancel(context.WithoutCancel(ctx))
	m.startMu.Unlock()
	for _, s := range m.servers {
		m.wg.Go(func() { s.run(m.ctx) })
	}
	for _, s := range m.servers {
		select {
		case <-s.ready:
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// Stop closes every session and waits for the background work. It is
// idempotent.
func (m *Manager) Stop() {
	if m == nil {
		return
	}
	m.stopOnce.Do(func() {
		m.startMu.Lock()
		m.started = true // a Start after Stop does nothing
		cancel := m.cancel
		m.startMu.Unlock()
		if cancel != nil {
			cancel()
		}
		m.wg.Wait()
	})
}

// Generation changes whenever the set of available tools may have
// changed: a server connected or went away, or a tool list was refreshed.
// Callers that cache resolved tools compare it.
func (m *Manager) Generation() uint64 {
	if m == nil {
		return 0
	}
	return m.gen.Load()
}

// Status reports every server's health, in configuration order.
func (m *Manager) Status() []ServerStatus {
	if m == nil {
		return nil
	}
	out := make([]ServerStatus, 0, len(m.servers))
	for _, s := range m.servers {
		st := ServerStatus{Name: s.cfg.Name, Transport: "http"}
		if s.cfg.Command != "" {
			st.Transport = "stdio"
		}
		s.mu.Lock()
		st.Connected = s.session != nil
		if !st.Connected && s.lastErr != nil {
			st.Error = s.lastErr.Error()
		}
		st.Tools = len(s.tools)
		s.mu.Unlock()
		out = append(out, st)
	}
	return out
}

// Owns reports whether name refers to MCP tools: "mcp:<server>" or
// "<server>__<tool>" of a configured server, whether or not the server is
// up now.
func (m *Manager) Owns(name string) bool {
	if m == nil {
		return false
	}
	if srv, ok := strings.CutPrefix(name, ServerPrefix); ok {
		_, known := m.byName[srv]
		return known
	}
	srv, _, ok := strings.Cut(name, NameSeparator)
	if !ok {
		return false
	}
	_, known := m.byName[srv]
	return known
}

// Resolve returns the tools name refers to: all tools of a server for
// "mcp:<server>", or the one tool "<server>__<tool>". An error wrapping
// ErrUnavailable says why they cannot be used now (server down, tool not
// offered); an error wrapping tool.ErrUnknownTool names a server that is
// not configured.
func (m *Manager) Resolve(name string) ([]tool.Tool, error) {
	if !m.Owns(name) {
		return nil, fmt.Errorf("mcp: %w %q: no MCP server of that name is configured", tool.ErrUnknownTool, name)
	}
	srvName, all := strings.CutPrefix(name, ServerPrefix)
	if !all {
		srvName, _, _ = strings.Cut(name, NameSeparator)
	}
	s := m.byName[srvName]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session == nil {
		return nil, fmt.Errorf("%w: MCP server %q is down (%v), so %s is left out", ErrUnavailable, srvName, s.lastErr, name)
	}
	if all {
		out := make([]tool.Tool, 0, len(s.order))
		for _, n := range s.order {
			out = append(out, s.tools[n])
		}
		return out, nil
	}
	t, ok := s.tools[name]
	if !ok {
		return nil, fmt.Errorf("%w: MCP server %q does not offer tool %s (it offers %d others)", ErrUnavailable, srvName, name, len(s.tools))
	}
	return []tool.Tool{t}, nil
}

// List returns the tools of the connected servers, by server in
// configuration order, then in the servers' order.
func (m *Manager) List() []ToolInfo {
	if m == nil {
		return nil
	}
	var out []ToolInfo
	for _, s := range m.servers {
		s.mu.Lock()
		for _, n := range s.order {
			t := s.tools[n]
			out = append(out, ToolInfo{Server: s.cfg.Name, MCPName: t.mcpName, Tool: t})
		}
		s.mu.Unlock()
	}
	return out
}

// CallResult is the unconverted answer of a tool call: the MCP result as
// JSON, for clients that show it as it is (the CLI).
type CallResult struct {
	// JSON is the CallToolResult the server sent.
	JSON json.RawMessage
	// IsError reports the result's isError.
	IsError bool
}

// CallRaw calls the tool named mcpName (the server's own name for it) on
// server, with args (a JSON object; empty means {}), and returns the
// server's result unconverted. A Go error means the call did not get a
// result: the server is down or the protocol failed.
func (m *Manager) CallRaw(ctx context.Context, server, mcpName string, args json.RawMessage) (CallResult, error) {
	if m == nil || m.byName[server] == nil {
		return CallResult{}, fmt.Errorf("mcp: %w: no MCP server %q is configured", tool.ErrUnknownTool, server)
	}
	s := m.byName[server]
	cs, err := s.currentSession()
	if err != nil {
		return CallResult{}, err
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpName, Arguments: argsObject(args)})
	if err != nil {
		return CallResult{}, fmt.Errorf("mcp: call %s on %q: %w", mcpName, server, err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return CallResult{}, fmt.Errorf("mcp: encode result of %s: %w", mcpName, err)
	}
	return CallResult{JSON: b, IsError: res.IsError}, nil
}

// server is the connection to one MCP server.
type server struct {
	cfg    ServerConfig
	m      *Manager
	client *mcp.Client

	// refresh receives a signal on tools/list_changed; buffered 1.
	refresh chan struct{}
	// ready is closed after the first connection attempt.
	ready     chan struct{}
	readyOnce sync.Once

	mu      sync.Mutex
	session *mcp.ClientSession  // guarded by mu; nil while down
	tools   map[string]*mcpTool // guarded by mu; by model-facing name
	order   []string            // guarded by mu; model-facing names in the server's order
	lastErr error               // guarded by mu; why the server is down

	authMu   sync.Mutex         // guards ts and tokenURL
	ts       oauth2.TokenSource // OAuth token source, cached across reconnects
	tokenURL string
}

// run connects, serves list_changed refreshes and reconnects with backoff
// until ctx ends.
func (s *server) run(ctx context.Context) {
	backoff := s.m.minBackoff
	for {
		cs, err := s.connect(ctx)
		// ready closes only once the attempt's outcome is recorded, so
		// Status after Start says why a server is down, not "not
		// connected yet".
		if err != nil {
			if ctx.Err() != nil {
				s.readyOnce.Do(func() { close(s.ready) })
				return
			}
			s.setDown(err)
			s.m.logger.Warn("mcp_server_unavailable", "server", s.cfg.Name, "error", err.Error(), "retry_in", backoff.String())
			s.readyOnce.Do(func() { close(s.ready) })
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, s.m.maxBackoff)
			continue
		}
		s.readyOnce.Do(func() { close(s.ready) })
		backoff = s.m.minBackoff
		s.m.logger.Info("mcp_server_connected", "server", s.cfg.Name, "tools", s.toolCount())
		err = s.serve(ctx, cs)
		if ctx.Err() != nil {
			s.setDown(errors.New("stopped"))
			return
		}
		s.setDown(err)
		s.m.logger.Warn("mcp_server_unavailable", "server", s.cfg.Name, "error", err.Error(), "retry_in", backoff.String())
	}
}

// serve keeps cs's tool list current until the session ends or ctx does;
// it returns why the session ended and closes it.
func (s *server) serve(ctx context.Context, cs *mcp.ClientSession) error {
	ended := make(chan error, 1)
	go func() { ended <- cs.Wait() }()
	for {
		select {
		case <-ctx.Done():
			cs.Close()
			<-ended
			return ctx.Err()
		case err := <-ended:
			cs.Close()
			if err == nil {
				err = errors.New("the server closed the connection")
			}
			return fmt.Errorf("session ended: %w", err)
		case <-s.refresh:
			lctx, cancel := context.WithTimeout(ctx, s.m.connectTimeout)
			err := s.list(lctx, cs)
			cancel()
			if err != nil {
				// Keep the previous list: the tools may still work, and
				// a broken session ends through Wait.
				s.m.logger.Warn("mcp_tools_refresh_failed", "server", s.cfg.Name, "error", err.Error())
			}
		}
	}
}

// connect makes one attempt: transport, session, tool list.
func (s *server) connect(ctx context.Context) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(ctx, s.m.connectTimeout)
	defer cancel()
	var stderr *tailWriter
	t, err := s.transport(ctx, &stderr)
	if err != nil {
		return nil, err
	}
	// Drain a list_changed signal of a previous session: the list below
	// is fresh.
	select {
	case <-s.refresh:
	default:
	}
	cs, err := s.client.Connect(ctx, t, nil)
	if err != nil {
		return nil, withStderr(fmt.Errorf("connect: %w", err), stderr)
	}
	if err := s.list(ctx, cs); err != nil {
		cs.Close()
		return nil, withStderr(err, stderr)
	}
	return cs, nil
}

// transport builds the transport of one attempt.
func (s *server) transport(ctx context.Context, stderr **tailWriter) (mcp.Transport, error) {
	if s.m.dial != nil {
		return s.m.dial(ctx, s.cfg)
	}
	if s.cfg.Command != "" {
		cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
		if len(s.cfg.Env) > 0 {
			env := os.Environ()
			for _, k := range slices.Sorted(maps.Keys(s.cfg.Env)) {
				env = append(env, k+"="+s.cfg.Env[k])
			}
			cmd.Env = env
		}
		*stderr = &tailWriter{}
		cmd.Stderr = *stderr
		return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil
	}
	// Tool calls carry the caller's W3C traceparent (internal/tracing;
	// a pass-through while tracing is off).
	base := tracing.Transport(s.m.httpClient.Transport)
	traced := *s.m.httpClient
	traced.Transport = base
	hc := &traced
	switch {
	case s.cfg.Bearer != "":
		hc = &http.Client{Transport: &bearerTransport{token: s.cfg.Bearer, base: base}}
	case s.cfg.OAuth != nil:
		ts, err := s.tokenSource(ctx)
		if err != nil {
			return nil, err
		}
		hc = &http.Client{Transport: &oauth2.Transport{Source: ts, Base: base}}
	}
	return &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc, MaxRetries: 2}, nil
}

// list reads the server's tools and replaces the published list.
func (s *server) list(ctx context.Context, cs *mcp.ClientSession) error {
	var listed []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("list tools: %w", err)
		}
		listed = append(listed, t)
	}
	names := make([]string, len(listed))
	for i, t := range listed {
		names[i] = t.Name
	}
	mapped, _ := mapNames(s.cfg.Name, names)
	tools := make(map[string]*mcpTool, len(listed))
	for i, t := range listed {
		tools[mapped[i]] = newTool(s, mapped[i], t)
	}
	s.mu.Lock()
	s.session = cs
	s.tools = tools
	s.order = mapped
	s.lastErr = nil
	s.mu.Unlock()
	s.m.gen.Add(1)
	return nil
}

// setDown marks the server unavailable because of err.
func (s *server) setDown(err error) {
	s.mu.Lock()
	changed := s.session != nil || len(s.tools) > 0
	s.session = nil
	s.tools = nil
	s.order = nil
	s.lastErr = err
	s.mu.Unlock()
	if changed {
		s.m.gen.Add(1)
	}
}

func (s *server) toolCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tools)
}

// currentSession returns the live session, or an error wrapping
// ErrUnavailable saying why there is none.
func (s *server) currentSession() (*mcp.ClientSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session == nil {
		return nil, fmt.Errorf("%w: MCP server %q is down: %v", ErrUnavailable, s.cfg.Name, s.lastErr)
	}
	return s.session, nil
}

// tailWriter keeps the last bytes a server wrote to stderr, for errors.
type tailWriter struct {
	mu  sync.Mutex
	buf []byte // guarded by mu
}

const tailMax = 1024

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > tailMax {
		w.buf = slices.Clone(w.buf[len(w.buf)-tailMax:])
	}
	return len(p), nil
}

func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.TrimSpace(string(w.buf))
}

// withStderr appends what a stdio server wrote to stderr to err.
func withStderr(err error, w *tailWriter) error {
	if w == nil {
		return err
	}
	if s := w.String(); s != "" {
		return fmt.Errorf("%w; server stderr: %s", err, s)
	}
	return err
}
