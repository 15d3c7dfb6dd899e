// Package config loads agentcraft.yaml: the file named by --config, else
// ./agentcraft.yaml when present, else nothing at all — zero configuration
// is a working setup (SQLite under ./data, listening on 127.0.0.1:8080).
//
// Values may reference the environment as ${NAME} or ${NAME:-default}
// inside scalars, so secrets stay out of the file. Every scalar key can be
// overridden by an environment variable named after its path:
// server.addr → AGENTCRAFT_SERVER_ADDR. Unknown keys are rejected with
// their path (providers[0].bse_url) so a typo never silently does nothing.
package config

import (
	"bytes"
	"encoding"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/agentcraftlab/agentcraft/internal/database"
	"github.com/agentcraftlab/agentcraft/internal/gctune"
	"github.com/agentcraftlab/agentcraft/llm/middleware"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/skill"
	"github.com/agentcraftlab/agentcraft/store"
)

// DefaultFile is read when no --config is given and it exists.
const DefaultFile = "agentcraft.yaml"

// Config is the whole configuration.
type Config struct {
	Server    Server     `yaml:"server"`
	Database  Database   `yaml:"database"`
	Log       Log        `yaml:"log"`
	Secrets   Secrets    `yaml:"secrets"`
	Providers []Provider `yaml:"providers"`
	Agents    []Agent    `yaml:"agents"`
	// DetectProviders, when no providers are configured, looks for
	// OPENAI_API_KEY, ANTHROPIC_API_KEY and an Ollama server on
	// 127.0.0.1:11434. Default true.
	DetectProviders *bool `yaml:"detect_providers"`
	// Egress is the policy of outbound HTTP made on behalf of workflow
	// authors (http-request nodes, webhook hooks).
	Egress Egress `yaml:"egress"`
	// Workflows tunes the workflow engine.
	Workflows Workflows `yaml:"workflows"`
	// Worker configures `agentcraft worker` processes.
	Worker Worker `yaml:"worker"`
	// Search configures knowledge-base search.
	Search Search `yaml:"search"`
	// Tools configures the built-in tools that reach outside the process.
	Tools Tools `yaml:"tools"`
	// Workspaces sets guard and PII policies per workspace.
	Workspaces []Workspace `yaml:"workspaces"`
	// MCP configures the MCP servers agents use and AgentCraft's own /mcp.
	MCP MCP `yaml:"mcp"`
	// Auth configures sign-in: session lifetimes, cookies and OpenID
	// Connect providers.
	Auth Auth `yaml:"auth"`
	// Channels configures chat channels (LINE).
	Channels Channels `yaml:"channels"`
	// Tasks configures the task control plane: the model that reads
	// requests, approvals and the Scheduler's calendar.
	Tasks Tasks `yaml:"tasks"`
	// Pricing prices model usage; Budget is the workspaces' default
	// monthly budget (costs.go).
	Pricing Pricing `yaml:"pricing"`
	Budget  Budget  `yaml:"budget"`
	// Retention is how long each kind of data is kept (retention.go).
	Retention Retention `yaml:"retention"`
	// Metrics serves Prometheus metrics (metrics.go).
	Metrics Metrics `yaml:"metrics"`
	// Tracing exports OpenTelemetry traces (tracing.go). Default off.
	Tracing Tracing `yaml:"tracing"`
}

// MCP configures the Model Context Protocol on both sides.
type MCP struct {
	// Servers are MCP servers whose tools agents may use.
	Servers []MCPServer `yaml:"servers"`
	// Auth protects AgentCraft's own /mcp endpoint: "oauth" (default:
	// bearer tokens from POST /oauth/token or, with JWKSURL, from an
	// outside authorization server) or "none" (trusted networks only,
	// logged as a warning at start).
	Auth string `yaml:"auth"`
	// JWKSURL, Issuer and Audience verify bearer JWTs issued by an outside
	// authorization server instead of AgentCraft's own token endpoint.
	JWKSURL  string `yaml:"jwks_url"`
	Issuer   string `yaml:"issuer"`
	Audience string `yaml:"audience"`
	// AllowedOrigins are the browser origins /mcp accepts besides the
	// server's own (DNS-rebinding protection).
	AllowedOrigins []string `yaml:"allowed_origins"`
}

