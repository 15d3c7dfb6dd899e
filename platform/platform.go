package platform

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/agentcraftlab/agentcraft/audit"
	"github.com/agentcraftlab/agentcraft/budget"
	"github.com/agentcraftlab/agentcraft/catalog"
	"github.com/agentcraftlab/agentcraft/internal/metrics"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/middleware"
	"github.com/agentcraftlab/agentcraft/pricing"
	"github.com/agentcraftlab/agentcraft/provider"
	"github.com/agentcraftlab/agentcraft/rag"
	"github.com/agentcraftlab/agentcraft/secret"
	"github.com/agentcraftlab/agentcraft/skill"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool"
	"github.com/agentcraftlab/agentcraft/tool/mcpclient"
)

// Options configure a Platform.
type Options struct {
	// Providers and Agents come from agentcraft.yaml.
	Providers []ProviderConfig
	Agents    []AgentSpec
	// DefaultWorkspace receives the configuration file's agents and serves
	// requests when authentication is off. Default "default".
	DefaultWorkspace string
	// DetectProviders looks for OPENAI_API_KEY, ANTHROPIC_API_KEY and a
	// local Ollama when Providers is empty. Default false.
	DetectProviders bool
	// OllamaURL is probed by detection. Default http://127.0.0.1:11434/v1.
	OllamaURL string
	// Getenv reads the environment for detection. Default os.Getenv.
	Getenv func(string) string
	// Tools is the tool catalog. Default: the built-in tools configured by
	// Builtins.
	Tools *tool.Registry
	// Workspaces holds per-workspace guard and PII settings, by workspace
	// name; each workspace named is created at start. An agent's own
	// settings override its workspace's, which override its provider's.
	Workspaces map[string]middleware.Settings
	// Builtins configures the default catalog's built-in tools (file
	// sandbox, outbound HTTP client). Nil: the tools that need no
	// configuration. Ignored when Tools is set.
	Builtins *tool.BuiltinOptions
	// Logger receives operational logs. Default: discard.
	Logger *slog.Logger
	// Knowledge searches knowledge bases (package kb). When set, every
	// agent's model retrieves from the agent's knowledge_bases and from the
	// bases a request's context adds (package rag). Default nil: no
	// retrieval, models untouched.
	Knowledge rag.Searcher
	// Audit receives guard, PII, credential and agent events. Default: an
	// audit.AsyncRecorder on the store's audit log, which Stop flushes;
	// audit.Nop{} turns auditing off. A recorder passed here is the
	// caller's to stop.
	Audit audit.Recorder
	// MCP gives agents the tools of MCP servers: an agent's tool list may
	// name "<server>__<tool>" or "mcp:<server>" (all of a server's tools).
	// The caller starts and stops it. Default nil: no MCP servers.
	MCP *mcpclient.Manager
	// SkillLimits bound the skills created and imported through the
	// platform (files, sizes). Default skill.DefaultLimits.
	SkillLimits *skill.Limits
	// ToolSync is how often the platform looks in the store for MCP
	// servers and OpenAPI imports that other processes added, changed or
	// removed through the API. Default DefaultToolSync; negative: never.
	ToolSync time.Duration
	// Pricing prices every usage record (store.UsageRecord.Cost). Default:
	// pricing.Defaults in USD.
	Pricing *pricing.Table
	// Budget configures the monthly budgets checked before every run
	// (Platform.Budgets): the default limits, the cache TTL. Its Audit,
	// Logger and Currency are the platform's unless set. Default: no
	// default limits; budgets set through the API still apply.
	Budget *budget.Options
	// Metrics counts every agent's model requests (by provider, model and
	// agent, inside the retry layer so that each attempt counts) and tool
	// calls. Default nil: nothing is counted.
	Metrics *metrics.Metrics
}

