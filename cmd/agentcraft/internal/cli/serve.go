package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentcraftlab/agentcraft/store/retention"

	"github.com/agentcraftlab/agentcraft/autonomous"
	"github.com/agentcraftlab/agentcraft/budget"

	"github.com/spf13/cobra"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/internal/database"
	"github.com/agentcraftlab/agentcraft/internal/egress"
	"github.com/agentcraftlab/agentcraft/internal/gctune"
	acmetrics "github.com/agentcraftlab/agentcraft/internal/metrics"
	"github.com/agentcraftlab/agentcraft/kb"
	"github.com/agentcraftlab/agentcraft/llm/middleware"
	"github.com/agentcraftlab/agentcraft/memory"
	"github.com/agentcraftlab/agentcraft/platform"
	agentrun "github.com/agentcraftlab/agentcraft/run"
	"github.com/agentcraftlab/agentcraft/secret"
	"github.com/agentcraftlab/agentcraft/server"
	"github.com/agentcraftlab/agentcraft/server/a2aserver"
	"github.com/agentcraftlab/agentcraft/server/aguiserver"
	"github.com/agentcraftlab/agentcraft/server/mcpserver"
	"github.com/agentcraftlab/agentcraft/server/studio"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/task"
	"github.com/agentcraftlab/agentcraft/tool"
	"github.com/agentcraftlab/agentcraft/tool/imagegen"
)

func serveCmd(e *env) *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the API server (SQLite under ./data unless configured)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := e.load()
			if err != nil {
				return err
			}
			if addr != "" {
				cfg.Server.Addr = addr
			}
			logger := newLogger(e.stderr, cfg.Log)
			tuneGC(cfg.Server, logger)
			return serve(cmd.Context(), cfg, logger, nil)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "", "listen address (overrides server.addr)")
	return cmd
}

// tuneGC sets the garbage collector of a long-running process from
// server.gc_percent and server.memory_limit_mib (see internal/gctune).
func tuneGC(cfg config.Server, logger *slog.Logger) {
	set := gctune.Apply(cfg.GCPercent, cfg.MemoryLimitMiB, os.Getenv)
	limit := "none"
	if set.MemoryLimit != math.MaxInt64 {
		limit = strconv.FormatInt(set.MemoryLimit>>20, 10) + " MiB"
	}
	logger.Info("gc_settings", "gc_percent", set.GCPercent, "memory_limit", limit, "from_env", strings.Join(set.FromEnv, ","))
}

// releaseWhenIdle hands the heap start-up left free back to the system,
// and again whenever the process goes quiet (gctune.ReleaseWhenIdle);
// the function it returns stops it and waits.
func releaseWhenIdle(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { gctune.ReleaseWhenIdle(ctx, gctune.IdleRelease{}) })
	return func() { cancel(); wg.Wait() }
}

// stack is what a long-running command works with: the database, the
// migrated store on it, the knowledge service on the search engine on it,
// and the platform.
type stack struct {
	db        *database.DB
	st        store.Store
	knowledge *kb.Service
	// eng is the search engine of knowledge and memories.
	eng kb.Engine
	p   *platform.Platform
	// runner runs agents for every surface and for workflow agent nodes.
	runner *agentrun.Runner
	// conversations and memories are the threads and memory items the
	// runner and the API share (package memory).
	conversations *memory.Conversations
	memories      *memory.Memories
	// masterKey seals credentials; the MCP token key is derived from it.
	masterKey []byte
	// box is the secret box over masterKey (credentials, OpenID flow
	// cookies).
	box *secret.Box
	// ledger performs workflow tool and approval nodes for tasks (the
	// engine's workflow.Actions).
	ledger *task.Ledger
	// plans is the execution memory of Flow plans (and of the plans of
	// ReAct runs' traces), over eng.
	plans *autonomous.Memory
	// images draws workflow image nodes' pictures (tools.images); nil
	// when no image back end is configured.
	images *imagegen.Generator
	// gate holds agents' tool calls of tasks.hold_tools and above as tasks
	// (run.Options.Gate); the task service is attached once built.
	gate *task.ToolGate
	// metrics is the process's registry (metrics.go); nil when
	// metrics.enabled is false.
	metrics *acmetrics.Metrics
	closers []func()
}

