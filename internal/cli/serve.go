package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentcraftlab/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/secret"
	"github.com/agentcraftlab/agentcraft/server"
	"github.com/agentcraftlab/agentcraft/store"
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
			return serve(cmd.Context(), cfg, newLogger(e.stderr, cfg.Log), nil)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "", "listen address (overrides server.addr)")
	return cmd
}

// openPlatform opens the configured database (migrated), the master key
// and the platform; platformLog receives the platform's own logs. closeAll
// releases them in order.
func openPlatform(ctx context.Context, cfg config.Config, logger, platformLog *slog.Logger) (store.Store, *platform.Platform, func(), error) {
	st, err := openStore(ctx, cfg.Database.URL, logger)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("open database: %w", err)
	}
	key, err := secret.LoadMasterKey(os.Getenv(secret.EnvMasterKey), cfg.Secrets.MasterKeyFile)
	if err == nil {
		var box *secret.Box
		if box, err = secret.New(key); err == nil {
			var p *platform.Platform
			p, err = platform.New(ctx, st, box, &platform.Options{
				Providers:        cfg.Providers,
				Agents:           cfg.Agents,
				DefaultWorkspace: cfg.Server.Workspace,
				DetectProviders:  cfg.DetectProviders == nil || *cfg.DetectProviders,
				Logger:           platformLog,
			})
			if err == nil {
				return st, p, func() { p.Stop(); st.Close() }, nil
			}
		}
	}
	st.Close()
	return nil, nil, nil, err
}

// serve runs the server until ctx ends. When ready is not nil it receives
// the bound address once the server accepts connections.
func serve(ctx context.Context, cfg config.Config, logger *slog.Logger, ready chan<- string) error {
	st, p, closeAll, err := openPlatform(ctx, cfg, logger, logger)
	if err != nil {
		return err
	}
	defer closeAll()

	if cfg.Server.Auth == server.AuthNone {
		logger.Warn("authentication_disabled", "reason", "server.auth is none", "workspace", cfg.Server.Workspace,
			"risk", "anyone who reaches "+cfg.Server.Addr+" can use every agent; use only on a trusted private network")
	}
	wf, err := startWorkflows(ctx, cfg, st, p, logger)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), cfg.Server.ShutdownTimeout)
		defer cancel()
		wf.stop(sctx)
	}()
	srv, err := server.New(p, &server.Options{Auth: cfg.Server.Auth, MaxBodyBytes: cfg.Server.MaxBodyBytes, Version: version(), Logger: logger, Runs: wf.runs})
	if err != nil {
		return err
	}
	defer srv.Stop()

	ln, err := net.Listen("tcp", cfg.Server.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Server.Addr, err)
	}
	hs := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	logger.Info("listening", "addr", ln.Addr().String(), "database", redactURL(cfg.Database.URL), "auth", cfg.Server.Auth, "version", version())
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
