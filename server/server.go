// Package server is AgentCraft's HTTP front: one http.Handler with the
// OpenAI-compatible API (/v1), the management API (/api), health checks,
// authentication by API key, body limits and error mapping. Other surfaces
// (server/mcpserver at /mcp, server/a2aserver at /a2a) are packages of
// their own, which the composition root hands to Options.Mounts; this
// package imports none of them.
//
//	h, err := server.New(platform, &server.Options{Auth: server.AuthAPIKey})
//	http.ListenAndServe(addr, h)
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/autonomous"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/internal/metrics"
	"github.com/agentcraftlab/agentcraft/internal/tracing"
	"github.com/agentcraftlab/agentcraft/kb"
	"github.com/agentcraftlab/agentcraft/memory"
	"github.com/agentcraftlab/agentcraft/task"
	"github.com/agentcraftlab/agentcraft/trigger"

	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/run"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/server/openaiapi"
)

// Authentication modes.
const (
	// AuthAPIKey requires Authorization: Bearer <key> on every API call.
	AuthAPIKey = httpapi.AuthAPIKey
	// AuthNone serves every request as the default workspace. Only for
	// trusted private networks.
	AuthNone = httpapi.AuthNone
)

// Options configure a Server.
type Options struct {
	// Auth is AuthAPIKey (default) or AuthNone.
	Auth string
	// MaxBodyBytes caps request bodies. Default 8 MiB.
	MaxBodyBytes int64
	// Version is reported by /health.
	Version string
	// Logger receives operational logs. Default: discard.
	Logger *slog.Logger
	// Runs executes workflows; nil leaves the workflow API answering 503.
	Runs *controlplane.Service
	// Plans is the execution memory of Flow plans: the planner gets the
	// closest remembered plan as a reference, and a crystallized run's
	// plan is remembered. Nil: plans are neither recalled nor kept.
	Plans *autonomous.Memory
	// Tasks is the task control plane (requests, approvals,
	// compensation); nil leaves the task API answering 503.
	Tasks *task.Service
	// SSEKeepAlive is how often a quiet run event stream sends a comment
	// so that proxies keep it open. Default 15 s.
	SSEKeepAlive time.Duration
	// Knowledge serves knowledge bases, uploads and chat attachments; nil
	// leaves /api/kbs and /api/upload answering 503.
	Knowledge *kb.Service
	// Attachments resolves the files of /v1 and /api/chat; give the same
	// value to the other chat surfaces (aguiserver.Options.Attachments)
	// so they share temporary bases. Default with Knowledge:
	// NewAttachments(Knowledge).
	Attachments *Attachments
	// EnqueueIngest queues an ingest job (store.IngestJob) for a worker.
	// Required with Knowledge.
	EnqueueIngest func(ctx context.Context, workspaceID, jobID string) error
	// MaxUploadBytes caps one uploaded file. Default DefaultMaxUploadBytes.
	MaxUploadBytes int64
	// Runner runs agents for every surface. Default: run.New(p, nil).
	Runner *run.Runner
	// KeyTTL is how long a checked API key is answered from memory (a
	// revocation by another process takes up to it to be noticed).
	// Default httpapi.DefaultKeyTTL; negative: every request reads the
	// store.
	KeyTTL time.Duration
	// Conversations serves /api/conversations and lets /api/chat and
	// /v1/chat/completions continue threads; nil leaves them answering
	// 503 (and a chat naming a conversation a 400). Give Runner the same
	// service (run.Options.Conversations).
	Conversations *memory.Conversations
	// Memories serves /api/memories; nil leaves it answering 503.
	Memories *memory.Memories
	// Identity signs people in: browser sessions (the agentcraft_session
	// cookie) beside API keys, and the routes of /api/auth, /api/me,
	// /api/workspaces and /auth. Nil: API keys only, and those routes
	// answer 503.
	Identity *identity.Service
	// OIDC signs people in through OpenID Connect providers at
	// /auth/oidc/{provider}; nil: none. Needs Identity.
	OIDC *identity.OIDC
	// SecureCookies marks the session cookie Secure even when a request
	// arrives over plain HTTP (TLS ends at a proxy in front). Requests
	// over TLS always get Secure cookies.
	SecureCookies bool
	// Mounts are further surfaces served beside /v1 and /api, such as
	// /mcp (server/mcpserver) and /a2a (server/a2aserver); a mount with
	// Permission set is behind the same authentication. Their
	// patterns must not collide with each other or with the API's.
	Mounts []httpapi.Mount
	// Retention serves GET and PUT /api/retention (the server's
	// retention policy and the workspace's overrides); nil answers 503.
	Retention *Retention
	// Studio answers every path the API and the mounts do not serve,
	// such as "/" and the web app's client routes (server/studio's
	// Handler). Paths under the API's own prefixes (/api, /v1, /auth and
	// the mounts' first segments) never reach it and keep answering JSON
	// 404s. Nil: every unknown path is a JSON 404.
	Studio http.Handler
	// Metrics counts and times every request by the route pattern that
	// served it (internal/metrics). Serving /metrics is the composition
	// root's choice (a Mount, or a listener of its own). Default nil.
	Metrics *metrics.Metrics
	// Triggers serves /api/triggers and the webhooks at POST /hooks/{id};
	// nil leaves them answering 503.
	Triggers *trigger.Service
	// MaxWebhookBytes caps a webhook body (413 past it, checked before
	// the signature). Default DefaultMaxWebhookBytes (1 MiB).
	MaxWebhookBytes int64
	// WebhookReplayWindow is how far a webhook's X-AgentCraft-Timestamp
	// may be from now. Default trigger.DefaultReplayWindow (5 min).
	WebhookReplayWindow time.Duration
}

