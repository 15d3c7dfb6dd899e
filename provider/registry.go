package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentcraftlab/agentcraft/audit"
	"github.com/agentcraftlab/agentcraft/internal/tracing"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/anthropic"
	"github.com/agentcraftlab/agentcraft/llm/middleware"
	"github.com/agentcraftlab/agentcraft/llm/openai"
	"github.com/agentcraftlab/agentcraft/secret"
	"github.com/agentcraftlab/agentcraft/store"
)

// Provider origins.
const (
	OriginConfig    = "config"    // agentcraft.yaml
	OriginDetected  = "detected"  // found at start: env keys or a local Ollama
	OriginWorkspace = "workspace" // created through the API for one workspace
)

// Info describes a provider as the API shows it: never its key.
type Info struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	BaseURL string   `json:"base_url,omitempty"`
	Origin  string   `json:"origin"`
	Models  []string `json:"models,omitempty"`
	// HasKey says whether a key is configured or stored for the workspace.
	HasKey bool `json:"has_key"`
}

// Entry is one provider of a Registry: its adapters, its settings and the
// provider-level middleware chain its agents share.
type Entry struct {
	info      Info
	staticKey bool
	// adapters are the provider's adapters (each wrapped in metered),
	// one per workspace when the key is the workspace's stored one.
	adapters *adapters
	settings middleware.Settings
	// shared is the provider-level chain, built once so that its rate
	// limiter is one bucket for every agent that does not set its own;
	// limiter is that bucket alone (nil when rate limiting is off).
	shared  []llm.Middleware
	limiter llm.Middleware
	// updated is the store row's UpdatedAt for workspace providers, to
	// notice edits made by other processes.
	updated time.Time
}

// Name is the provider's name, as agents' models name it.
func (e *Entry) Name() string { return e.info.Name }

// Info describes the provider as the API shows it. HasKey reports a
// configured key only; Registry.Providers adds the workspace's stored one.
func (e *Entry) Info() Info { return e.info }

// Adapter returns the provider's adapter for the workspace: it sends the
// workspace's stored credential unless the provider has a configured key.
func (e *Entry) Adapter(workspaceID string) (llm.Model, error) {
	return e.adapters.forWorkspace(workspaceID)
}

// Settings are the provider's middleware settings.
func (e *Entry) Settings() middleware.Settings { return e.settings }

// Shared is the provider-level middleware chain, built once; its rate
// limiter (if on) is one bucket for every agent that uses the chain.
func (e *Entry) Shared() []llm.Middleware { return e.shared }

// Limiter is the shared chain's rate limiter alone, nil when rate
// limiting is off: an agent that builds its own chain but keeps the
// provider's rate limit puts it first.
func (e *Entry) Limiter() llm.Middleware { return e.limiter }

// Options configure a Registry.
type Options struct {
	// Providers come from agentcraft.yaml.
	Providers []Config
	// Detect looks for OPENAI_API_KEY, ANTHROPIC_API_KEY and a local
	// Ollama when Providers is empty. Default false.
	Detect bool
	// OllamaURL is probed by detection. Default http://127.0.0.1:11434/v1.
	OllamaURL string
	// Getenv reads the environment for detection. Default os.Getenv.
	Getenv func(string) string
	// Logger receives operational logs. Default: discard.
	Logger *slog.Logger
	// Audit receives the credential events and, through the shared
	// middleware chains, the guard and PII events. Default: none.
	Audit func(context.Context, store.AuditEvent)
}

// Registry holds the providers a workspace can use. Create it with New.
type Registry struct {
	store  store.Store
	logger *slog.Logger
	http   *http.Client
	creds  *credentials
	audit  func(context.Context, store.AuditEvent)
	// global holds config and detected providers; written only in New.
	global map[string]*Entry

	mu sync.Mutex // guards wsProviders
	// wsProviders are the workspaces' own providers by workspace id and
	// name.
	wsProviders map[string]*Entry
}