// MCPServer is one MCP server: a command speaking stdio, or a streamable
// HTTP URL.
type MCPServer struct {
	Name    string            `yaml:"name"`
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Env     map[string]string `yaml:"env"`
	URL     string            `yaml:"url"`
	// Bearer is a static token for URL servers.
	Bearer string `yaml:"bearer"`
	// OAuth fetches tokens with the client-credentials grant.
	OAuth *MCPOAuth `yaml:"oauth"`
}

// MCPOAuth is an OAuth2 client-credentials registration. Without
// TokenURL, the token endpoint is discovered (RFC 9728, then RFC 8414).
type MCPOAuth struct {
	ClientID     string   `yaml:"client_id"`
	ClientSecret string   `yaml:"client_secret"`
	Scopes       []string `yaml:"scopes"`
	TokenURL     string   `yaml:"token_url"`
}

// Workspace is one workspace's safety policy: the guard and pii settings
// of its every agent, unless the agent sets its own. The workspace is
// created at start when it does not exist.
type Workspace struct {
	Name string `yaml:"name"`
	// Middleware takes guard and pii only; rate limits, retries and logging
	// stay with providers and agents.
	Middleware middleware.Settings `yaml:",inline"`
	// Tasks, when set, is the workspace's own task policy, replacing the
	// keys of tasks: it sets (approval_ttl, allow_self_approval,
	// compensate_on_failure, trusted_executors).
	Tasks *WorkspaceTasks `yaml:"tasks"`
}

// Tools configures built-in tools. http_request, web_fetch and browser
// are always available to agents and follow egress.allow.
type Tools struct {
	// FilesDir is the sandbox of file_read and file_list (nothing outside
	// it is readable, through .. or symlinks). Empty: no file tools.
	FilesDir string `yaml:"files_dir"`
	// WebSearch configures web_search (tools.go); without a back end
	// there is no web_search.
	WebSearch WebSearch `yaml:"web_search"`
	// WebFetch tunes web_fetch.
	WebFetch WebFetch `yaml:"web_fetch"`
	// Browser tunes the browser tool (headless Chromium).
	Browser Browser `yaml:"browser"`
	// Images is the image back end of generate_image and workflow image
	// nodes (images.go). Default: none.
	Images Images `yaml:"images"`
}

// Search configures knowledge-base search. Without an embedder, knowledge
// bases are searched by full text (BM25) only.
type Search struct {
	// Embedder enables vector and hybrid search; unset means none.
	Embedder Embedder `yaml:"embedder"`
	// ExtractTimeout bounds the extraction of one ingested or attached
	// file; the sandboxed parser is killed at it. Default 60s.
	ExtractTimeout time.Duration `yaml:"extract_timeout"`
	// ExtractMemoryMiB caps the memory of the process extracting one
	// file, in MiB. Default 1024.
	ExtractMemoryMiB int64 `yaml:"extract_memory_mib"`
}

// Embedder is an OpenAI-compatible /v1/embeddings endpoint. Documents are
// embedded when ingested: changing the model means ingesting again.
type Embedder struct {
	// BaseURL is the API root with /v1, e.g. http://localhost:11434/v1 for
	// Ollama. Default https://api.openai.com/v1.
	BaseURL string `yaml:"base_url"`
	// Model names the embedding model; setting it turns the embedder on.
	Model string `yaml:"model"`
	// APIKey, usually "${OPENAI_API_KEY}"; empty sends none.
	APIKey string `yaml:"api_key"`
	// Dimensions is the vector length; 0 learns it from the first answer.
	Dimensions int `yaml:"dimensions"`
}