// Platform resolves agents and providers for requests. Create it with New,
// stop it with Stop.
type Platform struct {
	store  store.Store
	logger *slog.Logger
	usage  *usageRecorder
	// pricing prices usage records; budgets checks and counts spending.
	pricing *pricing.Table
	budgets *budget.Enforcer
	// providers are the configured, detected and workspace providers.
	providers *provider.Registry
	audit     audit.Recorder
	// ownAudit is the default recorder New started, stopped by Stop; nil
	// when Options.Audit was given.
	ownAudit *audit.AsyncRecorder

	// metrics is Options.Metrics; nil counts nothing.
	metrics *metrics.Metrics
	// knowledge is Options.Knowledge; nil turns retrieval off.
	knowledge rag.Searcher
	// catalog is the tool catalog agents' tools are resolved from.
	catalog *catalog.Catalog
	// skills are the built-in and workspace skills agents name.
	skills *skill.Service

	defaultWS store.Workspace
	// wsSafety is Options.Workspaces by workspace id; written only in New.
	wsSafety map[string]middleware.Settings
	// fileAgents are agentcraft.yaml's agents by name, in the default
	// workspace; written only in New.
	fileAgents map[string]store.Agent

	mu     sync.Mutex // guards agents
	agents map[string]*agentEntry
}

