package cli

import (
	"bytes"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/store"
)

// TestRegisterRefusesALiveDuplicate: a process may not execute under the
// name of a live process elsewhere (both would hold the same leases); a
// row left by a process that died on this host is taken over, and leave
// removes the row.
func TestRegisterRefusesALiveDuplicate(t *testing.T) {
	t.Chdir(t.TempDir())
	ctx := t.Context()
	cfg, err := config.Load("", []string{})
	if err != nil {
		t.Fatal(err)
	}
	u, err := parseDatabase(cfg.Database.URL)
	if err != nil {
		t.Fatal(err)
	}
	o, err := openDatabase(ctx, u, newLogger(&bytes.Buffer{}, cfg.Log))
	if err != nil {
		t.Fatal(err)
	}
	defer o.close()
	workers := o.st.Workers()
	none := func() []store.HeldRun { return nil }
	logger := slog.New(slog.DiscardHandler)
	host, _ := os.Hostname()

	if _, err := workers.Beat(ctx, store.Worker{ID: "w1", Kind: "worker", Host: "elsewhere", PID: 99, StartedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	_, err = register(ctx, workers, "worker", "w1", none, logger)
	if err == nil || !strings.Contains(err.Error(), "AGENTCRAFT_WORKER_ID") || !strings.Contains(err.Error(), "elsewhere") {
		t.Fatalf("register under a live name = %v, want a refusal naming the other host and AGENTCRAFT_WORKER_ID", err)
	}

	// A dead process of this host (no such pid) left its row: taken over.
	if _, err := workers.Beat(ctx, store.Worker{ID: "w2", Kind: "worker", Host: host, PID: 1 << 30, StartedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	r, err := register(ctx, workers, "worker", "w2", none, logger)
	if err != nil {
		t.Fatalf("register over a dead process's row = %v", err)
	}
	got, err := workers.Get(ctx, "w2")
	if err != nil || got.PID != os.Getpid() || got.Version != version() {
		t.Errorf("row after register = %+v, %v; want this process", got, err)
	}
	r.leave()
	r.leave() // idempotent
	if _, err := workers.Get(ctx, "w2"); err == nil {
		t.Errorf("row still there after leave")
	}
}
