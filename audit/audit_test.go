package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/audit"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name, in string
		gone     []string // must not survive
		kept     []string // must survive
	}{
		{"email", "mail alice@example.com now", []string{"alice@example.com"}, []string{"mail", "now"}},
		{"card", "card 4111 1111 1111 1111 please", []string{"4111 1111 1111 1111", "4111"}, []string{"please"}},
		{"card cut short", "pay with 4111 1111 1111 11", []string{"4111 1111 1111 11"}, []string{"pay with"}},
		{"phone", "call +1 415 555 2671", []string{"415 555 2671", "555"}, []string{"call"}},
		{"iban", "IBAN GB82 WEST 1234 5698 7654 32", []string{"GB82 WEST 1234 5698 7654 32"}, []string{}},
		{"tw id", "身分證 A123456789", []string{"A123456789"}, []string{"身分證"}},
		{"ipv4", "host 192.168.10.20", []string{"192.168.10.20"}, []string{"host"}},
		{"no pii", "build a bomb", nil, []string{"build a bomb"}},
		{"short numbers kept", "version 2 of 12", nil, []string{"version 2 of 12"}},
	}
	for _, tt := range tests {
		got := audit.Redact(tt.in)
		for _, g := range tt.gone {
			if strings.Contains(got, g) {
				t.Errorf("%s: Redact(%q) = %q, still contains %q", tt.name, tt.in, got, g)
			}
		}
		for _, k := range tt.kept {
			if !strings.Contains(got, k) {
				t.Errorf("%s: Redact(%q) = %q, lost %q", tt.name, tt.in, got, k)
			}
		}
	}
}

func TestDetails(t *testing.T) {
	got := audit.Details(map[string]any{
		"rule":     "cards",
		"match":    "card 4111111111111111",
		"count":    3,
		"entities": map[string]int{"Global.Email": 1},
		"nested":   map[string]any{"to": []any{"bob@example.org", 7, true}},
		"list":     []string{"alice@example.com"},
	})
	s := string(got)
	for _, v := range []string{"4111111111111111", "bob@example.org", "alice@example.com"} {
		if strings.Contains(s, v) {
			t.Errorf("Details = %s, contains %q", s, v)
		}
	}
	var back map[string]any
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("Details is not JSON: %v", err)
	}
	if back["rule"] != "cards" || back["count"] != 3.0 || back["entities"].(map[string]any)["Global.Email"] != 1.0 {
		t.Errorf("Details = %s, lost plain fields", s)
	}
	if audit.Details(nil) != nil {
		t.Errorf("Details(nil) = %s, want nil", audit.Details(nil))
	}
}

func openStore(t *testing.T) (*sqlite.Store, store.Workspace) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	ws, err := st.Workspaces().Create(t.Context(), store.Workspace{Name: "w"})
	if err != nil {
		t.Fatal(err)
	}
	return st, ws
}

func TestAsyncRecorderWritesEverythingOnStop(t *testing.T) {
	st, ws := openStore(t)
	rec := audit.NewAsyncRecorder(st.AuditLog(), nil)
	ctx := audit.WithScope(t.Context(), audit.Scope{WorkspaceID: ws.ID, Actor: audit.APIKeyActor("k1")})
	const goroutines, each = 8, 100
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				rec.Record(ctx, store.AuditEvent{Action: "guard.warn"})
			}
		})
	}
	wg.Wait()
	rec.Stop()
	rec.Stop() // idempotent
	// After Stop, Record writes at once.
	rec.Record(context.Background(), store.AuditEvent{WorkspaceID: ws.ID, Action: "agent.delete"})

	page, err := st.AuditLog().List(t.Context(), store.AuditFilter{WorkspaceID: ws.ID, Limit: store.MaxAuditLimit})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(page.Events), goroutines*each+1; got != want || rec.Dropped() != 0 {
		t.Fatalf("stored %d events (dropped %d), want %d", got, rec.Dropped(), want)
	}
	if e := page.Events[0]; e.Action != "agent.delete" || e.Actor != audit.ActorSystem {
		t.Errorf("event recorded without scope = %+v, want actor %q", e, audit.ActorSystem)
	}
	if e := page.Events[1]; e.Actor != "apikey:k1" || e.WorkspaceID != ws.ID {
		t.Errorf("event recorded with scope = %+v, want actor apikey:k1 in %s", e, ws.ID)
	}
}

// blockingLog blocks every Append until release is closed.
type blockingLog struct {
	store.AuditLog
	release chan struct{}
}

func (b blockingLog) Append(ctx context.Context, events ...store.AuditEvent) error {
	<-b.release
	return b.AuditLog.Append(ctx, events...)
}

func TestAsyncRecorderDropsWhenFullWithoutBlocking(t *testing.T) {
	st, ws := openStore(t)
	var logs bytes.Buffer
	bl := blockingLog{AuditLog: st.AuditLog(), release: make(chan struct{})}
	rec := audit.NewAsyncRecorder(bl, &audit.Options{Buffer: 4, MaxBatch: 2, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	start := time.Now()
	for range 20 {
		rec.Record(t.Context(), store.AuditEvent{WorkspaceID: ws.ID, Action: "pii.detected"})
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("20 Records against a stuck store took %v; Record must not block", d)
	}
	close(bl.release)
	rec.Stop()
	page, err := st.AuditLog().List(t.Context(), store.AuditFilter{WorkspaceID: ws.ID})
	if err != nil {
		t.Fatal(err)
	}
	// The writer holds one batch (up to 2) while the buffer holds 4.
	if n := len(page.Events); n < 4 || n > 6 || int64(n)+rec.Dropped() != 20 {
		t.Errorf("stored %d and dropped %d of 20; want 4-6 stored and the rest counted as dropped", n, rec.Dropped())
	}
	if !strings.Contains(logs.String(), "audit_event_dropped") {
		t.Errorf("no audit_event_dropped in the log:\n%s", logs.String())
	}
}

func TestAsyncRecorderRejectsInvalid(t *testing.T) {
	st, ws := openStore(t)
	rec := audit.NewAsyncRecorder(st.AuditLog(), nil)
	rec.Record(t.Context(), store.AuditEvent{Action: "agent.create"})                                  // no workspace
	rec.Record(t.Context(), store.AuditEvent{WorkspaceID: "gone", Action: "agent.create"})             // unknown workspace
	rec.Record(t.Context(), store.AuditEvent{WorkspaceID: ws.ID, Action: "agent.create", Target: "x"}) // fine
	rec.Stop()
	page, err := st.AuditLog().List(t.Context(), store.AuditFilter{WorkspaceID: ws.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 1 || rec.Dropped() != 2 {
		t.Errorf("stored %d, dropped %d; want the valid event stored and 2 dropped", len(page.Events), rec.Dropped())
	}
}
