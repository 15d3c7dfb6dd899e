package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/anthropic"
	"github.com/agentcraftlab/agentcraft/llm/middleware"
	"github.com/agentcraftlab/agentcraft/llm/openai"
	"github.com/agentcraftlab/agentcraft/store"
)

// Provider origins.
const (
	OriginConfig    = "config"    // agentcraft.yaml
	OriginDetected  = "detected"  // found at start: env keys or a local Ollama
	OriginWorkspace = "workspace" // created through the API for one workspace
)

// ProviderInfo describes a provider as the API shows it: never its key.
type ProviderInfo struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	BaseURL string   `json:"base_url,omitempty"`
	Origin  string   `json:"origin"`
	Models  []string `json:"models,omitempty"`
	// HasKey says whether a key is configured or stored for the workspace.
	HasKey bool `json:"has_key"`
}

// provider is a ready adapter plus its settings.
type provider struct {
	info      ProviderInfo
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

// providerTypes are the adapters that exist.
var providerTypes = []string{"openai", "anthropic"}

// newHTTPClient is the client every adapter shares. The idle pool is sized
// for many concurrent streams to one upstream: the default of 2 idle
// connections per host would close and reopen connections under load.
// Each connection's buffers are 1 KB instead of 4: a streamed chunk is a
// few hundred bytes, bodies larger than a buffer bypass it, and every open
// stream holds one connection (BenchmarkGatewayOverhead/idle).
func newHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 1024
	t.MaxIdleConnsPerHost = 512
	t.IdleConnTimeout = 90 * time.Second
	t.ReadBufferSize = 1 << 10
	t.WriteBufferSize = 1 << 10
	return &http.Client{Transport: t}
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

func (p *Platform) newAdapters(name, typ, baseURL, apiKey string, timeout time.Duration) (*adapters, error) {
	a := &adapters{spec: adapterSpec{name: name, typ: typ, baseURL: baseURL, apiKey: apiKey, timeout: timeout}, build: p.buildAdapter}
	// Build one now so that a bad type or URL fails at start, not at
	// the first request.
	if _, err := a.forWorkspace(""); err != nil {
		return nil, err
	}
	return a, nil
}

func (p *Platform) buildAdapter(spec adapterSpec, workspaceID string) (llm.Model, error) {
	hc := &http.Client{Transport: &credentialTransport{
		base:        p.http.Transport,
		provider:    spec.name,
		typ:         spec.typ,
		workspaceID: workspaceID,
		creds:       p.creds,
	}}
	if spec.apiKey != "" {
		hc = &http.Client{Transport: p.http.Transport}
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
	return metered{next: m}, nil
}

func (p *Platform) addGlobalProvider(cp ProviderConfig, origin string, models []string) error {
	m, err := p.newAdapters(cp.Name, cp.Type, cp.BaseURL, cp.APIKey, cp.Timeout)
	if err != nil {
		return err
	}
	pr := &provider{
		info:      ProviderInfo{Name: cp.Name, Type: cp.Type, BaseURL: cp.BaseURL, Origin: origin, Models: models, HasKey: cp.APIKey != ""},
		staticKey: cp.APIKey != "",
		adapters:  m,
		settings:  cp.Middleware,
	}
	if err := cp.Middleware.Validate(); err != nil {
		return fmt.Errorf("provider %q: %w", cp.Name, err)
	}
	p.buildShared(pr)
	p.global[cp.Name] = pr
	return nil
}

// buildShared builds the provider-level chain once.
func (p *Platform) buildShared(pr *provider) {
	logger := p.logger.With("provider", pr.info.Name)
	pr.shared = middleware.BuildWith(pr.settings, &middleware.BuildOptions{Logger: logger, Audit: p.auditSafety})
	if pr.settings.RateLimit.Enabled != nil && *pr.settings.RateLimit.Enabled {
		// Build puts the limiter first when it is on.
		pr.limiter = pr.shared[0]
	}
}

// detectProviders looks for OPENAI_API_KEY, ANTHROPIC_API_KEY and an
// Ollama server on 127.0.0.1:11434, as the zero-configuration promise says.
func (p *Platform) detectProviders(ctx context.Context, getenv func(string) string, ollamaURL string) {
	if k := getenv("OPENAI_API_KEY"); k != "" {
		if err := p.addGlobalProvider(ProviderConfig{Name: "openai", Type: "openai", APIKey: k}, OriginDetected, nil); err == nil {
			p.logger.Info("provider_detected", "provider", "openai", "reason", "OPENAI_API_KEY is set")
		}
	}
	if k := getenv("ANTHROPIC_API_KEY"); k != "" {
		if err := p.addGlobalProvider(ProviderConfig{Name: "anthropic", Type: "anthropic", APIKey: k}, OriginDetected, nil); err == nil {
			p.logger.Info("provider_detected", "provider", "anthropic", "reason", "ANTHROPIC_API_KEY is set")
		}
	}
	if ollamaURL == "" {
		return
	}
	models, err := listOllama(ctx, p.http, ollamaURL)
	if err != nil {
		p.logger.Info("provider_not_detected", "provider", "ollama", "url", ollamaURL, "error", err)
		return
	}
	if err := p.addGlobalProvider(ProviderConfig{Name: "ollama", Type: "openai", BaseURL: ollamaURL}, OriginDetected, models); err == nil {
		p.logger.Info("provider_detected", "provider", "ollama", "url", ollamaURL, "models", len(models))
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

// ErrUnknownProvider reports a model reference to a provider that does not exist.
var ErrUnknownProvider = errors.New("unknown provider")

// providerFor returns the provider named name for the workspace: a global
// one (config or detected) first, else the workspace's own.
func (p *Platform) providerFor(ctx context.Context, workspaceID, name string) (*provider, error) {
	if pr, ok := p.global[name]; ok {
		return pr, nil
	}
	row, err := p.store.Providers().GetByName(ctx, workspaceID, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w %q; known providers: %s", ErrUnknownProvider, name, strings.Join(p.providerNames(ctx, workspaceID), ", "))
	}
	if err != nil {
		return nil, err
	}
	key := workspaceID + "\x00" + name
	p.mu.Lock()
	pr, ok := p.wsProviders[key]
	p.mu.Unlock()
	if ok && pr.updated.Equal(row.UpdatedAt) {
		return pr, nil
	}
	var settings middleware.Settings
	if len(row.Settings) > 0 {
		if err := json.Unmarshal(row.Settings, &settings); err != nil {
			return nil, fmt.Errorf("provider %q: settings: %w", name, err)
		}
	}
	m, err := p.newAdapters(row.Name, row.Type, row.BaseURL, "", 0)
	if err != nil {
		return nil, err
	}
	pr = &provider{
		info:     ProviderInfo{Name: row.Name, Type: row.Type, BaseURL: row.BaseURL, Origin: OriginWorkspace},
		adapters: m,
		settings: settings,
		updated:  row.UpdatedAt,
	}
	p.buildShared(pr)
	p.mu.Lock()
	p.wsProviders[key] = pr
	p.mu.Unlock()
	return pr, nil
}

func (p *Platform) providerNames(ctx context.Context, workspaceID string) []string {
	infos, _ := p.Providers(ctx, workspaceID)
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
func (p *Platform) Providers(ctx context.Context, workspaceID string) ([]ProviderInfo, error) {
	var out []ProviderInfo
	for _, pr := range p.global {
		info := pr.info
		if !info.HasKey {
			info.HasKey = p.creds.has(ctx, workspaceID, info.Name)
		}
		out = append(out, info)
	}
	rows, err := p.store.Providers().List(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if _, ok := p.global[r.Name]; ok {
			continue
		}
		out = append(out, ProviderInfo{Name: r.Name, Type: r.Type, BaseURL: r.BaseURL, Origin: OriginWorkspace, HasKey: p.creds.has(ctx, workspaceID, r.Name)})
	}
	slices.SortFunc(out, func(a, b ProviderInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Ollama's default address, probed when no providers are configured.
const defaultOllamaURL = "http://127.0.0.1:11434/v1"
