// Package mcpserver is AgentCraft's MCP server: the tools docsearch,
// agent_<name> and workflow_<name> of a workspace, served at /mcp over the
// stateless streamable HTTP transport behind OAuth2 bearer JWTs (its own
// client-credentials issuer at /oauth/token, or an outside issuer's JWKS),
// and over stdio for desktop clients (ServeStdio). Agents run through
// package run, as on every surface.
//
// Who a run acts for: a token of AgentCraft's own issuer names an OAuth
// client (client credentials), which acts for no person. An outside
// issuer's token acts for the AgentCraft user its (iss, sub) is linked to
// in store.UserIdentities (Options.Users) — the link OpenID Connect
// sign-in with the same issuer makes — while that user is an enabled
// member of the token's workspace; its runs then see that user's personal
// memories (package memory) as every other surface does. An unlinked
// subject acts for no user (run.ActorExternal) and has no personal memory
// of a person.
//
//	m, err := mcpserver.New(p, &mcpserver.Options{TokenKey: key, Runner: runner})
//	srv, err := server.New(p, &server.Options{Mounts: m.Mounts()})
package mcpserver

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/kb"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/run"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/store"
)

// Authentication modes (Options.Auth).
const (
	// AuthOAuth requires an OAuth2 bearer JWT on /mcp.
	AuthOAuth = "oauth"
	// AuthNone takes no token: every tool of the default workspace, for
	// trusted private networks only.
	AuthNone = "none"
)

const mcpPath = "/mcp"

// Options configure the MCP server at /mcp and its OAuth2 endpoints
// (POST /oauth/token, /.well-known/...).
type Options struct {
	// Auth is AuthOAuth (default) or AuthNone.
	Auth string
	// TokenKey signs the tokens of POST /oauth/token and verifies them;
	// derive it with DeriveTokenKey from the master key. Required with
	// AuthOAuth.
	TokenKey ed25519.PrivateKey
	// OAuthClients are the clients tokens are issued to (`agentcraft mcp
	// clients`). Required with AuthOAuth.
	OAuthClients store.OAuthClients
	// JWKSURL, when set, also accepts tokens of an outside authorization
	// server whose keys it serves; Issuer (required with it) must match
	// their iss and Audience their aud (default: this server's /mcp URL).
	JWKSURL  string
	Issuer   string
	Audience string
	// AllowedOrigins are browser origins (scheme://host[:port]) /mcp
	// accepts besides its own. Default none.
	AllowedOrigins []string
	// BaseURL is the server's public root URL, such as
	// https://agents.example.com; it names the issuer, the /mcp resource
	// and the metadata URLs. Default: http(s)://<Host of each request>.
	BaseURL string
	// HTTPClient fetches JWKSURL. Default: a client with a 10 s timeout.
	HTTPClient *http.Client
	// Users maps an outside issuer's token to the AgentCraft user its
	// (iss, sub) is linked to (the links OpenID Connect sign-in makes), so
	// that agents run for that person: their personal memories and
	// conversations. Pass the store. Nil: outside tokens act for no user.
	Users UserStore

	// Runner runs the agent tools. Default: run.New(p, nil).
	Runner *run.Runner
	// Runs runs the workflow tools; nil offers none.
	Runs *controlplane.Service
	// Knowledge searches knowledge bases for docsearch; nil offers no
	// docsearch.
	Knowledge *kb.Service
	// Logger receives operational logs. Default: discard.
	Logger *slog.Logger
	// Version is reported to clients.
	Version string
	// MaxBodyBytes caps request bodies. Default 8 MiB.
	MaxBodyBytes int64
}

// UserStore is what /mcp reads to map an outside subject to a user;
// store.Store has it.
type UserStore interface {
	UserIdentities() store.UserIdentities
	Users() store.Users
	Members() store.Members
}

// Server serves /mcp, the token endpoint and the metadata documents; hand
// its Mounts to server.Options.Mounts.
type Server struct {
	p      *platform.Platform
	opts   Options
	logger *slog.Logger
	issuer *issuer    // nil when Auth is none
	jwks   *jwksCache // nil without JWKSURL
	mcp    *mcp.StreamableHTTPHandler
	tools  *mcpTools
}

