package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/audit"
	"github.com/agentcraftlab/agentcraft/catalog"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/middleware"
	"github.com/agentcraftlab/agentcraft/pricing"
	"github.com/agentcraftlab/agentcraft/provider"
	"github.com/agentcraftlab/agentcraft/rag"
	"github.com/agentcraftlab/agentcraft/skill"
	"github.com/agentcraftlab/agentcraft/store"
)

// ErrUnknownAgent reports a model name that is not an agent of the workspace.
var ErrUnknownAgent = errors.New("unknown agent")

// ErrInvalidAgent reports an agent definition that cannot run.
var ErrInvalidAgent = errors.New("invalid agent")

// ErrConfigAgent refuses API changes to an agent defined in agentcraft.yaml.
var ErrConfigAgent = errors.New("agent is defined in agentcraft.yaml")

// Agent is a resolved, runnable agent.
type Agent struct {
	// Runtime runs the tool loop.
	Runtime *agent.Agent
	// Row is the stored definition.
	Row store.Agent
	// Provider and ModelID split Row.Model.
	Provider string
	ModelID  string
	// ToolProgress streams internal tool calls as reasoning text.
	ToolProgress bool
	// PII is the PII policy the agent's model chain applies (its own
	// over its workspace's over its provider's); nil: none. Package
	// memory applies it to what the agent remembers.
	PII *middleware.PIISettings
}

type agentEntry struct {
	agent   *Agent
	checked time.Time
	// toolsGen is the catalog's Generation the agent was built with: an
	// MCP server connecting, failing or changing its tools, an import or
	// a tool setting changed in this process rebuilds it.
	toolsGen uint64
	// toolsOff is the Key of the workspace's disabled tools the agent was
	// built with; a change made by another process rebuilds it.
	toolsOff string
	// skillsGen is the skill Service's Generation of the workspace the
	// agent was built with (a skill changed in this process rebuilds it
	// at once), skillsStamp the Stamp of its skills (a change by another
	// process rebuilds it at the next recheck).
	skillsGen   uint64
	skillsStamp string
}

// agentRecheck is how long a resolved agent is used before its row is read
// again to notice edits made by other processes. Edits through this
// process's API take effect at once. A variable only so that tests can
// change it (export_test.go); nothing else writes it.
var agentRecheck = 2 * time.Second