// close releases everything in reverse order of opening.
func (s *stack) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// openPlatform opens the configured database (migrated), its search
// engine, the master key and the platform; platformLog receives the
// platform's own logs. The caller closes the stack.
func openPlatform(ctx context.Context, cfg config.Config, logger, platformLog *slog.Logger) (_ *stack, err error) {
	s := &stack{}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	u, err := parseDatabase(cfg.Database.URL)
	if err != nil {
		return nil, err
	}
	o, err := openDatabase(ctx, u, logger)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	s.closers = append(s.closers, o.close)
	s.db, s.st = o.db, o.st
	s.metrics = newMetrics(cfg)
	if err := s.metrics.WatchDatabase(s.db, &acmetrics.DatabaseOptions{Logger: logger}); err != nil {
		return nil, err
	}
	var closeKnowledge func()
	if s.knowledge, s.eng, closeKnowledge, err = openKnowledge(ctx, cfg, o, platformLog); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, closeKnowledge)
	key, err := secret.LoadMasterKey(os.Getenv(secret.EnvMasterKey), cfg.Secrets.MasterKeyFile)
	if err != nil {
		return nil, err
	}
	box, err := secret.New(key)
	if err != nil {
		return nil, err
	}
	s.masterKey, s.box = key, box
	eg, err := (&egress.Policy{Allow: cfg.Egress.Allow}).Compile()
	if err != nil {
		return nil, fmt.Errorf("egress.allow: %w", err)
	}
	mcpTools, err := startMCPClient(ctx, cfg, platformLog)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, mcpTools.Stop)
	prices, err := cfg.Pricing.Table()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	s.p, err = platform.New(ctx, s.st, box, &platform.Options{
		Pricing: prices,
		Budget: &budget.Options{
			Default: budget.Limits{Tokens: cfg.Budget.MonthlyTokens, Cost: cfg.Budget.MonthlyCost},
			TTL:     cfg.Budget.CacheTTL,
		},
		Builtins:         &tool.BuiltinOptions{FilesDir: cfg.Tools.FilesDir, HTTPClient: eg.Client()},
		Providers:        cfg.Providers,
		Agents:           cfg.Agents,
		DefaultWorkspace: cfg.Server.Workspace,
		DetectProviders:  cfg.DetectProviders == nil || *cfg.DetectProviders,
		Logger:           platformLog,
		Knowledge:        s.knowledge,
		Workspaces:       workspaceSafety(cfg.Workspaces),
		MCP:              mcpTools,
		Metrics:          s.metrics,
	})
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, s.p.Stop)
	if err := registerCalendar(cfg, s.p); err != nil {
		return nil, err
	}
	if err := registerWeb(cfg, eg, s.p); err != nil {
		return nil, err
	}
	if err := registerImages(cfg, s, platformLog); err != nil {
		return nil, err
	}
	s.ledger = task.NewLedger(s.st, taskTools{p: s.p, kb: s.knowledge}, &task.LedgerOptions{Policy: taskPolicy(cfg), WorkspacePolicies: workspacePolicies(cfg), Logger: platformLog})
	s.plans = autonomous.NewMemory(s.eng)
	if s.memories, err = memory.NewMemories(s.st, s.eng, &memory.MemoryOptions{Logger: platformLog, Audit: s.p.RecordAudit}); err != nil {
		return nil, err
	}
	s.conversations = memory.NewConversations(s.st, &memory.ConversationOptions{Memories: s.memories, Logger: platformLog})
	hold := cfg.Tasks.HoldTools
	if hold == "" {
		hold = "high"
	}
	if s.gate, err = task.NewToolGate(hold); err != nil {
		return nil, err
	}
	s.runner = agentrun.New(s.p, &agentrun.Options{Conversations: s.conversations, Memory: s.memories, CallerGate: s.gate})
	return s, nil
}