// New builds the configured providers (detecting some when none are
// configured and opts.Detect is set). Stored keys are sealed with box.
func New(ctx context.Context, st store.Store, box *secret.Box, opts *Options) (*Registry, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.OllamaURL == "" {
		o.OllamaURL = defaultOllamaURL
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Audit == nil {
		o.Audit = func(context.Context, store.AuditEvent) {}
	}
	r := &Registry{
		store:       st,
		logger:      o.Logger,
		http:        newHTTPClient(),
		creds:       newCredentials(st.Credentials(), box),
		audit:       o.Audit,
		global:      map[string]*Entry{},
		wsProviders: map[string]*Entry{},
	}
	for _, cp := range o.Providers {
		if err := r.addGlobalProvider(cp, OriginConfig, nil); err != nil {
			return nil, err
		}
	}
	if len(o.Providers) == 0 && o.Detect {
		r.detectProviders(ctx, o.Getenv, o.OllamaURL)
	}
	if len(r.global) == 0 {
		r.logger.Warn("no_model_reachable", "reason", "no providers configured and none detected (OPENAI_API_KEY, ANTHROPIC_API_KEY, Ollama at "+o.OllamaURL+")",
			"fix", "add providers to agentcraft.yaml or store a key with POST /api/credentials; /v1/models stays empty until an agent has a provider")
	}
	return r, nil
}

// auditSafety is the shared chains' audit sink (middleware.BuildOptions.Audit).
func (r *Registry) auditSafety(ctx context.Context, action string, details map[string]any) {
	r.audit(ctx, store.AuditEvent{Action: action, Details: audit.Details(details)})
}

// PutCredential stores an API key for a provider, sealed. A provider name
// that is not configured but names an adapter type ("openai",
// "anthropic") creates that provider for the workspace with the type's
// default endpoint.
//
// Precedence: a key configured for the provider (agentcraft.yaml or a
// detected environment key) wins over a stored one. Storing a key for
// such a provider still succeeds, so that it applies once the configured
// key is removed, but warning says it has no effect now (and it is
// logged).
func (r *Registry) PutCredential(ctx context.Context, workspaceID, providerName, key string) (warning string, err error) {
	if pr, ok := r.global[providerName]; !ok {
		_, err := r.store.Providers().GetByName(ctx, workspaceID, providerName)
		switch {
		case errors.Is(err, store.ErrNotFound):
			if !isProviderType(providerName) {
				return "", fmt.Errorf("%w %q: name a configured provider (%v) or a provider type (openai, anthropic)", ErrUnknown, providerName, r.Names(ctx, workspaceID))
			}
			if _, err := r.store.Providers().Create(ctx, store.Provider{WorkspaceID: workspaceID, Name: providerName, Type: providerName, Source: store.SourceAPI}); err != nil && !errors.Is(err, store.ErrConflict) {
				return "", err
			}
		case err != nil:
			return "", err
		}
	} else if pr.staticKey {
		warning = fmt.Sprintf("provider %q has a key in the server's configuration (%s), which takes precedence: the stored key is kept but not used while that key is configured", providerName, pr.info.Origin)
		r.logger.Warn("stored_credential_ignored", "workspace_id", workspaceID, "provider", providerName,
			"reason", "the provider has a configured key, which takes precedence")
	}
	if err := r.creds.put(ctx, workspaceID, providerName, key); err != nil {
		return "", err
	}
	r.audit(ctx, store.AuditEvent{WorkspaceID: workspaceID, Action: "credential.put", Target: "provider:" + providerName})
	return warning, nil
}

// DeleteCredential removes the workspace's stored key for a provider;
// store.ErrNotFound when none is stored. Requests after it go out without
// the key (other processes notice within the credential cache's 10 s).
func (r *Registry) DeleteCredential(ctx context.Context, workspaceID, providerName string) error {
	if err := r.creds.remove(ctx, workspaceID, providerName); err != nil {
		return err
	}
	r.audit(ctx, store.AuditEvent{WorkspaceID: workspaceID, Action: "credential.delete", Target: "provider:" + providerName})
	return nil
}

func isProviderType(s string) bool { return slices.Contains(providerTypes, s) }

// providerTypes are the adapters that exist.
var providerTypes = []string{"openai", "anthropic"}

// newHTTPClient is the client every adapter shares. The idle pool is sized
// for many concurrent streams to one upstream: the default of 2 idle
// connections per host would close and reopen connections under load.
// Each connection's buffers are 1 KB instead of 4: a streamed chunk is a
// few hundred bytes, bodies larger than a buffer bypass it, and every open
// stream holds one connection (BenchmarkGatewayOverhead/idle). While
// tracing is on, each request carries the traceparent of its model call's
// span.
func newHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 1024
	t.MaxIdleConnsPerHost = 512
	t.IdleConnTimeout = 90 * time.Second
	t.ReadBufferSize = 1 << 10
	t.WriteBufferSize = 1 << 10
	// Requests carry the W3C traceparent of the model call's span.
	return &http.Client{Transport: tracing.Transport(t)}
}

// adapterSpec is what a provider's adapters are built from.
type adapterSpec struct {
	name, typ, baseURL, apiKey string
	timeout                    time.Duration
}

