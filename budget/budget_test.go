package budget_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/budget"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/pricing"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
)

func openStore(t testing.TB) (*sqlite.Store, store.Workspace) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	ws, err := st.Workspaces().Create(context.Background(), store.Workspace{Name: "w"})
	if err != nil {
		t.Fatal(err)
	}
	return st, ws
}

// clock is a settable time.
type clock struct {
	mu sync.Mutex // guards t
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// auditLog collects the events an Enforcer sends.
type auditLog struct {
	mu     sync.Mutex // guards events
	events []store.AuditEvent
}

func (a *auditLog) record(_ context.Context, e store.AuditEvent) {
	a.mu.Lock()
	a.events = append(a.events, e)
	a.mu.Unlock()
}

func (a *auditLog) count(action string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, e := range a.events {
		if e.Action == action {
			n++
		}
	}
	return n
}

func rec(ws store.Workspace, at time.Time, tokens int, cost pricing.Money) store.UsageRecord {
	return store.UsageRecord{WorkspaceID: ws.ID, Provider: "openai", Model: "gpt-4o", InputTokens: tokens, Cost: cost,
		Status: store.StatusOK, CreatedAt: at}
}

// queue does what the platform's usage recorder does with a record: Add,
// then (later) write it and report Written.
func queue(t *testing.T, st store.Store, e *budget.Enforcer, r store.UsageRecord, write bool) {
	t.Helper()
	e.Add(r)
	if write {
		if err := st.Usage().Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		e.Written([]store.UsageRecord{r}, true)
	}
}

func TestCheck(t *testing.T) {
	st, ws := openStore(t)
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 12, 10, 12, 0, 0, 0, time.UTC)}
	log := &auditLog{}
	e := budget.New(st.Budgets(), st.Usage(), &budget.Options{Default: budget.Limits{Tokens: 1000}, TTL: time.Minute,
		Audit: log.record, Now: clk.Now})

	if err := e.Check(ctx, ws.ID); err != nil {
		t.Fatalf("Check(nothing spent) = %v", err)
	}
	// Queued and written records both count at once, without waiting for
	// the TTL: 500 written, 300 queued.
	queue(t, st, e, rec(ws, clk.Now(), 500, 0), true)
	queue(t, st, e, rec(ws, clk.Now(), 300, 0), false)
	if err := e.Check(ctx, ws.ID); err != nil || log.count("budget.warning") != 1 {
		t.Fatalf("Check(80 %%) = %v with %d warnings; want nil and one warning", err, log.count("budget.warning"))
	}
	if err := e.Check(ctx, ws.ID); err != nil || log.count("budget.warning") != 1 {
		t.Fatalf("Check(80 %% again) = %v with %d warnings; want still one", err, log.count("budget.warning"))
	}
	queue(t, st, e, rec(ws, clk.Now(), 200, 0), false)
	err := e.Check(ctx, ws.ID)
	var le *llm.Error
	var x *budget.ExceededError
	if !errors.As(err, &le) || le.Kind != llm.KindQuota || !errors.As(err, &x) || !errors.Is(err, budget.ErrExceeded) {
		t.Fatalf("Check(100 %%) = %v; want an llm.KindQuota error wrapping ExceededError", err)
	}
	if x.Kind != store.BudgetTokens || x.Used != 1000 || x.Limit != 1000 || !x.ResetsAt.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) ||
		le.RetryAfter != x.ResetsAt.Sub(clk.Now()) || !strings.Contains(le.Message, "resets at 2027-01-01T00:00:00Z") {
		t.Errorf("refusal = %+v (%q, retry after %v)", x, le.Message, le.RetryAfter)
	}

	// Another process sees what this one wrote once its TTL passes.
	other := budget.New(st.Budgets(), st.Usage(), &budget.Options{Default: budget.Limits{Tokens: 1000}, TTL: time.Minute, Now: clk.Now})
	if err := other.Check(ctx, ws.ID); err != nil {
		t.Fatalf("other.Check = %v; want nil: only 500 are stored yet", err)
	}
	// The queued records reach the store.
	for _, n := range []int{300, 200} {
		r := rec(ws, clk.Now(), n, 0)
		if err := st.Usage().Record(ctx, r); err != nil {
			t.Fatal(err)
		}
		e.Written([]store.UsageRecord{r}, true)
	}
	if err := e.Check(ctx, ws.ID); err == nil {
		t.Error("Check after the queued records were written = nil; want still refused (written once, not twice)")
	}
	if err := other.Check(ctx, ws.ID); err != nil {
		t.Errorf("other.Check within its TTL = %v; want its cached nil", err)
	}
	clk.add(2 * time.Minute)
	if err := other.Check(ctx, ws.ID); err == nil {
		t.Error("other.Check after its TTL = nil; want refused from the stored count")
	}

	// The next month starts afresh.
	clk.add(30 * 24 * time.Hour)
	if err := e.Check(ctx, ws.ID); err != nil {
		t.Errorf("Check in January = %v; want nil", err)
	}
}