// Egress configures outbound HTTP from workflows.
type Egress struct {
	// Allow lists hosts, IPs or CIDRs (optionally with :port) that may be
	// reached although they are loopback or private, such as
	// "127.0.0.1:9000" or "10.0.0.0/8". Default none.
	Allow []string `yaml:"allow"`
}

// Workflows configures the workflow engine and its job queue.
type Workflows struct {
	// MaxSteps bounds node executions of a run whose settings set none.
	// Default 1000.
	MaxSteps int `yaml:"max_steps"`
	// Timeout bounds a run whose settings set none. Default 30m.
	Timeout time.Duration `yaml:"timeout"`
	// Workers is how many runs this process executes at once. Default 10.
	Workers int `yaml:"workers"`
	// Execute is whether serve executes workflow runs and ingest jobs
	// itself. Default true. False makes serve a web tier in queue mode
	// (PostgreSQL only): it enqueues, and `agentcraft worker` processes
	// execute. Workers always execute.
	Execute *bool `yaml:"execute"`
	// MaxStepsCeiling refuses workflows whose settings.max_steps is above
	// it (422 at save and start). Default 10000; -1 means none.
	MaxStepsCeiling int `yaml:"max_steps_ceiling"`
	// TimeoutCeiling refuses workflows whose settings.timeout is above it.
	// Default 24h; a negative duration (-1s) means none.
	TimeoutCeiling time.Duration `yaml:"timeout_ceiling"`
	// StorageQuotaMiB caps the run data (checkpoints and events) one
	// workspace stores: runs fail past it and new ones are refused (422
	// storage_quota_exceeded). Default 1024; -1 means none.
	StorageQuotaMiB int64 `yaml:"storage_quota_mib"`
}

// Worker configures `agentcraft worker`.
type Worker struct {
	// ShutdownTimeout is how long a worker told to stop (SIGTERM, Ctrl-C)
	// lets its running runs finish; it takes no new ones meanwhile. Runs
	// still running then are handed back: each stops after the node in
	// flight is saved, releases its lease and is queued again, so another
	// worker resumes it at once; a node still running 10s later is
	// canceled and redone by the next worker. Default 15s.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
}

// Server configures the HTTP listener.
type Server struct {
	// Addr is the listen address. Default 127.0.0.1:8080.
	Addr string `yaml:"addr"`
	// Auth is "apikey" (default): every API call needs a Bearer key made
	// with `agentcraft keys create`; or "none": no authentication, for
	// trusted private networks only (logged as a warning at start).
	Auth string `yaml:"auth"`
	// Workspace is the workspace used when Auth is none. Default "default".
	Workspace string `yaml:"workspace"`
	// MaxBodyBytes caps request bodies. Default 8 MiB.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// ShutdownTimeout bounds graceful shutdown. Default 15s.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	// GCPercent is the garbage collector's target (Go's GOGC) for serve
	// and worker: the heap may grow to (1+GCPercent/100) times its live
	// size before a collection. Default 400: a proxy's live heap is small
	// and each collection stalls streams, so fewer of them buy latency
	// with memory. The GOGC environment variable, when set, wins.
	GCPercent int `yaml:"gc_percent"`
	// MemoryLimitMiB is a soft heap limit (Go's GOMEMLIMIT) in MiB, under
	// which the collector runs as often as it must: 0 (default) sets half
	// the memory available to the process (its cgroup limit, else the
	// machine's), so that GCPercent never grows the heap out of the
	// machine; -1 sets none. The GOMEMLIMIT environment variable wins.
	MemoryLimitMiB int64 `yaml:"memory_limit_mib"`
}

// Database selects the store.
type Database struct {
	// URL is sqlite://PATH (default sqlite://./data/agentcraft.db) or
	// postgres://user@host/db.
	URL string `yaml:"url"`
}

// Log configures the process log.
type Log struct {
	// Level is debug, info (default), warn or error. Prompts and
	// completions are logged only at debug.
	Level string `yaml:"level"`
	// Format is text (default) or json.
	Format string `yaml:"format"`
}

