// Package servertest starts a whole AgentCraft server in-process for tests:
// a SQLite store in a temporary directory, a master key, the platform with
// the given providers and agents, the HTTP handler (with /a2a and /agui mounted,
// and /mcp with Options.MCP) on a loopback listener and an API key for the
// default workspace.
//
//	env := servertest.New(t, &servertest.Options{Providers: ..., Agents: ...})
//	client := openai.NewClient(option.WithBaseURL(env.URL+"/v1"), option.WithAPIKey(env.Key))
package servertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/budget"
	"github.com/agentcraftlab/agentcraft/internal/database"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/internal/metrics"
	"github.com/agentcraftlab/agentcraft/internal/tracing"
	"github.com/agentcraftlab/agentcraft/kb"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/llm/middleware"
	agentmemory "github.com/agentcraftlab/agentcraft/memory"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/pricing"
	"github.com/agentcraftlab/agentcraft/queue"
	"github.com/agentcraftlab/agentcraft/run"
	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/memory"
	"github.com/agentcraftlab/agentcraft/secret"
	"github.com/agentcraftlab/agentcraft/server"
	"github.com/agentcraftlab/agentcraft/server/a2aserver"
	"github.com/agentcraftlab/agentcraft/server/aguiserver"
	"github.com/agentcraftlab/agentcraft/server/mcpserver"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/retention"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
	"github.com/agentcraftlab/agentcraft/task"
	"github.com/agentcraftlab/agentcraft/tool"
	"github.com/agentcraftlab/agentcraft/trigger"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/nodes"
)

// Options configure the test server.
type Options struct {
	Providers []platform.ProviderConfig
	Agents    []platform.AgentSpec
	// Auth is server.AuthAPIKey (default) or server.AuthNone.
	Auth string
	// MaxBodyBytes caps request bodies; default the server's.
	MaxBodyBytes int64
	// DetectProviders turns on provider detection with Getenv and OllamaURL.
	DetectProviders bool
	Getenv          func(string) string
	OllamaURL       string
	// LogWriter and LogLevel redirect the server's log; by default it goes
	// to Env.Log at Debug. Benchmarks log at Info to io.Discard, as a
	// production server formats its log lines but does not keep them.
	LogWriter io.Writer
	LogLevel  slog.Level
	// Knowledge turns on knowledge bases, uploads and chat attachments,
	// over an in-memory search engine; ingest jobs run in a goroutine of
	// the test process as soon as they are queued.
	Knowledge bool
	// Workflows gives the server a workflow run service with the built-in
	// node kinds, whose agent nodes run the platform's agents and models,
	// serving /api/workflows, /api/runs and /agui/workflows/{name}, and
	// the trigger service over it (/api/triggers, /hooks/{id}; Env.Triggers);
	// runs execute in goroutines of the test process; Env.Runs is it.
	// Default: those answer 503.
	Workflows bool
	// Queue makes the run service execute runs through a River queue on
	// the test database (package queue), as serve's does, instead of in a
	// goroutine of the request that queued them: the executor then starts
	// from the queue's context, as a worker process does. Env.Runs.Wait
	// does not wait for such runs; poll the run's status. Needs Workflows.
	Queue bool
	// Embedder gives the knowledge engine vectors, so vector and hybrid
	// search work; nil: full-text search only.
	Embedder search.Embedder
	// MaxUploadBytes caps one upload; default the server's.
	MaxUploadBytes int64
	// Builtins configures the built-in tools, such as the egress-policy
	// HTTP client of http_request and imported OpenAPI tools; nil: the
	// defaults (no HTTP client).
	Builtins *tool.BuiltinOptions
	// KeyTTL is the server's Options.KeyTTL: how long a checked API key
	// is answered from memory; default the server's.
	KeyTTL time.Duration
	// Memory turns on conversations and memory (package memory) over an
	// in-memory search engine, for the runner and the API alike.
	Memory bool
	// HistoryTokens is the conversations' default history budget; 0 is
	// package memory's.
	HistoryTokens int
	// Identity turns on people: users, browser sessions and the people
	// API, with these options (Audit and AuditWorkspaceID are filled in
	// when empty). Nil: API keys only.
	Identity *identity.Options
	// OIDC are OpenID providers to sign in with; needs Identity.
	OIDC []identity.OIDCProvider
	// SecureCookies is the server's Options.SecureCookies.
	SecureCookies bool
	// Studio is the server's Options.Studio (server/studio's Handler for
	// browser tests); nil: unknown paths answer JSON 404s.
	Studio http.Handler
	// MCP mounts /mcp and its OAuth2 endpoints (/oauth/token,
	// /.well-known/...) as `agentcraft serve` does: bearer JWTs of the
	// server's own client-credentials issuer, signed with a key derived
	// from the master key, for the store's OAuth clients (Env.OAuthClient
	// makes one); its tools run agents through Env.Runner, workflows
	// through Env.Runs (Options.Workflows) and docsearch over
	// Env.Knowledge (Options.Knowledge). Default: /mcp is not served.
	MCP bool
	// Tasks gives the server the task service (package task) as `agentcraft
	// serve` has it: a ledger calling the platform's tools (the built-ins)
	// as every workflow engine's Actions, the run service's Changed hook
	// moving tasks along, serving /api/tasks and /api/approvals; Env.Tasks
	// is it. It implies Workflows. Default: those answer 503.
	Tasks bool
	// Pricing and Budget are the platform's price table and budget
	// options (platform.Options); nil: the defaults.
	Pricing *pricing.Table
	Budget  *budget.Options
	// Retention is the server's retention policy (kind → age) that GET
	// and PUT /api/retention serve, over the test database's stored
	// overrides, as serve does; nil is a policy that keeps everything.
	Retention map[string]string
	// Metrics is handed to the platform, the server and the run service,
	// as serve does (internal/metrics); the test reads it through its
	// Handler. Default nil: nothing is counted.
	Metrics *metrics.Metrics
}