func TestResetAndDroppedRecords(t *testing.T) {
	st, ws := openStore(t)
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 12, 10, 12, 0, 0, 0, time.UTC)}
	log := &auditLog{}
	e := budget.New(st.Budgets(), st.Usage(), &budget.Options{Audit: log.record, Now: clk.Now})
	if _, err := e.Set(ctx, ws.ID, budget.Limits{Cost: pricing.Unit}); err != nil {
		t.Fatal(err)
	}
	queue(t, st, e, rec(ws, clk.Now(), 1, pricing.Unit/2), true)
	early := rec(ws, clk.Now(), 1, pricing.Unit) // queued before the reset, written after it
	queue(t, st, e, early, false)
	if err := e.Check(ctx, ws.ID); err == nil {
		t.Fatal("Check(1.5 of 1.00) = nil; want refused")
	}
	clk.add(time.Second)
	s, err := e.Reset(ctx, ws.ID)
	if err != nil || s.Used != (budget.Limits{}) || !s.Since.Equal(clk.Now()) {
		t.Fatalf("Reset = %+v, %v; want nothing used since now", s, err)
	}
	if err := e.Check(ctx, ws.ID); err != nil {
		t.Fatalf("Check after reset = %v; want nil", err)
	}
	if err := st.Usage().Record(ctx, early); err != nil {
		t.Fatal(err)
	}
	e.Written([]store.UsageRecord{early}, true)
	if s, _ := e.Status(ctx, ws.ID); s.Used.Cost != 0 {
		t.Errorf("after the early record was written: used %v; want 0 (asked before the reset)", s.Used.Cost)
	}
	// A record the writer dropped stops counting.
	lost := rec(ws, clk.Now(), 1, 2*pricing.Unit)
	e.Add(lost)
	if err := e.Check(ctx, ws.ID); err == nil {
		t.Error("Check with 2.00 queued = nil; want refused")
	}
	e.Written([]store.UsageRecord{lost}, false)
	if err := e.Check(ctx, ws.ID); err != nil {
		t.Errorf("Check after the queued record was dropped = %v; want nil", err)
	}
	// The warning is sent again after a reset, for the new count.
	queue(t, st, e, rec(ws, clk.Now(), 1, pricing.Unit*9/10), true)
	if err := e.Check(ctx, ws.ID); err != nil {
		t.Fatal(err)
	}
	if n := log.count("budget.warning"); n != 2 {
		t.Errorf("%d warnings; want 2 (one before the reset, one after)", n)
	}
}

// failingBudgets fails every read.
type failingBudgets struct{ store.Budgets }

func (failingBudgets) Get(context.Context, string) (store.Budget, error) {
	return store.Budget{}, errors.New("database is gone")
}

func TestCheckFailsOpen(t *testing.T) {
	st, ws := openStore(t)
	e := budget.New(failingBudgets{st.Budgets()}, st.Usage(), &budget.Options{Default: budget.Limits{Tokens: 1}})
	e.Add(rec(ws, time.Now(), 100, 0))
	if err := e.Check(context.Background(), ws.ID); err != nil {
		t.Errorf("Check with the store failing = %v; want nil (a database hiccup does not stop every chat)", err)
	}
}

// BenchmarkCheck is the budget check every chat request makes: a
// workspace with limits, its spending cached (the common case), and one
// whose cache has expired every time (a read of the budget and of the
// month's running count, one row each).
func BenchmarkCheck(b *testing.B) {
	st, ws := openStore(b)
	ctx := context.Background()
	e := budget.New(st.Budgets(), st.Usage(), &budget.Options{Default: budget.Limits{Tokens: 1 << 40, Cost: 1 << 50}})
	if err := st.Usage().Record(ctx, rec(ws, time.Now(), 10, 10)); err != nil {
		b.Fatal(err)
	}
	// The clock alone, for scale: Check reads it once.
	b.Run("time_now", func(b *testing.B) {
		b.ReportAllocs()
		var t time.Time
		for b.Loop() {
			t = time.Now()
		}
		_ = t
	})
	b.Run("cached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := e.Check(ctx, ws.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached_parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := e.Check(ctx, ws.ID); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	clk := &clock{t: time.Now()}
	cold := budget.New(st.Budgets(), st.Usage(), &budget.Options{Default: budget.Limits{Tokens: 1 << 40}, TTL: time.Nanosecond, Now: clk.Now})
	b.Run("store_read", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			clk.add(time.Millisecond)
			if err := cold.Check(ctx, ws.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
}