// Secrets configures credential encryption.
type Secrets struct {
	// MasterKeyFile holds the 32-byte master key, created with mode 0600
	// on first start. Ignored when AGENTCRAFT_MASTER_KEY is set.
	// Default ./data/master.key.
	MasterKeyFile string `yaml:"master_key_file"`
}

// Provider is one LLM provider of the file (package platform defines
// its fields, so the file and the platform agree on them).
type Provider = platform.ProviderConfig

// Agent is an agent defined in the file, held in memory by the process
// that reads it (package platform defines its fields).
type Agent = platform.AgentSpec

// Default returns the zero-configuration settings.
func Default() Config {
	return Config{
		Server: Server{
			Addr:            "127.0.0.1:8080",
			Auth:            "apikey",
			Workspace:       "default",
			MaxBodyBytes:    8 << 20,
			ShutdownTimeout: 15 * time.Second,
			GCPercent:       gctune.DefaultGCPercent,
		},
		Worker:   Worker{ShutdownTimeout: 15 * time.Second},
		Database: Database{URL: "sqlite://./data/agentcraft.db"},
		Log:      Log{Level: "info", Format: "text"},
		Secrets:  Secrets{MasterKeyFile: "./data/master.key"},
		Auth:     Auth{IdleTimeout: 12 * time.Hour, AbsoluteTimeout: 7 * 24 * time.Hour},
	}
}

// Load reads path (or DefaultFile when path is empty and it exists),
// applies ${ENV} references and AGENTCRAFT_* overrides from environ
// (KEY=VALUE pairs; nil means os.Environ()), fills defaults and validates.
func Load(path string, environ []string) (Config, error) {
	env := envMap(environ)
	cfg := Default()
	explicit := path != ""
	if path == "" {
		path = DefaultFile
	}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := Parse(data, env, &cfg); err != nil {
			return Config{}, fmt.Errorf("config %s: %w", path, err)
		}
		// Before the environment: AGENTCRAFT_* paths stay relative to the
		// working directory, as a shell user expects.
		cfg.resolvePaths(filepath.Dir(path))
	case errors.Is(err, os.ErrNotExist) && !explicit:
		// Zero configuration.
	default:
		return Config{}, fmt.Errorf("config: %w", err)
	}
	if err := applyEnv(reflect.ValueOf(&cfg).Elem(), "AGENTCRAFT", env); err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	cfg.tracingFromEnv(env)
	cfg.fill()
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// resolvePaths makes the relative file paths of the configuration (those
// the file sets, and the defaults it leaves, such as ./data) relative to
// dir, the file's directory. Without it, a command run from another
// directory with --config would open, and create, a second empty
// database under that directory's ./data.
func (c *Config) resolvePaths(dir string) {
	if dir == "." || dir == "" {
		return
	}
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	if p, ok := strings.CutPrefix(c.Database.URL, "sqlite://"); ok && p != "" && p != ":memory:" && !strings.HasPrefix(p, "file:") {
		c.Database.URL = "sqlite://" + filepath.ToSlash(rel(p))
	}
	c.Secrets.MasterKeyFile = rel(c.Secrets.MasterKeyFile)
	c.Tools.FilesDir = rel(c.Tools.FilesDir)
	if !c.Tools.Images.InlineWorkflow() {
		c.Tools.Images.Workflow = rel(c.Tools.Images.Workflow)
	}
}

func envMap(environ []string) map[string]string {
	if environ == nil {
		environ = os.Environ()
	}
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// Parse decodes YAML into cfg, rejecting unknown keys by path and
// expanding ${ENV} references in scalar values.
func Parse(data []byte, env map[string]string, cfg *Config) error {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return fmt.Errorf("parse yaml: %w", err)
	}
	if len(root.Content) == 0 {
		return nil
	}
	doc := root.Content[0]
	if err := checkKeys(doc, reflect.TypeOf(*cfg), ""); err != nil {
		return err
	}
	if err := expandNode(doc, env); err != nil {
		return err
	}
	if err := doc.Decode(cfg); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	return nil
}