// adapters builds a provider's adapter for each workspace that uses it.
// A provider with a configured key has one adapter for everyone. One
// without sends each workspace's stored credential: its adapter for a
// workspace carries that workspace id in its HTTP transport, bound when
// the agent is built, so the key is found for whoever runs the agent — an
// HTTP request, a queue worker or a scheduled job — with no context value
// to forget.
type adapters struct {
	spec  adapterSpec
	build func(spec adapterSpec, workspaceID string) (llm.Model, error)

	mu sync.Mutex // guards byWS
	// byWS is the adapter per workspace id ("" for a provider with a
	// configured key).
	byWS map[string]llm.Model
}

// forWorkspace returns the adapter that sends workspaceID's credential.
func (a *adapters) forWorkspace(workspaceID string) (llm.Model, error) {
	if a.spec.apiKey != "" {
		workspaceID = ""
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if m, ok := a.byWS[workspaceID]; ok {
		return m, nil
	}
	m, err := a.build(a.spec, workspaceID)
	if err != nil {
		return nil, err
	}
	if a.byWS == nil {
		a.byWS = map[string]llm.Model{}
	}
	a.byWS[workspaceID] = m
	return m, nil
}

func (r *Registry) newAdapters(name, typ, baseURL, apiKey string, timeout time.Duration) (*adapters, error) {
	a := &adapters{spec: adapterSpec{name: name, typ: typ, baseURL: baseURL, apiKey: apiKey, timeout: timeout}, build: r.buildAdapter}
	// Build one now so that a bad type or URL fails at start, not at
	// the first request.
	if _, err := a.forWorkspace(""); err != nil {
		return nil, err
	}
	return a, nil
}

func (r *Registry) buildAdapter(spec adapterSpec, workspaceID string) (llm.Model, error) {
	hc := &http.Client{Transport: &credentialTransport{
		base:        r.http.Transport,
		provider:    spec.name,
		typ:         spec.typ,
		workspaceID: workspaceID,
		creds:       r.creds,
	}}
	if spec.apiKey != "" {
		hc = &http.Client{Transport: r.http.Transport}
	}
	timeout := spec.timeout
	if timeout == 0 {
		timeout = 10 * time.Minute
	}
	var m llm.Model
	switch spec.typ {
	case "openai":
		c, err := openai.New(&openai.Options{Name: spec.name, BaseURL: spec.baseURL, APIKey: spec.apiKey, HTTPClient: hc, Timeout: timeout})
		if err != nil {
			return nil, err
		}
		m = c
	case "anthropic":
		c, err := anthropic.New(&anthropic.Options{Name: spec.name, BaseURL: spec.baseURL, APIKey: spec.apiKey, HTTPClient: hc, Timeout: timeout})
		if err != nil {
			return nil, err
		}
		m = c
	default:
		return nil, fmt.Errorf("provider %q: type %q is not one of %s", spec.name, spec.typ, strings.Join(providerTypes, ", "))
	}
	// The model-call span sits right above the metered adapter: one span
	// per attempt, recording what the provider was sent (tracing.go).
	return traceModel(spec, metered{next: m}), nil
}

func (r *Registry) addGlobalProvider(cp Config, origin string, models []string) error {
	m, err := r.newAdapters(cp.Name, cp.Type, cp.BaseURL, cp.APIKey, cp.Timeout)
	if err != nil {
		return err
	}
	pr := &Entry{
		info:      Info{Name: cp.Name, Type: cp.Type, BaseURL: cp.BaseURL, Origin: origin, Models: models, HasKey: cp.APIKey != ""},
		staticKey: cp.APIKey != "",
		adapters:  m,
		settings:  cp.Middleware,
	}
	if err := cp.Middleware.Validate(); err != nil {
		return fmt.Errorf("provider %q: %w", cp.Name, err)
	}
	r.buildShared(pr)
	r.global[cp.Name] = pr
	return nil
}

// buildShared builds the provider-level chain once.
func (r *Registry) buildShared(pr *Entry) {
	logger := r.logger.With("provider", pr.info.Name)
	pr.shared = middleware.BuildWith(pr.settings, &middleware.BuildOptions{Logger: logger, Audit: r.auditSafety})
	if pr.settings.RateLimit.Enabled != nil && *pr.settings.RateLimit.Enabled {
		// Build puts the limiter first when it is on.
		pr.limiter = pr.shared[0]
	}
}

// detectProviders looks for OPENAI_API_KEY, ANTHROPIC_API_KEY and an
// Ollama server on 127.0.0.1:11434, as the zero-configuration promise says.
func (r *Registry) detectProviders(ctx context.Context, getenv func(string) string, ollamaURL string) {
	if k := getenv("OPENAI_API_KEY"); k != "" {
		if err := r.addGlobalProvider(Config{Name: "openai", Type: "openai", APIKey: k}, OriginDetected, nil); err == nil {
			r.logger.Info("provider_detected", "provider", "openai", "reason", "OPENAI_API_KEY is set")
		}
	}
	if k := getenv("ANTHROPIC_API_KEY"); k != "" {
		if err := r.addGlobalProvider(Config{Name: "anthropic", Type: "anthropic", APIKey: k}, OriginDetected, nil); err == nil {
			r.logger.Info("provider_detected", "provider", "anthropic", "reason", "ANTHROPIC_API_KEY is set")
		}
	}
	if ollamaURL == "" {
		return
	}
	models, err := listOllama(ctx, r.http, ollamaURL)
	if err != nil {
		r.logger.Info("provider_not_detected", "provider", "ollama", "url", ollamaURL, "error", err)
		return
	}
	if err := r.addGlobalProvider(Config{Name: "ollama", Type: "openai", BaseURL: ollamaURL}, OriginDetected, models); err == nil {
		r.logger.Info("provider_detected", "provider", "ollama", "url", ollamaURL, "models", len(models))
	}
}

// listOllama asks an OpenAI-compatible server for its models, briefly: a
// server that is not there must not delay start-up.
func listOllama(ctx context.Context, hc *http.Client, baseURL string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 800*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(baseURL, "/")+"/models", nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) {
			return nil, fmt.Errorf("nothing listens there")
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /models answered %d", resp.StatusCode)
	}
	var body struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 1<<20)).Decode(&body); err != nil {
		return nil, fmt.Errorf("decode /models: %w", err)
	}
	models := make([]string, 0, len(body.Data))
	for _, d := range body.Data {
		models = append(models, d.ID)
	}
	slices.Sort(models)
	return models, nil
}

