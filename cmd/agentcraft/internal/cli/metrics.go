package cli

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	acmetrics "github.com/agentcraftlab/agentcraft/internal/metrics"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
)

// Metrics
//
// openPlatform makes the process's registry (nil with metrics.enabled
// false) and hands it to the platform (model requests, tool calls), the
// run service (workflow runs and nodes), the server (HTTP requests) and a
// collector of the database's gauges read at scrape time. serve and
// worker expose it: on metrics.listen (default 127.0.0.1:9464, open
// unless metrics.token is set) and, with metrics.token, on the main port
// as GET /metrics behind that bearer token.

// newMetrics returns the registry the configuration asks for, nil when
// metrics are off.
func newMetrics(cfg config.Config) *acmetrics.Metrics {
	if !cfg.Metrics.On() {
		return nil
	}
	return acmetrics.New(nil)
}

// metricsHandler is the registry's handler, behind cfg's token when one
// is set.
func metricsHandler(cfg config.Metrics, m *acmetrics.Metrics) http.Handler {
	h := m.Handler()
	token := strings.TrimSpace(cfg.Token)
	if token == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := httpapi.Bearer(r.Header.Get("Authorization"))
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			apierr.Write(w, &apierr.Error{Status: http.StatusUnauthorized, Type: apierr.TypeAuthentication, Code: "invalid_metrics_token",
				Message: "GET /metrics needs Authorization: Bearer <metrics.token>"})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// metricsMounts is GET /metrics on the main port, when a token guards it.
func metricsMounts(cfg config.Metrics, m *acmetrics.Metrics) []httpapi.Mount {
	if m == nil || strings.TrimSpace(cfg.Token) == "" {
		return nil
	}
	return []httpapi.Mount{{Pattern: "GET /metrics", Handler: metricsHandler(cfg, m)}}
}

// serveMetrics starts the listener of metrics.listen, if any, and returns
// its address ("" when none) and the function that stops it. A default
// address another process holds (serve and a worker on one host) is a
// warning, not a failure: the operator did not ask for that port.
func serveMetrics(cfg config.Metrics, m *acmetrics.Metrics, logger *slog.Logger) (string, func(), error) {
	addr := cfg.Addr()
	if m == nil || addr == "" {
		return "", func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if cfg.ListenDefault() && errors.Is(err, syscall.EADDRINUSE) {
			logger.Warn("metrics_listener_skipped", "addr", addr, "error", err,
				"fix", "set metrics.listen (AGENTCRAFT_METRICS_LISTEN) to a free address for this process, or none")
			return "", func() {}, nil
		}
		return "", nil, fmt.Errorf("metrics.listen: listen on %s: %w", addr, err)
	}
	if host, _, _ := net.SplitHostPort(addr); strings.TrimSpace(cfg.Token) == "" && !loopbackHost(host) {
		logger.Warn("metrics_unauthenticated", "addr", ln.Addr().String(),
			"risk", "anyone who reaches this address reads the metrics; set metrics.token or bind to 127.0.0.1")
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metricsHandler(cfg, m))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	closeSilentOnShutdown(hs)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Warn("metrics_listener_failed", "error", err)
		}
	}()
	logger.Info("metrics_listening", "addr", ln.Addr().String(), "path", "/metrics", "token", strings.TrimSpace(cfg.Token) != "")
	return ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := hs.Shutdown(ctx); err != nil {
			hs.Close()
		}
		<-done
	}, nil
}

// loopbackHost reports whether host names only this machine.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