// New loads the configuration into st and returns a ready Platform: it
// builds the providers (detecting some when none are configured), makes
// sure the default workspace exists and upserts the configuration file's
// agents into it.
func New(ctx context.Context, st store.Store, box *secret.Box, opts *Options) (_ *Platform, err error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.DefaultWorkspace == "" {
		o.DefaultWorkspace = "default"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	p := &Platform{
		store:     st,
		logger:    o.Logger,
		agents:    map[string]*agentEntry{},
		knowledge: o.Knowledge,
		audit:     o.Audit,
		metrics:   o.Metrics,
	}
	// The recorder is set below, before anything can record: a
	// credential or safety event reads p.audit when it happens.
	providers, err := provider.New(ctx, st, box, &provider.Options{
		Providers: o.Providers,
		Detect:    o.DetectProviders,
		OllamaURL: o.OllamaURL,
		Getenv:    o.Getenv,
		Logger:    o.Logger,
		Audit:     p.RecordAudit,
	})
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	p.providers = providers
	cat, err := catalog.New(ctx, st, box, &catalog.Options{
		Tools:     o.Tools,
		Builtins:  o.Builtins,
		Knowledge: o.Knowledge,
		MCP:       o.MCP,
		Sync:      o.ToolSync,
		Logger:    o.Logger,
		Audit:     p.RecordAudit,
	})
	if err != nil {
		return nil, err
	}
	p.catalog = cat
	p.skills = skill.New(st.Skills(), &skill.Options{Limits: o.SkillLimits, Audit: p.RecordAudit})
	defer func() {
		if err != nil {
			cat.Stop() // its sync loop and MCP connections
		}
	}()
	ws, err := st.Workspaces().GetOrCreate(ctx, o.DefaultWorkspace)
	if err != nil {
		return nil, fmt.Errorf("default workspace: %w", err)
	}
	p.defaultWS = ws
	p.wsSafety = make(map[string]middleware.Settings, len(o.Workspaces))
	for name, set := range o.Workspaces {
		if set.RateLimit != (middleware.RateLimitSettings{}) || set.Retry != (middleware.RetrySettings{}) || set.Logging != (middleware.LoggingSettings{}) {
			return nil, fmt.Errorf("platform: workspace %q: only guard and pii can be set per workspace; rate_limit, retry and logging belong to providers and agents", name)
		}
		if err := set.Validate(); err != nil {
			return nil, fmt.Errorf("platform: workspace %q: %w", name, err)
		}
		w, err := st.Workspaces().GetOrCreate(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("platform: workspace %q: %w", name, err)
		}
		p.wsSafety[w.ID] = set
	}
	// The file's agents live in this process only: the store never holds
	// them, so another process started with another file cannot remove
	// or change them (and this one cannot remove that one's).
	p.fileAgents = make(map[string]store.Agent, len(o.Agents))
	loaded := time.Now().UTC()
	for i, ca := range o.Agents {
		row, err := configAgentRow(ca, ws.ID)
		if err != nil {
			return nil, fmt.Errorf("config: agents[%d]: %w", i, err)
		}
		if err := p.checkAgent(ctx, row); err != nil {
			var bad *skill.NameError
			if errors.As(err, &bad) {
				// agents[0].skills[1]: "x" is not a skill of this workspace …
				return nil, fmt.Errorf("config: agents[%d].%w", i, bad)
			}
			return nil, fmt.Errorf("config: agents[%d] (%s): %w", i, ca.Name, err)
		}
		if _, dup := p.fileAgents[row.Name]; dup {
			return nil, fmt.Errorf("config: agents[%d]: agent %q is defined twice", i, ca.Name)
		}
		row.ID, row.CreatedAt, row.UpdatedAt = fileAgentID(row.Name), loaded, loaded
		p.fileAgents[row.Name] = row
		if _, err := st.Agents().GetByName(ctx, ws.ID, row.Name); err == nil {
			p.logger.Warn("config_agent_shadows_stored", "agent", row.Name, "workspace_id", ws.ID,
				"reason", "agentcraft.yaml defines an agent of the same name as one created through the API; this process serves the file's")
		}
	}
	p.pricing = o.Pricing
	if p.pricing == nil {
		p.pricing, _ = pricing.New(pricing.Defaults(), nil, "") // the defaults are USD: cannot fail
	}
	var bo budget.Options
	if o.Budget != nil {
		bo = *o.Budget
	}
	if bo.Audit == nil {
		bo.Audit = p.RecordAudit
	}
	if bo.Logger == nil {
		bo.Logger = p.logger
	}
	if bo.Currency == "" {
		bo.Currency = p.pricing.Currency()
	}
	p.budgets = budget.New(st.Budgets(), st.Usage(), &bo)
	p.usage = newUsageRecorder(st.Usage(), p.budgets, p.logger)
	if p.audit == nil {
		p.ownAudit = audit.NewAsyncRecorder(st.AuditLog(), &audit.Options{Logger: o.Logger})
		p.audit = p.ownAudit
	}
	return p, nil
}

// DefaultWorkspace is the workspace of the configuration file's agents.
func (p *Platform) DefaultWorkspace() store.Workspace { return p.defaultWS }

// Stop ends the tool sync, disconnects the workspaces' MCP servers and flushes pending usage
// records and audit events. Idempotent.
func (p *Platform) Stop() {
	p.catalog.Stop()
	p.usage.stop()
	if p.ownAudit != nil {
		p.ownAudit.Stop()
	}
}

// RecordUsage stores r in the background and counts it against its
// workspace's budgets at once.
func (p *Platform) RecordUsage(r store.UsageRecord) { p.usage.record(r) }

// Pricing is the price table usage records are priced with.
func (p *Platform) Pricing() *pricing.Table { return p.pricing }

// Cost prices usage of provider's model by the price table: cache reads
// at the cached price, cache writes at the write price, the rest of the
// input at the input price. ok is false for a model the table does not
// price (the cost is 0).
func (p *Platform) Cost(provider, model string, u llm.Usage) (c pricing.Money, ok bool) {
	return p.pricing.Cost(provider, model, pricing.Tokens{Input: u.InputTokens, Cached: u.CachedTokens,
		CacheWrite: u.CacheWriteTokens, Output: u.OutputTokens})
}

// Budgets checks and counts the workspaces' monthly budgets; the run seam
// calls its Check before every run, the API reads and sets them.
func (p *Platform) Budgets() *budget.Enforcer { return p.budgets }

// Providers lists the providers a workspace can use.
func (p *Platform) Providers(ctx context.Context, workspaceID string) ([]ProviderInfo, error) {
	return p.providers.Providers(ctx, workspaceID)
}

// PutCredential stores an API key for a provider, sealed; see
// provider.Registry.PutCredential for the precedence warning.
func (p *Platform) PutCredential(ctx context.Context, workspaceID, providerName, key string) (warning string, err error) {
	return p.providers.PutCredential(ctx, workspaceID, providerName, key)
}

// DeleteCredential removes the workspace's stored key for a provider;
// store.ErrNotFound when none is stored.
func (p *Platform) DeleteCredential(ctx context.Context, workspaceID, providerName string) error {
	return p.providers.DeleteCredential(ctx, workspaceID, providerName)
}