// Agent resolves the workspace's agent named name.
func (p *Platform) Agent(ctx context.Context, workspaceID, name string) (*Agent, error) {
	key := workspaceID + "\x00" + name
	p.mu.Lock()
	e, ok := p.agents[key]
	p.mu.Unlock()
	gen, skillsGen := p.catalog.Generation(workspaceID), p.skills.Generation(workspaceID)
	if ok && e.toolsGen == gen && e.skillsGen == skillsGen && time.Since(e.checked) < agentRecheck {
		return e.agent, nil
	}
	row, err := p.agentRow(ctx, workspaceID, name)
	if errors.Is(err, store.ErrNotFound) {
		p.evict(workspaceID, name)
		return nil, fmt.Errorf("%w %q", ErrUnknownAgent, name)
	}
	if err != nil {
		return nil, err
	}
	off, err := p.catalog.Disabled(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	skills, err := p.skills.Resolve(ctx, workspaceID, row.Params.Skills)
	if err != nil {
		return nil, err
	}
	entry := agentEntry{checked: time.Now(), toolsGen: gen, toolsOff: off.Key(), skillsGen: skillsGen, skillsStamp: skills.Stamp}
	if ok && e.toolsGen == gen && e.toolsOff == entry.toolsOff && e.skillsStamp == skills.Stamp && e.agent.Row.UpdatedAt.Equal(row.UpdatedAt) {
		entry.agent = e.agent
		p.mu.Lock()
		p.agents[key] = &entry
		p.mu.Unlock()
		return e.agent, nil
	}
	a, err := p.build(ctx, row, off, skills)
	if err != nil {
		return nil, fmt.Errorf("agent %q: %w", name, err)
	}
	entry.agent = a
	p.mu.Lock()
	p.agents[key] = &entry
	p.mu.Unlock()
	return a, nil
}

func (p *Platform) evict(workspaceID, name string) {
	p.mu.Lock()
	delete(p.agents, workspaceID+"\x00"+name)
	p.mu.Unlock()
}

// agentSettings is the JSON kept in store.AgentParams.Middleware.
type agentSettings struct {
	middleware.Settings
	ToolProgress bool `json:"tool_progress,omitempty"`
}

// build resolves row into a runnable agent, leaving out the tools in off
// (the workspace's disabled tools), with skills (row's, resolved) listed
// in its instructions and readable through its skill tools.
func (p *Platform) build(ctx context.Context, row store.Agent, off catalog.Disabled, skills skill.Set) (*Agent, error) {
	provName, modelID, _ := strings.Cut(row.Model, "/")
	pr, err := p.providers.Lookup(ctx, row.WorkspaceID, provName)
	if err != nil {
		return nil, err
	}
	tools, warnings, err := p.catalog.Resolve(row.WorkspaceID, row.Tools, row.Params.KnowledgeBases, off)
	if err != nil {
		return nil, err
	}
	instructions := row.Instructions
	tools, instructions, warnings = p.withSkills(row, skills, tools, instructions, warnings)
	for _, w := range warnings {
		p.logger.Warn("agent tools left out", "workspace_id", row.WorkspaceID, "agent", row.Name, "reason", w)
	}
	var as agentSettings
	if len(row.Params.Middleware) > 0 {
		if err := json.Unmarshal(row.Params.Middleware, &as); err != nil {
			return nil, fmt.Errorf("middleware settings: %w", err)
		}
	}
	chain, err := p.chain(pr, row.WorkspaceID, p.wsSafety[row.WorkspaceID], as.Settings, modelID, row.Name)
	if err != nil {
		return nil, err
	}
	model := auditScoped(chain, row.WorkspaceID)
	if p.knowledge != nil {
		// Retrieval wraps the whole chain, so guard and PII masking see the
		// retrieved passages as they see the rest of the prompt. It is on
		// for every agent: a chat's uploaded files arrive as bases in the
		// request's context (rag.WithKnowledgeBases).
		model = rag.Model(model, rag.Options{Searcher: p.knowledge, WorkspaceID: row.WorkspaceID,
			KnowledgeBases: row.Params.KnowledgeBases, Logger: p.logger.With("agent", row.Name)})
	} else if len(row.Params.KnowledgeBases) > 0 {
		p.logger.Warn("agent knowledge bases ignored", "workspace_id", row.WorkspaceID, "agent", row.Name,
			"reason", "no knowledge search is configured (platform.Options.Knowledge)")
	}
	// Outermost: each model call of a run is checked against the
	// workspace's budgets with the run's spending so far, and charged.
	model = p.budgets.Model(model, row.WorkspaceID, func(u llm.Usage) pricing.Money {
		c, _ := p.Cost(provName, modelID, u)
		return c
	})
	rt := &agent.Agent{
		Name:               row.Name,
		Model:              model,
		ModelID:            modelID,
		Instructions:       instructions,
		Tools:              tools,
		Temperature:        row.Params.Temperature,
		MaxTokens:          row.Params.MaxTokens,
		MaxSteps:           row.Params.MaxSteps,
		TokenBudget:        row.Params.TokenBudget,
		ToolTimeout:        time.Duration(row.Params.ToolTimeoutSeconds) * time.Second,
		MaxToolResultBytes: row.Params.MaxToolResultBytes,
		Logger:             p.logger.With("agent", row.Name),
		Warnings:           warnings,
	}
	if p.metrics != nil {
		rt.ToolCalls = p.metrics.ToolCall
	}
	piiPolicy := middleware.Merge(middleware.Merge(pr.Settings(), p.wsSafety[row.WorkspaceID]), as.Settings).PII
	return &Agent{Runtime: rt, Row: row, Provider: provName, ModelID: modelID, ToolProgress: as.ToolProgress, PII: piiPolicy}, nil
}

// chain wraps the provider's model in the middleware chain (outermost
// first: guard, PII, rate limit, retry, logging). Layers the agent does not
// set come from its workspace (guard and PII), then from the provider, and
// the provider's rate limiter is shared by all its agents; an agent that
// sets its own rate limit gets its own bucket. Metrics count the requests
// that reach the adapter, as modelID of agentName.
func (p *Platform) chain(pr *provider.Entry, workspaceID string, wsSettings, agentSettings middleware.Settings, modelID, agentName string) (llm.Model, error) {
	adapter, err := pr.Adapter(workspaceID)
	if err != nil {
		return nil, err
	}
	// Innermost: each attempt the retry layer makes is one request.
	adapter = p.metrics.Model(adapter, pr.Name(), modelID, agentName)
	if agentSettings == (middleware.Settings{}) && wsSettings == (middleware.Settings{}) {
		return llm.Chain(adapter, pr.Shared()...), nil
	}
	merged := middleware.Merge(middleware.Merge(pr.Settings(), wsSettings), agentSettings)
	logger := p.logger.With("provider", pr.Name())
	if agentSettings.RateLimit == (middleware.RateLimitSettings{}) {
		// The agent keeps the provider's shared bucket (if any) in front
		// of its own retry and logging layers.
		var mws []llm.Middleware
		if l := pr.Limiter(); l != nil {
			mws = append(mws, l)
		}
		merged.RateLimit = middleware.RateLimitSettings{}
		mws = append(mws, middleware.BuildWith(merged, &middleware.BuildOptions{Logger: logger, Audit: p.auditSafety})...)
		return llm.Chain(adapter, mws...), nil
	}
	return llm.Chain(adapter, middleware.BuildWith(merged, &middleware.BuildOptions{Logger: logger, Audit: p.auditSafety})...), nil
}

// checkAgent reports what would stop row from running: an unknown provider
// or tool, a malformed model reference.
func (p *Platform) checkAgent(ctx context.Context, row store.Agent) error {
	provName, modelID, ok := strings.Cut(row.Model, "/")
	if !ok || provName == "" || modelID == "" {
		return fmt.Errorf("%w: model %q must be PROVIDER/MODEL, e.g. ollama/llama3.2", ErrInvalidAgent, row.Model)
	}
	if _, err := p.providers.Lookup(ctx, row.WorkspaceID, provName); err != nil {
		return err
	}
	if err := p.skills.Check(ctx, row.WorkspaceID, row.Params.Skills); err != nil {
		// A *skill.NameError, which names skills[i].
		return fmt.Errorf("%w: %w", ErrInvalidAgent, err)
	}
	if err := p.catalog.Check(row.WorkspaceID, row.Tools); err != nil {
		// Both wrapped: an unknown tool stays tool.ErrUnknownTool, and a
		// tool listed twice, which has no sentinel, is still bad input
		// rather than an internal error.
		return fmt.Errorf("%w: %w", ErrInvalidAgent, err)
	}
	if au := row.Params.Autonomous; au != nil {
		if err := p.checkAutonomous(ctx, row, au); err != nil {
			return err
		}
	}
	if len(row.Params.Middleware) > 0 {
		var as agentSettings
		if err := json.Unmarshal(row.Params.Middleware, &as); err != nil {
			return fmt.Errorf("%w: middleware settings: %v", ErrInvalidAgent, err)
		}
		if err := as.Settings.Validate(); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidAgent, err)
		}
	}
	return nil
}