func (c *Config) fill() {
	d := Default()
	if c.Server.Addr == "" {
		c.Server.Addr = d.Server.Addr
	}
	if c.Server.Auth == "" {
		c.Server.Auth = d.Server.Auth
	}
	if c.Server.Workspace == "" {
		c.Server.Workspace = d.Server.Workspace
	}
	if c.Server.MaxBodyBytes <= 0 {
		c.Server.MaxBodyBytes = d.Server.MaxBodyBytes
	}
	if c.Server.ShutdownTimeout <= 0 {
		c.Server.ShutdownTimeout = d.Server.ShutdownTimeout
	}
	if c.Server.GCPercent == 0 {
		c.Server.GCPercent = d.Server.GCPercent
	}
	if c.Worker.ShutdownTimeout == 0 {
		c.Worker.ShutdownTimeout = d.Worker.ShutdownTimeout
	}
	if c.Database.URL == "" {
		c.Database.URL = d.Database.URL
	}
	if c.Log.Level == "" {
		c.Log.Level = d.Log.Level
	}
	if c.Log.Format == "" {
		c.Log.Format = d.Log.Format
	}
	if c.Secrets.MasterKeyFile == "" {
		c.Secrets.MasterKeyFile = d.Secrets.MasterKeyFile
	}
	if c.Auth.IdleTimeout == 0 {
		c.Auth.IdleTimeout = d.Auth.IdleTimeout
	}
	if c.Auth.AbsoluteTimeout == 0 {
		c.Auth.AbsoluteTimeout = d.Auth.AbsoluteTimeout
	}
	if c.DetectProviders == nil {
		t := true
		c.DetectProviders = &t
	}
	// A ceiling below the engine's own defaults (1000 steps, 30m) lowers
	// the default of runs whose settings set none.
	if w := &c.Workflows; w.MaxSteps == 0 && w.MaxStepsCeiling > 0 && w.MaxStepsCeiling < 1000 {
		w.MaxSteps = w.MaxStepsCeiling
	}
	if w := &c.Workflows; w.Timeout == 0 && w.TimeoutCeiling > 0 && w.TimeoutCeiling < 30*time.Minute {
		w.Timeout = w.TimeoutCeiling
	}
	for i := range c.Agents {
		if c.Agents[i].MaxSteps == 0 {
			c.Agents[i].MaxSteps = 10
		}
	}
}