// New returns the MCP server of p's workspaces.
func New(p *platform.Platform, opts *Options) (*Server, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Auth == "" {
		o.Auth = AuthOAuth
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 8 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Runner == nil {
		o.Runner = run.New(p, nil)
	}
	m := &Server{p: p, opts: o, logger: o.Logger, tools: &mcpTools{p: p, runner: o.Runner, runs: o.Runs, knowledge: o.Knowledge,
		logger: o.Logger, version: o.Version, cache: mcp.NewSchemaCache()}}
	switch o.Auth {
	case AuthNone:
	case AuthOAuth:
		if len(o.TokenKey) != ed25519.PrivateKeySize {
			return nil, errors.New("mcpserver: Options.TokenKey is not set: derive it from the master key with mcpserver.DeriveTokenKey")
		}
		if o.OAuthClients == nil {
			return nil, errors.New("mcpserver: Options.OAuthClients is not set: pass the store's OAuth clients (store.Store.OAuthClients)")
		}
		var err error
		if m.issuer, err = newIssuer(o.TokenKey, o.OAuthClients); err != nil {
			return nil, err
		}
		if o.JWKSURL != "" {
			if o.Issuer == "" {
				return nil, errors.New("mcpserver: Options.JWKSURL is set without Issuer: name the outside authorization server's issuer")
			}
			client := o.HTTPClient
			if client == nil {
				client = &http.Client{Timeout: 10 * time.Second}
			}
			m.jwks = &jwksCache{url: o.JWKSURL, client: client}
		}
	default:
		return nil, fmt.Errorf("mcpserver: Options.Auth %q is not %q or %q", o.Auth, AuthOAuth, AuthNone)
	}
	for _, origin := range o.AllowedOrigins {
		if u, err := url.Parse(origin); err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" {
			return nil, fmt.Errorf("mcpserver: Options.AllowedOrigins: %q is not an origin such as https://app.example.com", origin)
		}
	}
	m.mcp = mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		srv, _ := r.Context().Value(mcpServerKey{}).(*mcp.Server)
		return srv
	}, &mcp.StreamableHTTPOptions{Stateless: true, Logger: o.Logger, MaxRequestBodyBytes: o.MaxBodyBytes})
	return m, nil
}

// Mounts are the server's routes. None is behind API-key auth: /mcp
// checks bearer tokens of its own, and the token endpoint and metadata
// are public.
func (m *Server) Mounts() []httpapi.Mount {
	mounts := []httpapi.Mount{
		{Pattern: mcpPath, Handler: http.HandlerFunc(m.serveMCP)},
		{Pattern: "GET /.well-known/oauth-protected-resource", Handler: http.HandlerFunc(m.resourceMetadata)},
		{Pattern: "GET /.well-known/oauth-protected-resource" + mcpPath, Handler: http.HandlerFunc(m.resourceMetadata)},
	}
	if m.issuer != nil {
		mounts = append(mounts,
			httpapi.Mount{Pattern: "/oauth/token", Handler: http.HandlerFunc(m.token)},
			httpapi.Mount{Pattern: "GET /.well-known/jwks.json", Handler: http.HandlerFunc(m.serveJWKS)},
			httpapi.Mount{Pattern: "GET /.well-known/oauth-authorization-server", Handler: http.HandlerFunc(m.authServerMetadata)})
	}
	return mounts
}

type mcpServerKey struct{}