// checkAutonomous reports what would stop an autonomous agent's run: a
// planner that is no provider's model, a negative limit, an auto_approve
// tool the agent does not have.
func (p *Platform) checkAutonomous(ctx context.Context, row store.Agent, au *store.AgentAutonomous) error {
	if au.Planner != "" {
		prov, model, ok := strings.Cut(au.Planner, "/")
		if !ok || prov == "" || model == "" {
			return fmt.Errorf("%w: autonomous.planner %q must be PROVIDER/MODEL, e.g. openai/gpt-4.1", ErrInvalidAgent, au.Planner)
		}
		if _, err := p.providers.Lookup(ctx, row.WorkspaceID, prov); err != nil {
			return fmt.Errorf("autonomous.planner: %w", err)
		}
	}
	for name, v := range map[string]int{"max_steps": au.MaxSteps, "max_tokens": au.MaxTokens, "max_depth": au.MaxDepth, "max_sub_agents": au.MaxSubAgents} {
		if v < 0 {
			return fmt.Errorf("%w: autonomous.%s is %d: use a positive number, or leave it out for the default", ErrInvalidAgent, name, v)
		}
	}
	for i, t := range au.AutoApprove {
		if !slices.Contains(row.Tools, t) {
			return fmt.Errorf("%w: autonomous.auto_approve[%d] %q is not one of the agent's tools (%s)", ErrInvalidAgent, i, t, strings.Join(row.Tools, ", "))
		}
	}
	return nil
}