// Env is a running server.
type Env struct {
	// URL is the server's root URL.
	URL string
	// Key is a valid API key of the default workspace.
	Key      string
	Store    store.Store
	Platform *platform.Platform
	Server   *server.Server
	// DBPath is the SQLite file.
	DBPath string
	// Log collects everything the server logged, at Debug and above.
	Log *SyncBuffer
	// Workspace is the default workspace.
	Workspace store.Workspace
	// Runs is the workflow run service when Options.Workflows is set.
	Runs *controlplane.Service
	// Knowledge is the knowledge service when Options.Knowledge is set.
	Knowledge *kb.Service
	// Conversations and Memories are set with Options.Memory.
	Conversations *agentmemory.Conversations
	Memories      *agentmemory.Memories
	// Identity is set with Options.Identity, OIDC with Options.OIDC.
	Identity *identity.Service
	OIDC     *identity.OIDC
	// Tasks is the task service when Options.Tasks is set.
	Tasks *task.Service
	// Triggers is the trigger service, set with Env.Runs as serve has it:
	// /api/triggers and the webhooks at /hooks/{id}, starting runs through
	// Env.Runs. No scheduler runs: schedules are stored and say when they
	// fire next, but do not fire.
	Triggers *trigger.Service
	// queue executes runs with Options.Queue.
	queue *queue.Queue
	// Runner is the run seam the server's surfaces share (with memory
	// when Options.Memory is set); tests that mount a surface of their
	// own, such as /mcp, hand it to that surface.
	Runner *run.Runner
}