// Validate reports the first problem with a path and a fix.
func (c *Config) Validate() error {
	var errs []error
	bad := func(path, format string, args ...any) {
		errs = append(errs, fmt.Errorf("config: %s: %s", path, fmt.Sprintf(format, args...)))
	}
	switch c.Server.Auth {
	case "apikey", "none":
	default:
		bad("server.auth", "%q is not apikey or none", c.Server.Auth)
	}
	c.Metrics.validate(bad)
	if c.Worker.ShutdownTimeout < 0 {
		bad("worker.shutdown_timeout", "%v is negative; set a duration such as 15s (0 means the default, 15s)", c.Worker.ShutdownTimeout)
	}
	if c.Workflows.MaxStepsCeiling < -1 {
		bad("workflows.max_steps_ceiling", "%d is not -1 (none), 0 (default 10000) or a positive number", c.Workflows.MaxStepsCeiling)
	}
	// The engine's defaults apply to runs whose settings set none: above
	// the ceilings they would take every such run past them. 10000 and
	// 24h are controlplane's DefaultMaxStepsCeiling and
	// DefaultTimeoutCeiling (this package imports no service).
	stepsCeil, timeCeil := c.Workflows.MaxStepsCeiling, c.Workflows.TimeoutCeiling
	if stepsCeil == 0 {
		stepsCeil = 10000
	}
	if timeCeil == 0 {
		timeCeil = 24 * time.Hour
	}
	if stepsCeil > 0 && c.Workflows.MaxSteps > stepsCeil {
		bad("workflows.max_steps", "%d is above the ceiling of %d (workflows.max_steps_ceiling): lower it or raise the ceiling", c.Workflows.MaxSteps, stepsCeil)
	}
	if timeCeil > 0 && c.Workflows.Timeout > timeCeil {
		bad("workflows.timeout", "%v is above the ceiling of %v (workflows.timeout_ceiling): lower it or raise the ceiling", c.Workflows.Timeout, timeCeil)
	}
	if c.Workflows.StorageQuotaMiB < -1 {
		bad("workflows.storage_quota_mib", "%d is not -1 (none), 0 (default 1024) or a size in MiB", c.Workflows.StorageQuotaMiB)
	}
	c.validateTasks(bad)
	c.validateTools(bad)
	c.validateImages(bad)
	c.validateTracing(bad)
	if c.Server.GCPercent < 10 || c.Server.GCPercent > 10000 {
		bad("server.gc_percent", "%d is not between 10 and 10000", c.Server.GCPercent)
	}
	if c.Server.MemoryLimitMiB < -1 {
		bad("server.memory_limit_mib", "%d is not -1 (none), 0 (half the memory) or a size in MiB", c.Server.MemoryLimitMiB)
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", "%q is not debug, info, warn or error", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		bad("log.format", "%q is not text or json", c.Log.Format)
	}
	if _, err := database.Parse(c.Database.URL); err != nil {
		bad("database.url", "%v", err)
	}
	if e := c.Search.Embedder; e.Model == "" && (e.BaseURL != "" || e.APIKey != "" || e.Dimensions != 0) {
		bad("search.embedder.model", "is empty: name the embedding model, e.g. text-embedding-3-small, or remove search.embedder")
	}
	if u := c.Search.Embedder.BaseURL; u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		bad("search.embedder.base_url", "%q must start with http:// or https://", u)
	}
	if c.Search.ExtractTimeout < 0 {
		bad("search.extract_timeout", "%v must be a positive duration such as 60s, or 0 for the default", c.Search.ExtractTimeout)
	}
	if c.Search.ExtractMemoryMiB < 0 {
		bad("search.extract_memory_mib", "%d must be positive, or 0 for the default of 1024", c.Search.ExtractMemoryMiB)
	}
	if c.Search.Embedder.Dimensions < 0 {
		bad("search.embedder.dimensions", "%d must be positive, or 0 to learn it from the first answer", c.Search.Embedder.Dimensions)
	}
	names := map[string]bool{}
	for i, p := range c.Providers {
		path := fmt.Sprintf("providers[%d]", i)
		if !validName(p.Name) {
			bad(path+".name", "%q must be letters, digits, - or _ (it prefixes model names as NAME/MODEL)", p.Name)
		}
		if names[p.Name] {
			bad(path+".name", "%q is defined twice", p.Name)
		}
		names[p.Name] = true
		switch p.Type {
		case "openai", "anthropic":
		default:
			bad(path+".type", "%q is not openai or anthropic", p.Type)
		}
	}
	agents := map[string]bool{}
	for i, a := range c.Agents {
		path := fmt.Sprintf("agents[%d]", i)
		if !validName(a.Name) {
			bad(path+".name", "%q must be letters, digits, ., - or _", a.Name)
		}
		if agents[a.Name] {
			bad(path+".name", "%q is defined twice", a.Name)
		}
		agents[a.Name] = true
		if prov, model, ok := strings.Cut(a.Model, "/"); !ok || prov == "" || model == "" {
			bad(path+".model", "%q must be PROVIDER/MODEL, e.g. local/llama3.2", a.Model)
		}
		if a.TokenBudget < 0 || a.ToolTimeout < 0 || a.MaxToolResultBytes < 0 {
			bad(path, "token_budget, tool_timeout and max_tool_result_bytes must be positive (or left out for the defaults)")
		}
		if a.MaxSteps < 0 {
			bad(path+".max_steps", "must be positive")
		}
		if m := a.Memory; m != nil {
			if m.HistoryTokens < 0 {
				bad(path+".memory.history_tokens", "must be positive (or left out for the default)")
			}
			if m.PII != "" && m.PII != store.MemoryPIIKeep && m.PII != store.MemoryPIIRedact && m.PII != store.MemoryPIIBlock {
				bad(path+".memory.pii", "%q: use keep, redact, block or leave it out to follow the agent's pii mode", m.PII)
			}
		}
		if t := a.Temperature; t != nil && !(*t >= store.MinTemperature && *t <= store.MaxTemperature) {
			bad(path+".temperature", "%v must be from %v to %v, or left out for the provider's default", *t, store.MinTemperature, store.MaxTemperature)
		}
		kbs := map[string]bool{}
		for j, kb := range a.KnowledgeBases {
			if !validKBName(kb) {
				bad(fmt.Sprintf("%s.knowledge_bases[%d]", path, j), "%q must be a knowledge base's name or id: 1 to 128 characters, no control characters or surrounding spaces", kb)
			}
			if kbs[kb] {
				bad(fmt.Sprintf("%s.knowledge_bases[%d]", path, j), "%q is listed twice", kb)
			}
			kbs[kb] = true
		}
		skills := map[string]bool{}
		for j, name := range a.Skills {
			// Whether the skill exists is the platform's to say at start:
			// a workspace's skills live in the database.
			if !skill.ValidName(name) {
				bad(fmt.Sprintf("%s.skills[%d]", path, j), "%q is not a skill name: lowercase letters, digits and hyphens, such as meeting-notes", name)
			}
			if skills[name] {
				bad(fmt.Sprintf("%s.skills[%d]", path, j), "%q is listed twice", name)
			}
			skills[name] = true
		}
	}
	c.MCP.validateMCPAuth(bad)
	c.Auth.validateAuth(bad)
	c.MCP.validateMCPServers(bad)
	wsNames := map[string]bool{}
	for i, w := range c.Workspaces {
		path := fmt.Sprintf("workspaces[%d]", i)
		switch {
		case strings.TrimSpace(w.Name) == "":
			bad(path+".name", "is empty: name the workspace")
		case wsNames[w.Name]:
			bad(path+".name", "%q is defined twice", w.Name)
		}
		wsNames[w.Name] = true
		m := w.Middleware
		if m.RateLimit != (middleware.RateLimitSettings{}) || m.Retry != (middleware.RetrySettings{}) || m.Logging != (middleware.LoggingSettings{}) {
			bad(path, "only guard and pii can be set per workspace; put rate_limit, retry and logging on providers or agents")
		}
		if err := m.Validate(); err != nil {
			bad(path, "%v", err)
		}
	}
	c.validateCosts(bad)
	c.Retention.validate(bad)
	return errors.Join(errs...)
}