// Row is the stored form of the agent for workspaceID (Source left to the
// caller). The API's agent body and agentcraft.yaml both come through it,
// so an agent means the same whichever way it was defined.
func (ca AgentSpec) Row(workspaceID string) (store.Agent, error) {
	row, err := configAgentRow(ca, workspaceID)
	row.Source = ""
	return row, err
}

func configAgentRow(ca AgentSpec, workspaceID string) (store.Agent, error) {
	as := agentSettings{Settings: ca.Middleware, ToolProgress: ca.ToolProgress}
	var mw json.RawMessage
	if as.Settings != (middleware.Settings{}) || as.ToolProgress {
		b, err := json.Marshal(as)
		if err != nil {
			return store.Agent{}, err
		}
		mw = b
	}
	return store.Agent{
		WorkspaceID:  workspaceID,
		Name:         ca.Name,
		Model:        ca.Model,
		Instructions: ca.Instructions,
		Tools:        ca.Tools,
		Params: store.AgentParams{Temperature: ca.Temperature, MaxTokens: ca.MaxTokens, MaxSteps: ca.MaxSteps, Middleware: mw, KnowledgeBases: ca.KnowledgeBases, Memory: ca.Memory, Skills: ca.Skills, Autonomous: ca.Autonomous,
			TokenBudget: ca.TokenBudget, ToolTimeoutSeconds: int(ca.ToolTimeout.Round(time.Second) / time.Second), MaxToolResultBytes: ca.MaxToolResultBytes},
		Source: store.SourceConfig,
	}, nil
}

// fileAgentID is the id of the file's agent called name: stable across
// restarts and processes reading the same file, and never a stored id.
func fileAgentID(name string) string { return "config:" + name }

// fileAgent returns the file's agent called name when workspaceID is the
// file's workspace.
func (p *Platform) fileAgent(workspaceID, name string) (store.Agent, bool) {
	if workspaceID != p.defaultWS.ID {
		return store.Agent{}, false
	}
	a, ok := p.fileAgents[name]
	return a, ok
}

// agentRow finds the workspace's agent called name: the file's first,
// then the store's.
func (p *Platform) agentRow(ctx context.Context, workspaceID, name string) (store.Agent, error) {
	if a, ok := p.fileAgent(workspaceID, name); ok {
		return a, nil
	}
	return p.store.Agents().GetByName(ctx, workspaceID, name)
}

// GetAgent returns the workspace's agent with the given id, or, failing
// that, the given name; store.ErrNotFound when there is none.
func (p *Platform) GetAgent(ctx context.Context, workspaceID, idOrName string) (store.Agent, error) {
	if name, ok := strings.CutPrefix(idOrName, "config:"); ok {
		if a, ok := p.fileAgent(workspaceID, name); ok {
			return a, nil
		}
	}
	a, err := p.store.Agents().Get(ctx, workspaceID, idOrName)
	if errors.Is(err, store.ErrNotFound) {
		return p.agentRow(ctx, workspaceID, idOrName)
	}
	return a, err
}

