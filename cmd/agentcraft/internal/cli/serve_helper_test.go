package cli

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
)

// startServe runs serve with the zero configuration of the current
// directory (provider detection off) on a free loopback port. It returns
// the base URL, the server's log, and stop, which ends serve and fails the
// test if serve returned an error.
func startServe(t *testing.T) (base string, logs *bytes.Buffer, stop func()) {
	t.Helper()
	cfg, err := config.Load("", []string{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Server.Addr = "127.0.0.1:0"
	f := false
	cfg.DetectProviders = &f
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	logs = &bytes.Buffer{}
	go func() { done <- serve(ctx, cfg, newLogger(&syncWriter{w: logs}, cfg.Log), ready) }()
	select {
	case addr := <-ready:
		return "http://" + addr, logs, func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
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