// base is the server's root URL as clients reach it.
func (m *Server) base(r *http.Request) string {
	if m.opts.BaseURL != "" {
		return strings.TrimSuffix(m.opts.BaseURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (m *Server) resourceMetadataURL(r *http.Request) string {
	return m.base(r) + "/.well-known/oauth-protected-resource"
}

// resourceMetadata serves RFC 9728 metadata of /mcp.
func (m *Server) resourceMetadata(w http.ResponseWriter, r *http.Request) {
	base := m.base(r)
	var servers []string
	if m.issuer != nil {
		servers = append(servers, base)
	}
	if m.jwks != nil {
		servers = append(servers, m.opts.Issuer)
	}
	w.Header().Set("Access-Control-Allow-Origin", "*")
	httpapi.WriteJSON(w, http.StatusOK, &oauthex.ProtectedResourceMetadata{
		Resource:               base + mcpPath,
		AuthorizationServers:   servers,
		ScopesSupported:        scopesSupported,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "AgentCraft MCP server",
	})
}

// serveMCP serves /mcp: DNS-rebinding checks, the bearer token, the
// scope of a tools/call, then the SDK's stateless streamable handler with
// a server holding the tools the token may see.
func (m *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	if msg := m.checkOrigin(r); msg != "" {
		httpapi.WriteJSON(w, http.StatusForbidden, map[string]string{"error": "forbidden", "error_description": msg})
		return
	}
	var (
		ws     store.Workspace
		scopes scopeSet
		sub    tokenSubject
	)
	if m.opts.Auth == AuthNone {
		ws, scopes = m.p.DefaultWorkspace(), scopeSet{all: true}
	} else {
		token, ok := httpapi.Bearer(r.Header.Get("Authorization"))
		if !ok {
			m.unauthorized(w, r, "no bearer token: get one from POST /oauth/token (client_credentials) and send Authorization: Bearer <token>")
			return
		}
		var err error
		ws, scopes, sub, err = m.verify(r, token)
		if err != nil {
			var ue unavailableError
			if errors.As(err, &ue) {
				m.logger.Error("mcp_token_check_failed", "error", err)
				httpapi.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "temporarily_unavailable", "error_description": "cannot check the token now; try again"})
				return
			}
			m.unauthorized(w, r, err.Error())
			return
		}
	}

	if r.Method == http.MethodPost && r.Body != nil {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, m.opts.MaxBodyBytes))
		if err != nil {
			httpapi.WriteJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"error": "request_too_large",
				"error_description": fmt.Sprintf("the request body exceeds %d bytes", m.opts.MaxBodyBytes)})
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if need := neededScope(body, scopes); need != "" {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q`, need, m.resourceMetadataURL(r)))
			httpapi.WriteJSON(w, http.StatusForbidden, map[string]string{"error": "insufficient_scope",
				"error_description": "the token lacks scope " + need + " for this tool: ask for a client with it (`agentcraft mcp clients create --scopes`)"})
			return
		}
	}
	ctx := r.Context()
	caller, err := m.caller(ctx, ws.ID, sub)
	if err != nil {
		m.logger.Error("mcp_token_check_failed", "workspace_id", ws.ID, "error", err)
		httpapi.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "temporarily_unavailable", "error_description": "cannot check the token now; try again"})
		return
	}
	srv, err := m.tools.server(ctx, caller, scopes)
	if err != nil {
		m.logger.Error("mcp_tools_failed", "workspace_id", ws.ID, "error", err)
		httpapi.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "temporarily_unavailable", "error_description": "cannot list the workspace's tools now; try again"})
		return
	}
	m.mcp.ServeHTTP(w, r.WithContext(context.WithValue(ctx, mcpServerKey{}, srv)))
}

// caller is the principal the request's runs act for: the system without
// authentication; the OAuth client of one of AgentCraft's own tokens
// (client credentials: no user); for an outside issuer's token, the
// AgentCraft user its (issuer, subject) is linked to (Options.Users) while
// that user is an enabled member of the workspace, and otherwise the
// subject itself (run.ActorExternal), acting for no user.
func (m *Server) caller(ctx context.Context, workspaceID string, sub tokenSubject) (run.Principal, error) {
	p := run.Principal{WorkspaceID: workspaceID}
	switch {
	case m.opts.Auth == AuthNone:
		p.Actor, p.ActorID = run.ActorSystem, "mcp-no-auth"
	case sub.client != "":
		p.Actor, p.ActorID = run.ActorOAuthClient, sub.client
	default:
		userID, err := m.linkedUser(ctx, workspaceID, sub)
		if err != nil {
			return run.Principal{}, err
		}
		if userID != "" {
			p.Actor, p.ActorID, p.UserID = run.ActorUser, userID, userID
		} else {
			p.Actor, p.ActorID = run.ActorExternal, sub.issuer+"#"+sub.subject
		}
	}
	return p, nil
}

// linkedUser is the id of the user sub is linked to, or "" when it is
// linked to none, or to a user who is disabled or not a member of the
// workspace: a person removed from a workspace must not reach their
// personal memories there through a token the outside issuer still signs.
func (m *Server) linkedUser(ctx context.Context, workspaceID string, sub tokenSubject) (string, error) {
	if m.opts.Users == nil {
		return "", nil
	}
	link, err := m.opts.Users.UserIdentities().Lookup(ctx, sub.issuer, sub.subject)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("look up the user of the token's subject: %w", err)
	}
	u, err := m.opts.Users.Users().Get(ctx, link.UserID)
	if errors.Is(err, store.ErrNotFound) || err == nil && u.DisabledAt != nil {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the token's user: %w", err)
	}
	if _, err := m.opts.Users.Members().Get(ctx, workspaceID, link.UserID); errors.Is(err, store.ErrNotFound) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("read the token's user's membership: %w", err)
	}
	return link.UserID, nil
}

// unauthorized answers 401 with the challenge MCP clients follow to the
// resource metadata (RFC 9728 §5.1).
func (m *Server) unauthorized(w http.ResponseWriter, r *http.Request, desc string) {
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata=%q, scope=%q, error="invalid_token", error_description=%q`,
		m.resourceMetadataURL(r), strings.Join(scopesSupported, " "), strings.ReplaceAll(desc, `"`, `'`)))
	httpapi.WriteJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_token", "error_description": desc})
}