// New starts a server and registers its shutdown with t.Cleanup.
func New(t testing.TB, opts *Options) *Env {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	ctx := context.Background()
	dir := t.TempDir()
	env := &Env{DBPath: filepath.Join(dir, "agentcraft.db"), Log: &SyncBuffer{}}
	// As serve's: records logged within a span carry its trace_id and span_id.
	logger := slog.New(tracing.LogHandler(slog.NewTextHandler(env.Log, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if o.LogWriter != nil {
		logger = slog.New(tracing.LogHandler(slog.NewTextHandler(o.LogWriter, &slog.HandlerOptions{Level: o.LogLevel})))
	}
	st, db := openStore(t, env.DBPath, o.Queue)
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	env.Store = st
	key, err := secret.LoadMasterKey("", filepath.Join(dir, "master.key"))
	if err != nil {
		t.Fatal(err)
	}
	box, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	ollama := o.OllamaURL
	if ollama == "" {
		ollama = "http://127.0.0.1:1/v1" // nothing listens: detection finds no Ollama
	}
	popts := &platform.Options{
		Providers: o.Providers, Agents: o.Agents, DetectProviders: o.DetectProviders,
		Getenv: getenv, OllamaURL: ollama, Logger: logger, Builtins: o.Builtins, Metrics: o.Metrics,
		Pricing: o.Pricing, Budget: o.Budget,
	}
	sopts := &server.Options{Auth: o.Auth, MaxBodyBytes: o.MaxBodyBytes, MaxUploadBytes: o.MaxUploadBytes, Version: "test", Logger: logger, KeyTTL: o.KeyTTL,
		Metrics: o.Metrics}
	var jobs sync.WaitGroup
	if o.Knowledge {
		eng, err := memory.New(&memory.Options{Embedder: o.Embedder})
		if err != nil {
			t.Fatal(err)
		}
		svc, err := kb.New(kb.Options{Store: st, Engine: eng, Logger: logger})
		if err != nil {
			t.Fatal(err)
		}
		env.Knowledge = svc
		popts.Knowledge = svc
		sopts.Knowledge = svc
		sopts.Attachments = server.NewAttachments(svc)
		sopts.EnqueueIngest = func(_ context.Context, workspaceID, jobID string) error {
			jobs.Go(func() {
				if err := svc.RunJob(context.Background(), workspaceID, jobID, nil); err != nil {
					logger.Warn("test_ingest_job_failed", "job_id", jobID, "error", err)
				}
			})
			return nil
		}
	}
	p, err := platform.New(ctx, st, box, popts)
	if err != nil {
		t.Fatal(err)
	}
	env.Platform = p
	env.Workspace = p.DefaultWorkspace()
	// The complete server of `agentcraft serve`: /v1, /api, /a2a and /agui
	// behind API keys, and /mcp behind its own tokens when asked for.
	var ropts run.Options
	if o.Memory {
		eng, err := memory.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		mems, err := agentmemory.NewMemories(st, eng, &agentmemory.MemoryOptions{Logger: logger})
		if err != nil {
			t.Fatal(err)
		}
		convs := agentmemory.NewConversations(st, &agentmemory.ConversationOptions{Memories: mems, Logger: logger, HistoryTokens: o.HistoryTokens})
		env.Conversations, env.Memories = convs, mems
		sopts.Conversations, sopts.Memories = convs, mems
		ropts.Conversations, ropts.Memory = convs, mems
	}
	if o.Identity != nil {
		io := *o.Identity
		if io.Audit == nil {
			io.Audit = p.RecordAudit
		}
		if io.AuditWorkspaceID == "" {
			io.AuditWorkspaceID = env.Workspace.ID
		}
		if io.Logger == nil {
			io.Logger = logger
		}
		ids, err := identity.New(st, &io)
		if err != nil {
			t.Fatal(err)
		}
		env.Identity, sopts.Identity = ids, ids
		if len(o.OIDC) > 0 {
			x, err := identity.NewOIDC(ids, o.OIDC, &identity.OIDCOptions{Box: box})
			if err != nil {
				t.Fatal(err)
			}
			env.OIDC, sopts.OIDC = x, x
		}
		sopts.SecureCookies = o.SecureCookies
	}
	sopts.Runner = run.New(p, &ropts)
	env.Runner = sopts.Runner
	a2aSrv, err := a2aserver.New(p, &a2aserver.Options{Auth: o.Auth, Runner: sopts.Runner, MaxBodyBytes: o.MaxBodyBytes, Version: sopts.Version, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	aopts := &aguiserver.Options{Runner: sopts.Runner, Conversations: env.Conversations, MaxBodyBytes: o.MaxBodyBytes, Logger: logger}
	if o.Workflows || o.Tasks {
		reg := workflow.NewRegistry()
		if err := nodes.RegisterBuiltins(reg); err != nil {
			t.Fatal(err)
		}
		services := workflow.Services{Agents: sopts.Runner.WorkflowAgents("test"), HTTP: http.DefaultClient, Logger: logger}
		var ledger *task.Ledger
		if o.Tasks {
			ledger = task.NewLedger(st, platformTools{p}, &task.LedgerOptions{Logger: logger})
			services.Actions = ledger
		}
		eng := workflow.NewEngine(reg, services, nil)
		copts := controlplane.Options{Owner: "test", SingleProcess: true, Logger: logger, Audit: p.RecordAudit, Metrics: o.Metrics}
		if o.Tasks {
			// env.Tasks is set below, before the server takes a request.
			copts.Changed = func(ctx context.Context, r store.Run) { env.Tasks.Changed(ctx, r) }
		}
		var q *queue.Queue
		if o.Queue {
			if _, err := queue.Migrate(ctx, db, ""); err != nil {
				t.Fatal(err)
			}
			copts.Enqueue = func(ctx context.Context, workspaceID, runID string, wake bool) error {
				args := queue.RunArgs{WorkspaceID: workspaceID, RunID: runID}
				if wake {
					args.Wake = time.Now().UTC().Format(time.RFC3339Nano)
				}
				return q.EnqueueRun(ctx, args)
			}
		}
		runs := controlplane.New(st, eng, copts)
		if o.Queue {
			q, err = queue.New(queue.Config{DB: db, Logger: logger}, func(ctx context.Context, args queue.RunArgs) error {
				return runs.Execute(ctx, args.WorkspaceID, args.RunID)
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := q.Start(ctx); err != nil {
				t.Fatal(err)
			}
			env.queue = q
		}
		if o.Tasks {
			tasks, err := task.New(st, runs, ledger, &task.Options{Audit: p.RecordAudit, Logger: logger})
			if err != nil {
				t.Fatal(err)
			}
			env.Tasks, sopts.Tasks = tasks, tasks
		}
		triggers, err := trigger.New(st, runs, box, &trigger.Options{Agents: p, Audit: p.RecordAudit, Logger: logger})
		if err != nil {
			t.Fatal(err)
		}
		env.Triggers, sopts.Triggers = triggers, triggers
		// Registered before the server's cleanup, so it runs after it:
		// runs end once no request can start one.
		t.Cleanup(runs.Wait)
		env.Runs, sopts.Runs, aopts.Runs = runs, runs, runs
	}
	if sopts.Attachments != nil {
		aopts.Attachments = sopts.Attachments
	}
	aguiSrv, err := aguiserver.New(p, aopts)
	if err != nil {
		t.Fatal(err)
	}
	sopts.Mounts = append(a2aSrv.Mounts(), aguiSrv.Mounts()...)
	if o.MCP {
		tokenKey, err := mcpserver.DeriveTokenKey(key)
		if err != nil {
			t.Fatal(err)
		}
		mcpSrv, err := mcpserver.New(p, &mcpserver.Options{TokenKey: tokenKey, OAuthClients: st.OAuthClients(), Users: st,
			Runner: sopts.Runner, Runs: env.Runs, Knowledge: env.Knowledge, Logger: logger, Version: sopts.Version, MaxBodyBytes: o.MaxBodyBytes})
		if err != nil {
			t.Fatal(err)
		}
		sopts.Mounts = append(mcpSrv.Mounts(), sopts.Mounts...)
	}
	sopts.Studio = o.Studio
	// Retention's overrides over a second handle on the file, as
	// `agentcraft db prune` beside a running server has.
	pruneDB, err := database.OpenSQLite(ctx, env.DBPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pruneDB.Close() })
	sopts.Retention = &server.Retention{Server: o.Retention, Overrides: retention.NewOverrides(pruneDB)}
	srv, err := server.New(p, sopts)
	if err != nil {
		t.Fatal(err)
	}
	env.Server = srv
	hs := httptest.NewServer(srv)
	env.URL = hs.URL
	env.Key = CreateKey(t, st, env.Workspace.ID)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		a2aSrv.Stop()
		if env.queue != nil {
			stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if err := env.queue.Stop(stopCtx); err != nil {
				t.Errorf("stop the run queue: %v", err)
			}
			cancel()
			env.queue.Close()
		}
		if env.Runs != nil {
			env.Runs.Wait() // runs end before the store closes
		}
		srv.Stop()
		jobs.Wait()
		p.Stop()
		st.Close()
		if db != nil {
			db.Close()
		}
	})
	return env
}

// openStore opens the test database at path. With shared, River and the
// store share one database handle (its one writer), as serve's do, and
// db is that handle, for the caller to close after the store; otherwise
// the store owns its handle and db is nil.
func openStore(t testing.TB, path string, shared bool) (*sqlite.Store, *database.DB) {
	t.Helper()
	if !shared {
		st, err := sqlite.Open(context.Background(), path, nil)
		if err != nil {
			t.Fatal(err)
		}
		return st, nil
	}
	db, err := database.OpenSQLite(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.New(db, nil)
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	return st, db
}

// platformTools are the tools of a task's steps: the platform's, as an
// agent of the workspace without knowledge bases would get them.
type platformTools struct{ p *platform.Platform }

func (t platformTools) Tool(_ context.Context, workspaceID, name string) (tool.Tool, error) {
	ts, warnings, err := t.p.Catalog().Resolve(workspaceID, []string{name}, nil, nil)
	if err != nil {
		return nil, err
	}
	if len(ts) == 0 {
		return nil, fmt.Errorf("%w: %s is not available: %s", tool.ErrUnknownTool, name, strings.Join(warnings, "; "))
	}
	return ts[0], nil
}

// CreateKey stores a new API key for the workspace and returns it.
func CreateKey(t testing.TB, st store.Store, workspaceID string) string {
	t.Helper()
	var b [24]byte
	_, _ = rand.Read(b[:])
	key := "ac_" + base64.RawURLEncoding.EncodeToString(b[:])
	h := sha256.Sum256([]byte(key))
	if _, err := st.APIKeys().Create(context.Background(), store.APIKey{WorkspaceID: workspaceID, Name: "test", Prefix: key[:9], Hash: h[:], Role: store.RoleOwner}); err != nil {
		t.Fatal(err)
	}
	return key
}

// OAuthClient stores an OAuth client of the default workspace with the
// given /mcp scopes (mcpserver's scheme, such as "agents/*") and returns
// its id and secret, to trade for a token at POST /oauth/token
// (Options.MCP).
func (e *Env) OAuthClient(t testing.TB, scopes ...string) (id, clientSecret string) {
	t.Helper()
	clientSecret, hash := mcpserver.NewClientSecret()
	c, err := e.Store.OAuthClients().Create(context.Background(), store.OAuthClient{WorkspaceID: e.Workspace.ID, Name: "test", SecretHash: hash, Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	return c.ID, clientSecret
}

// Person is a user of a workspace with an API key that acts for them.
type Person struct {
	UserID string
	Email  string
	// Key is an API key of the workspace whose UserID is the person's.
	Key string
}

// NewPerson stores a user with the address email, adds them to the
// workspace as a member, and stores an API key (role member) acting for
// them.
func NewPerson(t testing.TB, st store.Store, workspaceID, email string) Person {
	t.Helper()
	ctx := context.Background()
	u, err := st.Users().Create(ctx, store.User{Email: email})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Members().Add(ctx, store.Member{WorkspaceID: workspaceID, UserID: u.ID, Role: store.RoleMember}); err != nil {
		t.Fatal(err)
	}
	var b [24]byte
	_, _ = rand.Read(b[:])
	key := "ac_" + base64.RawURLEncoding.EncodeToString(b[:])
	h := sha256.Sum256([]byte(key))
	if _, err := st.APIKeys().Create(ctx, store.APIKey{WorkspaceID: workspaceID, Name: email, Prefix: key[:9], Hash: h[:],
		Role: store.RoleMember, UserID: u.ID}); err != nil {
		t.Fatal(err)
	}
	return Person{UserID: u.ID, Email: u.Email, Key: key}
}

// ScriptToolCall pushes onto fake a model that calls one tool and then
// answers with answer. The returned function is the result of the call as
// the fake received it in the next request (the content of the tool
// message answering call.ID), so a test checks what the model was shown,
// not what a surface reports; it fails the test when no such message
// arrived.
func ScriptToolCall(t testing.TB, fake *llmtest.Server, call llm.ToolCall, answer string) func() string {
	t.Helper()
	var (
		mu     sync.Mutex // guards result and seen
		result string
		seen   bool
	)
	fake.Push(llmtest.Turn{ToolCalls: []llm.ToolCall{call}}, llmtest.Turn{Text: answer, Check: func(body map[string]any) {
		msgs, _ := body["messages"].([]any)
		for _, m := range msgs {
			mm, _ := m.(map[string]any)
			if mm["role"] == "tool" && mm["tool_call_id"] == call.ID {
				text, _ := mm["content"].(string)
				mu.Lock()
				result, seen = text, true
				mu.Unlock()
			}
		}
	}})
	return func() string {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		if !seen {
			t.Fatalf("the fake model received no result of tool call %s (%s)", call.ID, call.Name)
		}
		return result
	}
}

// SyncBuffer is a bytes.Buffer safe for concurrent writers.
type SyncBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// FakeProvider is provider "fake" on a scripted OpenAI-compatible fake
// (llmtest.NewOpenAI) that does not retry, so a scripted fault reaches
// the test at once. Agents name its models "fake/<model>".
func FakeProvider(fake *llmtest.Server) platform.ProviderConfig {
	off := false
	return platform.ProviderConfig{Name: "fake", Type: "openai", BaseURL: fake.URL + "/v1", APIKey: "upstream-secret",
		Middleware: middleware.Settings{Retry: middleware.RetrySettings{Enabled: &off}}}
}

// Client sends raw HTTP requests to a test server and never follows a
// redirect: an API answering one has failed its client.
type Client struct {
	T    testing.TB
	Base string // the server's root URL
	Key  string // sent as Authorization: Bearer; "" sends none
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// Do sends body (JSON when not empty) and returns the answer and its body.
func (c Client) Do(method, path, body string) (*http.Response, []byte) {
	c.T.Helper()
	return c.DoWith(method, path, body, nil)
}

// DoWith is Do with the headers h added (a webhook's signature, say).
func (c Client) DoWith(method, path, body string, h http.Header) (*http.Response, []byte) {
	c.T.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.Base+path, r)
	if err != nil {
		c.T.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		c.T.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.T.Fatal(err)
	}
	return resp, b
}

// JSON sends a request, fails the test unless the answer has status want,
// and decodes its JSON into v when v is not nil.
func (c Client) JSON(method, path, body string, want int, v any) {
	c.T.Helper()
	resp, b := c.Do(method, path, body)
	if resp.StatusCode != want {
		c.T.Fatalf("%s %s = %d %s, want %d", method, path, resp.StatusCode, b, want)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			c.T.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
}
