package budget

import (
	"context"
	"iter"
	"sync"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/pricing"
)

// A Hold counts what one run under way has spent, model call by model
// call, before its usage record exists: Check adds the holds of a
// workspace to its spending, so that a budget spent in the middle of a
// long run (an autonomous agent's hundred steps, a workflow's twenty
// agent nodes) stops that run at its next model call, not a run later.
// The run seam opens a hold when a run starts (Enforcer.Hold, carried in
// its context by WithHold), Model charges it after each call, and the run
// releases it once its usage record has been handed to Add.
//
// A hold counts toward the month and reset of its start, as its usage
// record will (the record is stamped with the run's start).
type Hold struct {
	en    *entry
	start time.Time

	mu       sync.Mutex // guards released; the spend is the entry's
	released bool
}

// Hold opens a hold on workspaceID's spending, starting now.
func (e *Enforcer) Hold(workspaceID string) *Hold {
	en := e.entry(workspaceID)
	h := &Hold{en: en, start: e.now()}
	en.mu.Lock()
	if en.holds == nil {
		en.holds = map[*Hold]spend{}
	}
	en.holds[h] = spend{}
	en.mu.Unlock()
	return h
}

// Charge counts tokens and cost against the hold (nothing once released;
// a nil hold ignores it).
func (h *Hold) Charge(tokens int64, cost pricing.Money) {
	if h == nil {
		return
	}
	h.en.mu.Lock()
	defer h.en.mu.Unlock()
	if s, ok := h.en.holds[h]; ok {
		h.en.holds[h] = s.plus(spend{tokens, cost})
	}
}

// Release drops the hold: what it counted is in the run's usage record
// now (or never will be). Idempotent; a nil hold does nothing.
func (h *Hold) Release() {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		return
	}
	h.released = true
	h.en.mu.Lock()
	delete(h.en.holds, h)
	h.en.mu.Unlock()
}

// held is what the entry's holds started at or after since have counted.
// en.mu must be held.
func (en *entry) held(since time.Time) spend {
	var s spend
	for h, hs := range en.holds {
		if !h.start.Before(since) {
			s = s.plus(hs)
		}
	}
	return s
}

type holdKey struct{}

// WithHold returns ctx carrying h, for Model to charge.
func WithHold(ctx context.Context, h *Hold) context.Context {
	return context.WithValue(ctx, holdKey{}, h)
}

// HoldFrom returns the hold ctx carries, nil when none.
func HoldFrom(ctx context.Context) *Hold {
	h, _ := ctx.Value(holdKey{}).(*Hold)
	return h
}

// Model wraps next so that a call made within a run (its context carries
// a Hold) is first checked against the workspace's budgets, the run's
// spending so far included, and refused with Check's *llm.Error (kind
// quota, naming the budget) once one is spent; the tokens and cost (by
// cost) the provider reports are charged to the hold. A call outside a
// run (no hold) passes through: the run seam is where runs are admitted.
func (e *Enforcer) Model(next llm.Model, workspaceID string, cost func(llm.Usage) pricing.Money) llm.Model {
	return &budgeted{next: next, e: e, ws: workspaceID, cost: cost}
}

type budgeted struct {
	next llm.Model
	e    *Enforcer
	ws   string
	cost func(llm.Usage) pricing.Money
}

func (b *budgeted) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	h := HoldFrom(ctx)
	if h == nil {
		return b.next.Generate(ctx, req)
	}
	if err := b.e.Check(ctx, b.ws); err != nil {
		return llm.Response{}, err
	}
	resp, err := b.next.Generate(ctx, req)
	b.charge(h, &resp.Usage)
	return resp, err
}

func (b *budgeted) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	h := HoldFrom(ctx)
	if h == nil {
		return b.next.Stream(ctx, req)
	}
	return func(yield func(llm.Event, error) bool) {
		if err := b.e.Check(ctx, b.ws); err != nil {
			yield(llm.Event{}, err)
			return
		}
		for ev, err := range b.next.Stream(ctx, req) {
			if err == nil && ev.Type == llm.EventFinish && ev.Usage != nil {
				b.charge(h, ev.Usage)
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

func (b *budgeted) charge(h *Hold, u *llm.Usage) {
	if u == nil || *u == (llm.Usage{}) {
		return
	}
	var c pricing.Money
	if b.cost != nil {
		c = b.cost(*u)
	}
	h.Charge(int64(u.InputTokens)+int64(u.OutputTokens), c)
}