// checkOrigin returns why r must be refused, or "". A browser page of
// another site must not drive /mcp with the user's network position (DNS
// rebinding): a request bound to loopback must name a loopback Host, and
// a browser Origin must be the server's own or an allowed one.
func (m *Server) checkOrigin(r *http.Request) string {
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil {
		if isLoopback(local.String()) && !isLoopback(r.Host) {
			return fmt.Sprintf("Host %q is not a loopback name while the server listens on loopback (DNS rebinding protection); reach it as 127.0.0.1 or localhost", r.Host)
		}
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	own := m.base(r)
	if strings.EqualFold(origin, own) || slices.ContainsFunc(m.opts.AllowedOrigins, func(o string) bool {
		return strings.EqualFold(strings.TrimSuffix(o, "/"), origin)
	}) {
		return ""
	}
	return fmt.Sprintf("Origin %q may not call /mcp: add it to mcp.allowed_origins in agentcraft.yaml if it is yours", origin)
}

// isLoopback reports whether hostport names a loopback address or
// localhost.
func isLoopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// unavailableError marks a verification that failed for want of the store
// or the outside key set, not because of the token.
type unavailableError struct{ err error }

func (e unavailableError) Error() string { return e.err.Error() }

var tokenAlgorithms = []jose.SignatureAlgorithm{jose.EdDSA, jose.ES256, jose.ES384, jose.ES512, jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512}

// tokenSubject is who a verified token names: one of AgentCraft's OAuth
// clients (client), or a subject of the outside issuer. They are kept
// apart so that no outside subject can pass for a client or a user id.
type tokenSubject struct {
	client          string
	issuer, subject string
}

// verify checks a bearer JWT: AgentCraft's own (iss is this server) or, with
// JWKSURL, an outside issuer's. It returns the workspace, the scopes and
// the subject.
func (m *Server) verify(r *http.Request, token string) (store.Workspace, scopeSet, tokenSubject, error) {
	ctx := r.Context()
	tok, err := jwt.ParseSigned(token, tokenAlgorithms)
	if err != nil {
		return store.Workspace{}, scopeSet{}, tokenSubject{}, errors.New("the bearer token is not a signed JWT")
	}
	var peek tokenClaims
	if err := tok.UnsafeClaimsWithoutVerification(&peek); err != nil {
		return store.Workspace{}, scopeSet{}, tokenSubject{}, errors.New("the bearer token's claims do not decode")
	}
	base := m.base(r)
	var (
		c        tokenClaims
		expected jwt.Expected
		own      = peek.Issuer == base
	)
	switch {
	case own:
		if err := tok.Claims(m.issuer.key.Public(), &c); err != nil {
			return store.Workspace{}, scopeSet{}, tokenSubject{}, errors.New("the token's signature does not verify")
		}
		expected = jwt.Expected{Issuer: base, AnyAudience: jwt.Audience{base + mcpPath}}
	case m.jwks != nil && peek.Issuer == m.opts.Issuer:
		var kid string
		if len(tok.Headers) > 0 {
			kid = tok.Headers[0].KeyID
		}
		key, err := m.jwks.key(ctx, kid)
		if err != nil {
			return store.Workspace{}, scopeSet{}, tokenSubject{}, unavailableError{err}
		}
		if err := tok.Claims(key.Key, &c); err != nil {
			return store.Workspace{}, scopeSet{}, tokenSubject{}, errors.New("the token's signature does not verify against the issuer's key set")
		}
		aud := m.opts.Audience
		if aud == "" {
			aud = base + mcpPath
		}
		expected = jwt.Expected{Issuer: m.opts.Issuer, AnyAudience: jwt.Audience{aud}}
	default:
		return store.Workspace{}, scopeSet{}, tokenSubject{}, fmt.Errorf("the token's issuer %q is not trusted here", peek.Issuer)
	}
	if c.Expiry == nil {
		return store.Workspace{}, scopeSet{}, tokenSubject{}, errors.New("the token has no expiry (exp)")
	}
	expected.Time = time.Now()
	if err := c.ValidateWithLeeway(expected, 30*time.Second); err != nil {
		switch {
		case errors.Is(err, jwt.ErrExpired):
			return store.Workspace{}, scopeSet{}, tokenSubject{}, errors.New("the token has expired; get a new one")
		case errors.Is(err, jwt.ErrInvalidAudience):
			return store.Workspace{}, scopeSet{}, tokenSubject{}, errors.New("the token is not meant for this resource (aud)")
		case errors.Is(err, jwt.ErrInvalidIssuer):
			return store.Workspace{}, scopeSet{}, tokenSubject{}, errors.New("the token's issuer is not trusted here")
		}
		return store.Workspace{}, scopeSet{}, tokenSubject{}, fmt.Errorf("the token is not valid now: %v", err)
	}

	sc := scopeSet{scopes: c.scopes()}
	if own {
		cl, err := m.issuer.client(ctx, c.Subject)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return store.Workspace{}, scopeSet{}, tokenSubject{}, errors.New("the token's client no longer exists")
		case err != nil:
			return store.Workspace{}, scopeSet{}, tokenSubject{}, unavailableError{err}
		case cl.RevokedAt != nil:
			return store.Workspace{}, scopeSet{}, tokenSubject{}, errors.New("the token's client was revoked")
		case cl.WorkspaceID != c.Workspace:
			return store.Workspace{}, scopeSet{}, tokenSubject{}, errors.New("the token's workspace is not its client's")
		}
		ws, err := m.p.Workspace(ctx, c.Workspace)
		if err != nil {
			return store.Workspace{}, scopeSet{}, tokenSubject{}, unavailableError{err}
		}
		return ws, sc, tokenSubject{client: c.Subject}, nil
	}
	sub := tokenSubject{issuer: c.Issuer, subject: c.Subject}
	if c.Workspace == "" {
		return m.p.DefaultWorkspace(), sc, sub, nil
	}
	ws, err := m.p.WorkspaceByName(ctx, c.Workspace)
	if errors.Is(err, store.ErrNotFound) {
		return store.Workspace{}, scopeSet{}, tokenSubject{}, fmt.Errorf("the token's workspace %q does not exist", c.Workspace)
	}
	if err != nil {
		return store.Workspace{}, scopeSet{}, tokenSubject{}, unavailableError{err}
	}
	return ws, sc, sub, nil
}