// Server is the HTTP handler of the whole API.
type Server struct {
	p       *platform.Platform
	opts    Options
	logger  *slog.Logger
	mux     *http.ServeMux
	auth    *httpapi.Authenticator
	routes  []httpapi.Route
	mounts  []httpapi.Mount
	handler http.Handler
	runner  *run.Runner
	// attach is the chat attachments of /v1 and /api/chat; nil without
	// knowledge search.
	attach *Attachments
}

// New returns the API handler for p.
func New(p *platform.Platform, opts *Options) (*Server, error) {
	s := &Server{p: p, mux: http.NewServeMux()}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Auth == "" {
		s.opts.Auth = AuthAPIKey
	}
	if s.opts.MaxBodyBytes <= 0 {
		s.opts.MaxBodyBytes = 8 << 20
	}
	if s.opts.MaxUploadBytes <= 0 {
		s.opts.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if s.opts.Knowledge != nil && s.opts.EnqueueIngest == nil {
		return nil, errors.New("server: Options.Knowledge is set without Options.EnqueueIngest: ingest jobs would never run")
	}
	if s.opts.MaxWebhookBytes <= 0 {
		s.opts.MaxWebhookBytes = DefaultMaxWebhookBytes
	}
	if s.opts.SSEKeepAlive <= 0 {
		s.opts.SSEKeepAlive = 15 * time.Second
	}
	s.logger = s.opts.Logger
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.auth = httpapi.NewAuthenticator(p, &httpapi.AuthOptions{Mode: s.opts.Auth, KeyTTL: s.opts.KeyTTL, Identity: s.opts.Identity, Logger: s.logger})
	s.runner = s.opts.Runner
	if s.runner == nil {
		s.runner = run.New(p, nil)
	}

	s.mux.HandleFunc("GET /health", s.health)
	s.mux.HandleFunc("GET /ready", s.ready)
	api := http.NewServeMux()
	oa := &openaiapi.Options{MaxBodyBytes: s.opts.MaxBodyBytes, Logger: s.logger, Runs: s.opts.Runs, Runner: s.runner,
		Conversations: s.opts.Conversations}
	if s.opts.Knowledge != nil {
		s.attach = s.opts.Attachments
		if s.attach == nil {
			s.attach = NewAttachments(s.opts.Knowledge)
		}
		oa.Attachments = s.attach
	}
	s.routes = append(s.routes, openaiapi.New(p, oa).Routes()...)
	s.registerKnowledge()
	s.registerManagement()
	s.registerSkills()
	s.registerWorkflows()
	s.registerPlanner()
	s.registerSafety()
	s.registerAudit()
	s.registerRetention()
	s.registerWorkers()
	s.registerTasks()
	s.registerChat()
	s.registerConversations()
	s.registerPeople()
	s.registerTriggers()
	for _, rt := range s.routes {
		api.Handle(rt.Pattern, s.auth.Require(rt))
	}
	// An unknown route is a 404 only to a caller who may read: the API's
	// shape is no business of strangers.
	api.Handle("/", s.auth.Authenticate(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		apierr.Write(w, apierr.NotFound("not_found", "no route "+r.Method+" "+r.URL.Path))
	})))
	s.mux.Handle("/v1/", api)
	s.mux.Handle("/api/", api)
	s.mux.Handle("/auth/", api)
	s.mux.Handle("/hooks/", api)
	for i, m := range s.opts.Mounts {
		if err := s.mount(m); err != nil {
			return nil, fmt.Errorf("server: Options.Mounts[%d]: %w", i, err)
		}
	}
	reserved := s.reservedPrefixes()
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if s.opts.Studio != nil && !underAny(r.URL.Path, reserved) {
			s.opts.Studio.ServeHTTP(w, r)
			return
		}
		apierr.Write(w, apierr.NotFound("not_found", "no route "+r.Method+" "+r.URL.Path+"; the API lives under /v1 and /api"))
	})
	// One span per request and its metrics, both named by the route that
	// served it (internal/tracing: a pass-through while tracing is off;
	// internal/metrics). Both sit inside collapseSlashes: the request they
	// hand on is the one the mux marks with the matched pattern.
	s.handler = collapseSlashes(tracing.Handler(s.opts.Metrics.HTTP(s.mux)))
	return s, nil
}