// validKBName accepts what a knowledge base may be called; package kb owns
// the finer rules and reports unknown bases when the agent searches.
func validKBName(s string) bool {
	return s != "" && utf8.RuneCountInString(s) <= 128 && strings.TrimSpace(s) == s &&
		!strings.ContainsFunc(s, unicode.IsControl)
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// checkKeys walks the YAML mapping against the struct type and reports the
// first unknown key by its path.
func checkKeys(n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n.Kind {
	case yaml.MappingNode:
		if t.Kind() == reflect.Map {
			for i := 1; i < len(n.Content); i += 2 {
				if err := checkKeys(n.Content[i], t.Elem(), join(path, n.Content[i-1].Value)); err != nil {
					return err
				}
			}
			return nil
		}
		if t.Kind() != reflect.Struct {
			return fmt.Errorf("%s: expected %s, got a mapping", orRoot(path), t.Kind())
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			ft, ok := fields[key]
			if !ok {
				return fmt.Errorf("%s: unknown key (line %d); known keys: %s", join(path, key), n.Content[i].Line, knownKeys(fields))
			}
			if err := checkKeys(n.Content[i+1], ft, join(path, key)); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		if t.Kind() != reflect.Slice {
			return fmt.Errorf("%s: expected %s, got a list (line %d)", orRoot(path), t.Kind(), n.Line)
		}
		for i, c := range n.Content {
			if err := checkKeys(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// yamlFields maps yaml keys to field types, flattening ",inline" fields.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if strings.Contains(opts, "inline") {
			for k, v := range yamlFields(f.Type) {
				m[k] = v
			}
			continue
		}
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		m[name] = f.Type
	}
	return m
}

func knownKeys(fields map[string]reflect.Type) string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orRoot(path string) string {
	if path == "" {
		return "(root)"
	}
	return path
}

// expandNode replaces ${NAME} and ${NAME:-default} in scalar values.
// Expansion happens on parsed scalars, never on the raw text, so a value
// from the environment cannot inject YAML structure.
func expandNode(n *yaml.Node, env map[string]string) error {
	if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "${") {
		v, err := Expand(n.Value, env)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		n.Value = v
		if n.Tag == "!!null" || n.Tag == "" {
			n.Tag = "!!str"
		}
	}
	for _, c := range n.Content {
		if err := expandNode(c, env); err != nil {
			return err
		}
	}
	return nil
}

// Expand substitutes ${NAME} and ${NAME:-default}; an unset NAME without a
// default becomes the empty string. $$ is not special; only ${ starts a
// reference.
func Expand(s string, env map[string]string) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated ${ in %q", s)
		}
		ref := s[i+2 : i+end]
		name, def, hasDef := strings.Cut(ref, ":-")
		if !validEnvName(name) {
			return "", fmt.Errorf("bad environment reference ${%s}: names are letters, digits and _", ref)
		}
		if v, ok := env[name]; ok && (v != "" || !hasDef) {
			b.WriteString(v)
		} else if hasDef {
			b.WriteString(def)
		}
		s = s[i+end+1:]
	}
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// applyEnv sets scalar fields from AGENTCRAFT_<PATH> variables. Lists are
// not overridable this way (their element paths are ambiguous).
func applyEnv(v reflect.Value, prefix string, env map[string]string) error {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		fv := v.Field(i)
		key := prefix
		if !strings.Contains(opts, "inline") {
			key = prefix + "_" + strings.ToUpper(name)
		}
		switch {
		case f.Type.Kind() == reflect.Struct:
			if prefix == "AGENTCRAFT" || !strings.Contains(opts, "inline") {
				if err := applyEnv(fv, key, env); err != nil {
					return err
				}
			}
			continue
		case f.Type.Kind() == reflect.Slice:
			continue
		}
		raw, ok := env[key]
		if !ok {
			continue
		}
		if err := setScalar(fv, raw); err != nil {
			return fmt.Errorf("%s=%q: %w", key, raw, err)
		}
	}
	return nil
}

func setScalar(v reflect.Value, raw string) error {
	if v.Kind() == reflect.Pointer {
		nv := reflect.New(v.Type().Elem())
		if err := setScalar(nv.Elem(), raw); err != nil {
			return err
		}
		v.Set(nv)
		return nil
	}
	if u, ok := v.Addr().Interface().(encoding.TextUnmarshaler); ok && v.Kind() != reflect.String {
		return u.UnmarshalText([]byte(raw)) // pricing.Money: an exact decimal
	}
	if v.Type() == reflect.TypeOf(time.Duration(0)) {
		d, err := time.ParseDuration(raw)
		if err != nil {
			return fmt.Errorf("want a duration such as 30s")
		}
		v.SetInt(int64(d))
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(raw)
	case reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return fmt.Errorf("want true or false")
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return fmt.Errorf("want an integer")
		}
		v.SetInt(n)
	case reflect.Float64:
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return fmt.Errorf("want a number")
		}
		v.SetFloat(f)
	default:
		return fmt.Errorf("cannot be set from the environment")
	}
	return nil
}