// neededScope peeks at a JSON-RPC body (one message or a batch) and returns
// the scope a tools/call in it needs and scopes lacks, or "". The SDK
// answers a refused call only inside JSON-RPC; clients learn to ask for
// more scope from an HTTP 403 with WWW-Authenticate, so the check runs
// here, before the SDK sees the body.
func neededScope(body []byte, scopes scopeSet) string {
	if scopes.all {
		return ""
	}
	type message struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	var msgs []message
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if json.Unmarshal(trimmed, &msgs) != nil {
			return ""
		}
	} else {
		var one message
		if json.Unmarshal(trimmed, &one) != nil {
			return "" // the SDK answers the parse error
		}
		msgs = []message{one}
	}
	for _, msg := range msgs {
		if msg.Method != "tools/call" {
			continue
		}
		name := msg.Params.Name
		switch {
		case name == toolDocsearch:
			if !scopes.has(ScopeDocsearchSearch) {
				return ScopeDocsearchSearch
			}
		case strings.HasPrefix(name, agentToolPrefix):
			if a := strings.TrimPrefix(name, agentToolPrefix); !scopes.agent(a) {
				return "agents/" + a
			}
		case strings.HasPrefix(name, workflowToolPrefix):
			if wf := strings.TrimPrefix(name, workflowToolPrefix); !scopes.workflow(wf) {
				return "workflows/" + wf
			}
		}
	}
	return ""
}