// reservedPrefixes are the first path segments the server's own surfaces
// answer: the API's, the probes', and each mount's (/mcp, /a2a, /agui …).
// A path under one that no route matched is an unknown API call, answered
// with a JSON 404 rather than the studio's page.
func (s *Server) reservedPrefixes() []string {
	out := []string{"/api", "/v1", "/auth", "/hooks", "/health", "/ready", "/oauth", "/.well-known", "/mcp", "/a2a", "/agui"}
	for _, m := range s.mounts {
		p := m.Pattern
		if _, after, ok := strings.Cut(p, " "); ok {
			p = after
		}
		if i := strings.IndexByte(p, '/'); i > 0 {
			p = p[i:] // a host-qualified pattern
		}
		seg, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
		if seg != "" && !strings.ContainsAny(seg, "{}") && !slices.Contains(out, "/"+seg) {
			out = append(out, "/"+seg)
		}
	}
	return out
}

// underAny reports whether path is one of prefixes or below one.
func underAny(path string, prefixes []string) bool {
	for _, pre := range prefixes {
		if path == pre || strings.HasPrefix(path, pre+"/") {
			return true
		}
	}
	return false
}

// mount registers m on the mux. ServeMux panics on a malformed or
// colliding pattern; that is the caller's input, so it becomes an error.
func (s *Server) mount(m httpapi.Mount) (err error) {
	if m.Handler == nil {
		return fmt.Errorf("pattern %q has no handler", m.Pattern)
	}
	h := m.Handler
	if m.Permission != "" {
		h = s.auth.Require(httpapi.Route{Pattern: m.Pattern, Permission: m.Permission, Handler: h})
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("pattern %q: %v", m.Pattern, r)
		}
	}()
	s.mux.Handle(m.Pattern, h)
	s.mounts = append(s.mounts, m)
	return nil
}

// handle adds a route of the workspace API needing perm.
func (s *Server) handle(pattern string, perm identity.Permission, h http.HandlerFunc) {
	s.routes = append(s.routes, httpapi.Route{Pattern: pattern, Permission: perm, Handler: h})
}

// handleAccess adds a route open to access (a person, or anyone).
func (s *Server) handleAccess(pattern string, access httpapi.Access, h http.HandlerFunc) {
	s.routes = append(s.routes, httpapi.Route{Pattern: pattern, Access: access, Handler: h})
}

// Routes is the route table: every route of /v1, /api and /auth with the
// access and permission it needs, then the mounts behind the same
// authentication (a mount that authenticates its callers itself, such as
// /mcp, is listed with AccessPublic). Tests walk it.
func (s *Server) Routes() []httpapi.Route {
	out := slices.Clone(s.routes)
	for _, m := range s.mounts {
		rt := httpapi.Route{Pattern: m.Pattern, Permission: m.Permission, Handler: m.Handler}
		if m.Permission == "" {
			rt.Access = httpapi.AccessPublic
		}
		out = append(out, rt)
	}
	return out
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Stop waits for background work (key-use bookkeeping). Idempotent.
func (s *Server) Stop() {
	s.auth.Stop()
}

// collapseSlashes turns //v1//chat/completions into /v1/chat/completions:
// some clients join a base URL ending in / with a path starting with /.
// ServeMux would otherwise answer with a redirect that POST clients do not
// follow.
func collapseSlashes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "//") {
			r2 := r.Clone(r.Context())
			p := r.URL.Path
			for strings.Contains(p, "//") {
				p = strings.ReplaceAll(p, "//", "/")
			}
			r2.URL.Path = p
			r2.URL.RawPath = ""
			r = r2
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok", "version": s.opts.Version})
}

func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.p.Ready(ctx); err != nil {
		s.logger.WarnContext(r.Context(), "ready_check_failed", "error", err)
		httpapi.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "database": "unreachable"})
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "ready", "database": "ok"})
}
