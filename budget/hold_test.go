package budget_test

import (
	"context"
	"errors"
	"iter"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/budget"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/pricing"
)

// usageModel answers every call with usage, streamed or not.
type usageModel struct {
	calls int
	usage llm.Usage
}

func (m *usageModel) Generate(context.Context, llm.Request) (llm.Response, error) {
	m.calls++
	return llm.Response{Usage: m.usage}, nil
}

func (m *usageModel) Stream(context.Context, llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		m.calls++
		u := m.usage
		yield(llm.Event{Type: llm.EventFinish, Usage: &u}, nil)
	}
}

// TestHoldStopsARunUnderWay: what a run under way has spent, charged to
// its hold call by call, counts in Check before its usage record exists;
// Model refuses the call that would go past a spent budget; released
// after its record is queued, nothing is counted twice; a hold opened
// before an admin's reset does not count after it.
func TestHoldStopsARunUnderWay(t *testing.T) {
	st, ws := openStore(t)
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 12, 10, 12, 0, 0, 0, time.UTC)}
	e := budget.New(st.Budgets(), st.Usage(), &budget.Options{Default: budget.Limits{Tokens: 1000, Cost: 10 * pricing.Unit},
		TTL: time.Minute, Now: clk.Now})
	next := &usageModel{usage: llm.Usage{InputTokens: 350, OutputTokens: 50}}
	model := e.Model(next, ws.ID, func(u llm.Usage) pricing.Money { return pricing.Money(u.Total()) * pricing.Unit / 1000 })

	// Outside a run (no hold), calls pass through unchecked and uncharged.
	for range 3 {
		if _, err := model.Generate(ctx, llm.Request{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Check(ctx, ws.ID); err != nil {
		t.Fatalf("Check after calls outside a run = %v; want nothing counted", err)
	}

	h := e.Hold(ws.ID)
	run := budget.WithHold(ctx, h)
	if budget.HoldFrom(run) != h || budget.HoldFrom(ctx) != nil {
		t.Fatal("HoldFrom does not return the hold WithHold put")
	}
	// 0, 400 and 800 spent before the first three calls; the fourth is
	// refused, streamed too.
	for i := range 3 {
		stream := i == 1
		var err error
		if stream {
			for _, e := range model.Stream(run, llm.Request{}) {
				err = e
			}
		} else {
			_, err = model.Generate(run, llm.Request{})
		}
		if err != nil {
			t.Fatalf("call %d (stream %t) = %v; want it through", i+1, stream, err)
		}
	}
	s, err := e.Status(ctx, ws.ID)
	if err != nil || s.Used.Tokens != 1200 || s.InFlight.Tokens != 1200 || s.InFlight.Cost != pricing.Money(1200)*pricing.Unit/1000 {
		t.Fatalf("Status = %+v, %v; want 1200 tokens in flight and used", s, err)
	}
	_, err = model.Generate(run, llm.Request{})
	var x *budget.ExceededError
	if !errors.As(err, &x) || x.Used != 1200 || next.calls != 6 {
		t.Fatalf("fourth call = %v after %d calls; want refused at 1200 used, without calling the model", err, next.calls)
	}
	var streamErr error
	for _, e := range model.Stream(run, llm.Request{}) {
		streamErr = e
	}
	if !errors.Is(streamErr, budget.ErrExceeded) || next.calls != 6 {
		t.Fatalf("fourth call streamed = %v after %d calls; want refused", streamErr, next.calls)
	}

	// The run ends: its record is queued, then the hold released. The
	// spending stays 1200, counted once.
	e.Add(rec(ws, clk.Now(), 1200, 0))
	h.Release()
	h.Release() // idempotent
	h.Charge(5000, 0)
	if s, _ := e.Status(ctx, ws.ID); s.Used.Tokens != 1200 || s.InFlight.Tokens != 0 {
		t.Errorf("after the record and the release: %+v; want 1200 used, none in flight", s)
	}

	// An admin resets: a run that started before the reset does not count.
	clk.add(time.Minute)
	old := e.Hold(ws.ID)
	old.Charge(900, 0)
	clk.add(time.Minute)
	if _, err := e.Reset(ctx, ws.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.Check(ctx, ws.ID); err != nil {
		t.Errorf("Check after a reset = %v; want the hold of a run started before it left out", err)
	}
	clk.add(time.Second)
	fresh := e.Hold(ws.ID)
	fresh.Charge(1000, 0)
	if err := e.Check(ctx, ws.ID); !errors.Is(err, budget.ErrExceeded) {
		t.Errorf("Check with 1000 in flight since the reset = %v; want refused", err)
	}
	fresh.Release()
	old.Release()
	if err := e.Check(ctx, ws.ID); err != nil {
		t.Errorf("Check once both are released = %v", err)
	}
	var nilHold *budget.Hold
	nilHold.Charge(1, 1)
	nilHold.Release()
}