// serve runs the server until ctx ends. When ready is not nil it receives
// the bound address once the server accepts connections.
//
// The database lock and the listening port are taken before anything
// opens the database: a second serve on the same SQLite file or port
// fails there, before it could resume (and so repeat) the steps the first
// one is running.
func serve(ctx context.Context, cfg config.Config, logger *slog.Logger, ready chan<- string) error {
	u, err := parseDatabase(cfg.Database.URL)
	if err != nil {
		return err
	}
	stopTracing, err := startTracing(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer stopTracing()
	lock, err := lockDatabase(u, "serve")
	if err != nil {
		return err
	}
	defer lock.release()
	ln, err := net.Listen("tcp", cfg.Server.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Server.Addr, err)
	}
	defer ln.Close() // when serve fails before Serve owns it
	stk, err := openPlatform(ctx, cfg, logger, logger)
	if err != nil {
		return err
	}
	defer stk.close()

	if cfg.Server.Auth == server.AuthNone {
		logger.Warn("authentication_disabled", "reason", "server.auth is none", "workspace", cfg.Server.Workspace,
			"risk", "anyone who reaches "+cfg.Server.Addr+" can use every agent; use only on a trusted private network")
	}
	wf, err := startWorkflows(ctx, cfg, stk, logger, "serve")
	if err != nil {
		return err
	}
	defer func() {
		wf.stop(cfg.Server.ShutdownTimeout)
	}()
	// The retention pruner and SQLite's WAL checkpoints (retention:).
	stopRetention, err := startRetention(ctx, cfg, &openedDB{db: stk.db, st: stk.st}, stk.memories, logger)
	if err != nil {
		return err
	}
	defer stopRetention()
	mcpOpts, err := mcpServerOptions(cfg, stk.masterKey, logger)
	if err != nil {
		return err
	}
	mcpOpts.Runner, mcpOpts.Runs, mcpOpts.Knowledge = stk.runner, wf.runs, stk.knowledge
	mcpOpts.OAuthClients, mcpOpts.Users = stk.st.OAuthClients(), stk.st
	mcpSrv, err := mcpserver.New(stk.p, mcpOpts)
	if err != nil {
		return err
	}
	// A2A runs its tasks detached from their requests; Stop, after the
	// HTTP server has shut down, cancels the ones still running.
	a2aSrv, err := a2aserver.New(stk.p, &a2aserver.Options{Auth: cfg.Server.Auth, Runner: stk.runner, MaxBodyBytes: cfg.Server.MaxBodyBytes,
		Version: version(), Logger: logger})
	if err != nil {
		return err
	}
	defer a2aSrv.Stop()
	si, err := openSignIn(ctx, cfg, stk, logger)
	if err != nil {
		return err
	}
	stopSweep := sweepSessions(si.ids, sessionSweepInterval, logger)
	defer stopSweep()
	// One attachments value for /v1, /api/chat and AG-UI: they share the
	// temporary bases of a chat's files.
	var attach *server.Attachments
	aopts := &aguiserver.Options{Runner: stk.runner, Conversations: stk.conversations, Runs: wf.runs, MaxBodyBytes: cfg.Server.MaxBodyBytes, Logger: logger}
	if stk.knowledge != nil {
		attach = server.NewAttachments(stk.knowledge)
		aopts.Attachments = attach
	}
	aguiSrv, err := aguiserver.New(stk.p, aopts)
	if err != nil {
		return err
	}
	lineMounts, err := lineMount(ctx, cfg, stk, wf.tasks, logger)
	if err != nil {
		return err
	}
	// The task reconciler (approval expiry, resumes a crash interrupted,
	// notification delivery) runs here, where the channels' senders are.
	wf.tasks.SetSender(task.ChannelConversation, conversationSender{stk.conversations})
	wf.tasks.Start(ctx)
	defer wf.tasks.Stop()
	srv, err := server.New(stk.p, &server.Options{Runner: stk.runner, Auth: cfg.Server.Auth, MaxBodyBytes: cfg.Server.MaxBodyBytes, Version: version(), Logger: logger,
		Runs: wf.runs, Plans: stk.plans, Tasks: wf.tasks, Triggers: wf.triggers, Knowledge: stk.knowledge, Attachments: attach, EnqueueIngest: wf.enqueueIngest, Conversations: stk.conversations, Memories: stk.memories,
		Mounts:   slices.Concat(mcpSrv.Mounts(), a2aSrv.Mounts(), aguiSrv.Mounts(), lineMounts, metricsMounts(cfg.Metrics, stk.metrics)),
		Metrics:  stk.metrics,
		Identity: si.ids, OIDC: si.oidc, SecureCookies: cfg.Auth.SecureCookies, Studio: studio.Handler(),
		Retention: &server.Retention{Server: cfg.Retention.Ages(), Overrides: retention.NewOverrides(stk.db)}})
	if err != nil {
		return err
	}
	defer srv.Stop()
	_, stopMetrics, err := serveMetrics(cfg.Metrics, stk.metrics, logger)
	if err != nil {
		return err
	}
	defer stopMetrics()

	hs := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	closeSilentOnShutdown(hs)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	logger.Info("listening", "addr", ln.Addr().String(), "database", u.String(), "auth", cfg.Server.Auth, "version", version())
	logSetupLink(ctx, si.ids, cfg.Server.Workspace, addrURL(ln.Addr().String()), logger)
	defer releaseWhenIdle(ctx)()
	if ready != nil {
		ready <- ln.Addr().String()
	}

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting_down")
	sctx, cancel := context.WithTimeout(context.Background(), cfg.Server.ShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		logger.Warn("shutdown_incomplete", "error", err)
		hs.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// workspaceSafety maps the configured workspaces to their safety settings.
func workspaceSafety(ws []config.Workspace) map[string]middleware.Settings {
	if len(ws) == 0 {
		return nil
	}
	m := make(map[string]middleware.Settings, len(ws))
	for _, w := range ws {
		m[w.Name] = w.Middleware
	}
	return m
}