// Agents lists the workspace's agents by name: the configuration file's
// (held by this process) and the stored ones; a file agent hides a stored
// one of the same name.
func (p *Platform) Agents(ctx context.Context, workspaceID string) ([]store.Agent, error) {
	stored, err := p.store.Agents().List(ctx, workspaceID)
	if err != nil || workspaceID != p.defaultWS.ID || len(p.fileAgents) == 0 {
		return stored, err
	}
	out := make([]store.Agent, 0, len(stored)+len(p.fileAgents))
	for _, a := range p.fileAgents {
		out = append(out, a)
	}
	for _, a := range stored {
		if _, shadowed := p.fileAgents[a.Name]; !shadowed {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b store.Agent) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// CreateAgent checks and stores a new API agent.
func (p *Platform) CreateAgent(ctx context.Context, a store.Agent) (store.Agent, error) {
	if _, ok := p.fileAgent(a.WorkspaceID, a.Name); ok {
		return store.Agent{}, fmt.Errorf("%w: %q exists there; choose another name", ErrConfigAgent, a.Name)
	}
	a.Source = store.SourceAPI
	if err := p.checkAgent(ctx, a); err != nil {
		return store.Agent{}, err
	}
	out, err := p.store.Agents().Create(ctx, a)
	if err == nil {
		p.RecordAudit(ctx, agentEvent("agent.create", out))
	}
	return out, err
}

// agentEvent is the audit event of a change to agent a.
func agentEvent(action string, a store.Agent) store.AuditEvent {
	return store.AuditEvent{WorkspaceID: a.WorkspaceID, Action: action, Target: "agent:" + a.Name,
		Details: audit.Details(map[string]any{"model": a.Model, "tools": a.Tools})}
}

// UpdateAgent checks and replaces an API agent.
func (p *Platform) UpdateAgent(ctx context.Context, a store.Agent) (store.Agent, error) {
	if name, ok := strings.CutPrefix(a.ID, "config:"); ok {
		if _, ok := p.fileAgent(a.WorkspaceID, name); ok {
			return store.Agent{}, fmt.Errorf("%w: change %q in the file", ErrConfigAgent, name)
		}
	}
	if _, ok := p.fileAgent(a.WorkspaceID, a.Name); ok {
		return store.Agent{}, fmt.Errorf("%w: %q exists there; choose another name", ErrConfigAgent, a.Name)
	}
	old, err := p.store.Agents().Get(ctx, a.WorkspaceID, a.ID)
	if err != nil {
		return store.Agent{}, err
	}
	if old.Source == store.SourceConfig {
		return store.Agent{}, fmt.Errorf("%w: change %q in the file", ErrConfigAgent, old.Name)
	}
	a.Source = store.SourceAPI
	if err := p.checkAgent(ctx, a); err != nil {
		return store.Agent{}, err
	}
	out, err := p.store.Agents().Update(ctx, a)
	if err != nil {
		return store.Agent{}, err
	}
	p.evict(a.WorkspaceID, old.Name)
	p.evict(a.WorkspaceID, out.Name)
	p.RecordAudit(ctx, agentEvent("agent.update", out))
	return out, nil
}

// DeleteAgent removes an API agent.
func (p *Platform) DeleteAgent(ctx context.Context, workspaceID, id string) error {
	if name, ok := strings.CutPrefix(id, "config:"); ok {
		if _, ok := p.fileAgent(workspaceID, name); ok {
			return fmt.Errorf("%w: remove %q from the file", ErrConfigAgent, name)
		}
	}
	old, err := p.store.Agents().Get(ctx, workspaceID, id)
	if err != nil {
		return err
	}
	if old.Source == store.SourceConfig {
		return fmt.Errorf("%w: remove %q from the file", ErrConfigAgent, old.Name)
	}
	if err := p.store.Agents().Delete(ctx, workspaceID, id); err != nil {
		return err
	}
	p.evict(workspaceID, old.Name)
	p.RecordAudit(ctx, agentEvent("agent.delete", old))
	return nil
}

// InlineAgent builds an agent that is not stored, such as a workflow
// node's inline configuration. row.Model must be "provider/model": a bare
// model name is refused with the workspace's providers, because picking
// one of several silently sends the prompt where nobody chose. Tools must
// exist.
func (p *Platform) InlineAgent(ctx context.Context, workspaceID string, row store.Agent) (*Agent, error) {
	row.WorkspaceID = workspaceID
	if row.Name == "" {
		row.Name = "inline"
	}
	if !strings.Contains(row.Model, "/") {
		return nil, fmt.Errorf("%w: model %q names no provider: write PROVIDER/MODEL (or set provider), with one of the workspace's providers: %s",
			ErrInvalidAgent, row.Model, strings.Join(p.providers.Names(ctx, workspaceID), ", "))
	}
	if err := p.checkAgent(ctx, row); err != nil {
		return nil, err
	}
	off, err := p.catalog.Disabled(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	skills, err := p.skills.Resolve(ctx, workspaceID, row.Params.Skills)
	if err != nil {
		return nil, err
	}
	return p.build(ctx, row, off, skills)
}