// ErrUnknown reports a model reference to a provider that does not exist.
var ErrUnknown = errors.New("unknown provider")

// Lookup returns the provider named name for the workspace: a global one
// (config or detected) first, else the workspace's own, rebuilt when
// another process changed its row. An unknown name gives ErrUnknown with
// the names the workspace can use.
func (r *Registry) Lookup(ctx context.Context, workspaceID, name string) (*Entry, error) {
	if pr, ok := r.global[name]; ok {
		return pr, nil
	}
	row, err := r.store.Providers().GetByName(ctx, workspaceID, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w %q; known providers: %s", ErrUnknown, name, strings.Join(r.Names(ctx, workspaceID), ", "))
	}
	if err != nil {
		return nil, err
	}
	key := workspaceID + "\x00" + name
	r.mu.Lock()
	pr, ok := r.wsProviders[key]
	r.mu.Unlock()
	if ok && pr.updated.Equal(row.UpdatedAt) {
		return pr, nil
	}
	var settings middleware.Settings
	if len(row.Settings) > 0 {
		if err := json.Unmarshal(row.Settings, &settings); err != nil {
			return nil, fmt.Errorf("provider %q: settings: %w", name, err)
		}
	}
	m, err := r.newAdapters(row.Name, row.Type, row.BaseURL, "", 0)
	if err != nil {
		return nil, err
	}
	pr = &Entry{
		info:     Info{Name: row.Name, Type: row.Type, BaseURL: row.BaseURL, Origin: OriginWorkspace},
		adapters: m,
		settings: settings,
		updated:  row.UpdatedAt,
	}
	r.buildShared(pr)
	r.mu.Lock()
	r.wsProviders[key] = pr
	r.mu.Unlock()
	return pr, nil
}

// Names lists the names of the providers the workspace can use, or one
// line saying how to add one when there are none (for error messages).
func (r *Registry) Names(ctx context.Context, workspaceID string) []string {
	infos, _ := r.Providers(ctx, workspaceID)
	names := make([]string, len(infos))
	for i, in := range infos {
		names[i] = in.Name
	}
	if len(names) == 0 {
		return []string{"(none: configure providers in agentcraft.yaml or POST /api/credentials)"}
	}
	return names
}

// Providers lists the providers a workspace can use.
func (r *Registry) Providers(ctx context.Context, workspaceID string) ([]Info, error) {
	var out []Info
	for _, pr := range r.global {
		info := pr.info
		if !info.HasKey {
			info.HasKey = r.creds.has(ctx, workspaceID, info.Name)
		}
		out = append(out, info)
	}
	rows, err := r.store.Providers().List(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		if _, ok := r.global[row.Name]; ok {
			continue
		}
		out = append(out, Info{Name: row.Name, Type: row.Type, BaseURL: row.BaseURL, Origin: OriginWorkspace, HasKey: r.creds.has(ctx, workspaceID, row.Name)})
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Ollama's default address, probed when no providers are configured.
const defaultOllamaURL = "http://127.0.0.1:11434/v1"
