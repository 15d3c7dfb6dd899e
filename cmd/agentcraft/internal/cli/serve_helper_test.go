package cli

import (
	"context"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
)

// startServe runs serve with the zero configuration of the current
// directory (serveConfig). It returns the base URL, the server's log, and
// stop, which ends serve and fails the test if serve returned an error.
func startServe(t *testing.T) (base string, logs *syncWriter, stop func()) {
	t.Helper()
	addr, logs, end := serveWith(t, serveConfig(t))
	return "http://" + addr, logs, func() {
		if err := end(); err != nil {
			t.Errorf("serve: %v", err)
		}
	}
}

// serveConfig is the zero configuration of the current directory with
// the given environment (NAME=value), on a free loopback port, provider
// detection off.
func serveConfig(t *testing.T, env ...string) config.Config {
	t.Helper()
	cfg, err := config.Load("", env)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Server.Addr = "127.0.0.1:0"
	f := false
	cfg.DetectProviders = &f
	return cfg
}

// serveWith runs serve with cfg until stop, which ends it and returns
// serve's error. It returns the address serve listens on and its log.
func serveWith(t *testing.T, cfg config.Config) (addr string, logs *syncWriter, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	logs = newSyncWriter()
	go func() { done <- serve(ctx, cfg, newLogger(logs, cfg.Log), ready) }()
	select {
	case addr := <-ready:
		return addr, logs, func() error {
			cancel()
			return <-done
		}
	case err := <-done:
		cancel()
		t.Fatalf("serve ended: %v\n%s", err, logs.String())
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("server did not start")
	}
	return "", nil, nil
}
