// Package budget enforces the workspaces' monthly budgets of tokens and
// money. The run seam asks an Enforcer before every run (Check); a
// workspace that has spent 100 % of a budget this month is refused with an
// *llm.Error of kind llm.KindQuota (HTTP 429 on every surface), naming the
// budget and when it resets; at 80 % the Enforcer sends an audit event
// ("budget.warning") once per workspace, month and kind.
//
//	e := budget.New(st.Budgets(), st.Usage(), &budget.Options{Default: budget.Limits{Tokens: 5_000_000}})
//	if err := e.Check(ctx, workspaceID); err != nil { ... refuse ... }
//	h := e.Hold(workspaceID) // a run starts: ctx = budget.WithHold(ctx, h)
//	model = e.Model(model, workspaceID, cost) // checks and charges each call of a run
//	e.Add(rec); h.Release() // the run's usage record handed to the asynchronous writer
//	e.Written(recs, ok)     // the writer committed (or dropped) them
//
// Spending is read cheaply: the store keeps a running count per workspace
// and month (store.Usage.Spend, one row), which Check reads at most once
// per TTL per workspace; in between, the Enforcer adds what this process
// recorded since (Written) and what is still queued for the database
// (Add, until Written), and what its runs under way have spent so far
// (Hold, charged by Model after each model call). The count of this
// process is therefore exact; that of other processes (workers, other
// replicas) is seen within TTL. A budget is checked before a run and
// before each of its model calls, so a run under way is stopped at its
// next call once the budget is spent: the month ends at most one model
// call per running run over its limit (plus other processes' spending
// of the last TTL).
package budget

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/agentcraftlab/agentcraft/audit"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/pricing"
	"github.com/agentcraftlab/agentcraft/store"
)

// Limits are a month's budgets; zero is no limit.
type Limits struct {
	Tokens int64         `json:"tokens"`
	Cost   pricing.Money `json:"cost"`
}

// WarnPercent is the share of a budget at which the warning is sent.
const WarnPercent = 80

// DefaultTTL is how long a workspace's budget and stored spending are
// reused before Check reads them again.
const DefaultTTL = 5 * time.Second

// Options configure an Enforcer.
type Options struct {
	// Default applies to every workspace whose budget was not set through
	// the API. Default: no limits.
	Default Limits
	// TTL bounds how stale the stored spending and budget may be. Default
	// DefaultTTL.
	TTL time.Duration
	// Audit receives the 80 % warnings. Default nil: none.
	Audit func(ctx context.Context, e store.AuditEvent)
	// Logger receives warnings and refusals. Default: discard.
	Logger *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Currency names the unit of cost budgets in messages. Default USD.
	Currency string
}

// Enforcer checks and counts the workspaces' spending against their
// budgets. It is safe for concurrent use.
type Enforcer struct {
	budgets store.Budgets
	usage   store.Usage
	def     Limits
	ttl     time.Duration
	audit   func(context.Context, store.AuditEvent)
	logger  *slog.Logger
	now     func() time.Time
	cur     string

	mu sync.Mutex // guards ws
	ws map[string]*entry
}

// entry is one workspace's cached budget and spending.
type entry struct {
	// load serialises reading the store, so that a stale entry is read
	// once however many requests find it stale.
	load sync.Mutex

	mu sync.Mutex // guards the fields below
	// loadedAt is when base was read; zero when it must be read again.
	loadedAt time.Time
	// month is the month ("2026-12") base counts, from start to next.
	month       string
	start, next time.Time
	limits      Limits
	custom      bool
	// resetAt is the last admin reset, zero when none.
	resetAt time.Time
	// base is the store's running count when loaded; written is what this
	// process committed since; pending the part of queued made at or
	// after resetAt (what the store will count once it holds it).
	base, written, pending spend
	// queued are the records handed to the writer and not committed yet.
	queued []queuedRecord
	// warned are the kinds whose warning this month is known sent.
	warnedTokens, warnedCost bool
	// holds are the runs under way and what each has spent so far.
	holds map[*Hold]spend
}

// fresh reports whether the entry may be used at now: read within ttl, in
// the month it counts. en.mu must be held.
func (en *entry) fresh(now time.Time, ttl time.Duration) bool {
	return !en.loadedAt.IsZero() && now.Sub(en.loadedAt) < ttl && !now.Before(en.start) && now.Before(en.next)
}

// queuedRecord is a record waiting for the writer.
type queuedRecord struct {
	at time.Time
	s  spend
}

// setReset sets resetAt and recounts pending: records made before a
// reset are not counted (the store does not count them either). en.mu
// must be held.
func (en *entry) setReset(at time.Time) {
	if at.Equal(en.resetAt) {
		return
	}
	en.resetAt = at
	en.pending = spend{}
	for _, q := range en.queued {
		if !q.at.Before(at) {
			en.pending = en.pending.plus(q.s)
		}
	}
}

// spend is a count of tokens and money.
type spend struct {
	tokens int64
	cost   pricing.Money
}

func (s spend) plus(o spend) spend { return spend{s.tokens + o.tokens, s.cost + o.cost} }

func spendOf(r store.UsageRecord) spend {
	return spend{int64(r.InputTokens) + int64(r.OutputTokens), r.Cost}
}

// New returns an Enforcer over the store's budgets and usage.
func New(budgets store.Budgets, usage store.Usage, opts *Options) *Enforcer {
	var o Options
	if opts != nil {
		o = *opts
	}
	e := &Enforcer{budgets: budgets, usage: usage, def: o.Default, ttl: o.TTL, audit: o.Audit,
		logger: o.Logger, now: o.Now, cur: o.Currency, ws: map[string]*entry{}}
	if e.ttl <= 0 {
		e.ttl = DefaultTTL
	}
	if e.logger == nil {
		e.logger = slog.New(slog.DiscardHandler)
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.cur == "" {
		e.cur = pricing.DefaultCurrency
	}
	return e
}

func (e *Enforcer) entry(workspaceID string) *entry {
	e.mu.Lock()
	en := e.ws[workspaceID]
	if en == nil {
		en = &entry{}
		e.ws[workspaceID] = en
	}
	e.mu.Unlock()
	return en
}

// ExceededError is the cause of a refusal: which budget of which month is
// spent. Check returns it wrapped in an *llm.Error of kind KindQuota.
type ExceededError struct {
	Kind  store.BudgetKind
	Month string
	// Limit and Used are tokens or nano-units, as Kind says.
	Limit, Used int64
	// Since is when the month's count began (the month's start or the
	// last reset); ResetsAt is the start of the next month.
	Since, ResetsAt time.Time
}

// ErrExceeded is what every ExceededError matches with errors.Is.
var ErrExceeded = errors.New("budget exceeded")

func (x *ExceededError) Is(target error) bool { return target == ErrExceeded }

func (x *ExceededError) Error() string {
	return x.message(pricing.DefaultCurrency)
}

func (x *ExceededError) message(currency string) string {
	var what string
	switch x.Kind {
	case store.BudgetCost:
		what = fmt.Sprintf("monthly cost budget of %s %s (%s %s spent since %s)", pricing.Money(x.Limit), currency,
			pricing.Money(x.Used), currency, x.Since.UTC().Format(time.RFC3339))
	default:
		what = fmt.Sprintf("monthly token budget of %d tokens (%d used since %s)", x.Limit, x.Used, x.Since.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("this workspace has spent its %s; it resets at %s, or when an admin resets it (POST /api/budget/reset)",
		what, x.ResetsAt.UTC().Format(time.RFC3339))
}

// monthStart is the first instant of t's UTC month.
func monthStart(t time.Time) time.Time {
	u := t.UTC()
	return time.Date(u.Year(), u.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// Check refuses a run of workspaceID when one of its budgets is spent this
// month: the error is an *llm.Error of kind llm.KindQuota whose message
// names the budget and when it resets, with RetryAfter until then, and
// wraps an *ExceededError. Past 80 % of a budget it sends the month's
// warning, once. Reading the store fails open (logged): a database
// hiccup does not stop every chat.
func (e *Enforcer) Check(ctx context.Context, workspaceID string) error {
	now := e.now()
	en := e.entry(workspaceID)
	en.mu.Lock()
	if !en.fresh(now, e.ttl) {
		en.mu.Unlock()
		if err := e.refresh(ctx, workspaceID, en, now); err != nil {
			e.logger.Error("budget_read_failed", "workspace_id", workspaceID, "error", err)
			return nil
		}
		en.mu.Lock()
	}
	lim := en.limits
	if lim == (Limits{}) {
		en.mu.Unlock()
		return nil
	}
	month, since, next := en.month, en.start, en.next
	if en.resetAt.After(since) {
		since = en.resetAt
	}
	used := en.base.plus(en.written).plus(en.pending).plus(en.held(since))
	warnTokens := lim.Tokens > 0 && !en.warnedTokens && used.tokens*100 >= lim.Tokens*WarnPercent
	warnCost := lim.Cost > 0 && !en.warnedCost && int64(used.cost)*100 >= int64(lim.Cost)*WarnPercent
	en.mu.Unlock()

	// The warning is sent even if the client goes away meanwhile.
	if warnTokens {
		e.warn(context.WithoutCancel(ctx), workspaceID, en, store.BudgetTokens, month, lim.Tokens, used.tokens)
	}
	if warnCost {
		e.warn(context.WithoutCancel(ctx), workspaceID, en, store.BudgetCost, month, int64(lim.Cost), int64(used.cost))
	}
	var x *ExceededError
	switch {
	case lim.Tokens > 0 && used.tokens >= lim.Tokens:
		x = &ExceededError{Kind: store.BudgetTokens, Limit: lim.Tokens, Used: used.tokens}
	case lim.Cost > 0 && used.cost >= lim.Cost:
		x = &ExceededError{Kind: store.BudgetCost, Limit: int64(lim.Cost), Used: int64(used.cost)}
	default:
		return nil
	}
	x.Month, x.Since, x.ResetsAt = month, since, next
	msg := x.message(e.cur)
	e.logger.Debug("budget_exceeded", "workspace_id", workspaceID, "budget", string(x.Kind), "limit", x.Limit, "used", x.Used)
	return &llm.Error{Kind: llm.KindQuota, Message: msg, RetryAfter: x.ResetsAt.Sub(now), Err: x}
}

// refresh reads the workspace's budget and spending from the store.
func (e *Enforcer) refresh(ctx context.Context, workspaceID string, en *entry, now time.Time) error {
	en.load.Lock()
	defer en.load.Unlock()
	month := store.MonthKey(now)
	en.mu.Lock()
	fresh := en.fresh(now, e.ttl)
	en.mu.Unlock()
	if fresh { // another request read it while this one waited
		return nil
	}
	b, err := e.budgets.Get(ctx, workspaceID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	limits := e.def
	if b.Custom {
		limits = Limits{Tokens: b.Tokens, Cost: b.Cost}
	}
	s, err := e.usage.Spend(ctx, workspaceID, now)
	if err != nil {
		return err
	}
	en.mu.Lock()
	defer en.mu.Unlock()
	en.setReset(b.ResetAt)
	en.loadedAt, en.month, en.limits, en.custom = now, month, limits, b.Custom
	en.start = monthStart(now)
	en.next = en.start.AddDate(0, 1, 0)
	en.base, en.written = spend{s.Tokens, s.Cost}, spend{}
	en.warnedTokens, en.warnedCost = b.WarnedTokens == month, b.WarnedCost == month
	return nil
}

// warn sends the month's warning of kind unless another request or
// process sent it (store.Budgets.MarkWarned decides).
func (e *Enforcer) warn(ctx context.Context, workspaceID string, en *entry, kind store.BudgetKind, month string, limit, used int64) {
	first, err := e.budgets.MarkWarned(ctx, workspaceID, kind, month)
	if err != nil {
		e.logger.Error("budget_warning_failed", "workspace_id", workspaceID, "budget", string(kind), "error", err)
		return
	}
	en.mu.Lock()
	if kind == store.BudgetTokens {
		en.warnedTokens = true
	} else {
		en.warnedCost = true
	}
	en.mu.Unlock()
	if !first {
		return
	}
	details := map[string]any{"budget": string(kind), "month": month, "percent": used * 100 / max(limit, 1), "limit": limit, "used": used}
	if kind == store.BudgetCost {
		details["limit"], details["used"], details["currency"] = pricing.Money(limit), pricing.Money(used), e.cur
	}
	e.logger.Warn("budget_warning", "workspace_id", workspaceID, "budget", string(kind), "month", month, "limit", limit, "used", used)
	if e.audit != nil {
		e.audit(ctx, store.AuditEvent{WorkspaceID: workspaceID, Actor: audit.ActorSystem, Action: "budget.warning",
			Target: "budget:" + string(kind), Details: audit.Details(details)})
	}
}

// Add counts a usage record that was handed to the asynchronous writer
// and is not in the store yet.
func (e *Enforcer) Add(r store.UsageRecord) {
	en := e.entry(r.WorkspaceID)
	q := queuedRecord{at: r.CreatedAt, s: spendOf(r)}
	en.mu.Lock()
	en.queued = append(en.queued, q)
	if !q.at.Before(en.resetAt) {
		en.pending = en.pending.plus(q.s)
	}
	en.mu.Unlock()
}

// Written moves records counted by Add out of pending: into what this
// process wrote since the last read when ok (the store committed them),
// nowhere when the write failed and they were dropped.
func (e *Enforcer) Written(recs []store.UsageRecord, ok bool) {
	for _, r := range recs {
		en := e.entry(r.WorkspaceID)
		s := spendOf(r)
		en.mu.Lock()
		// Records of one workspace are interchangeable when they match.
		if i := slices.Index(en.queued, queuedRecord{at: r.CreatedAt, s: s}); i >= 0 {
			en.queued = slices.Delete(en.queued, i, i+1)
			if !r.CreatedAt.Before(en.resetAt) {
				en.pending = en.pending.plus(spend{-s.tokens, -s.cost})
				if ok && !r.CreatedAt.Before(en.start) && r.CreatedAt.Before(en.next) {
					en.written = en.written.plus(s)
				}
			}
		}
		en.mu.Unlock()
	}
}

// Status is a workspace's budget as GET /api/budget shows it.
type Status struct {
	// Limits are the month's budgets in force; Custom says they were set
	// through the API rather than being the configuration's default.
	Limits Limits `json:"limits"`
	Custom bool   `json:"custom"`
	// Default is the configuration's default.
	Default Limits `json:"default"`
	// Month is "2026-12"; Since is when its count began (its start or
	// the last reset) and ResetsAt the start of the next month.
	Month    string    `json:"month"`
	Since    time.Time `json:"since"`
	ResetsAt time.Time `json:"resets_at"`
	// Used is what the month has spent so far, this process's queued
	// records and its runs under way included; InFlight is the part
	// spent by this process's runs under way (not recorded yet).
	Used     Limits `json:"used"`
	InFlight Limits `json:"in_flight"`
	Currency string `json:"currency"`
}

// Status reads the workspace's budget and spending afresh.
func (e *Enforcer) Status(ctx context.Context, workspaceID string) (Status, error) {
	now := e.now()
	en := e.entry(workspaceID)
	en.mu.Lock()
	en.loadedAt = time.Time{}
	en.mu.Unlock()
	if err := e.refresh(ctx, workspaceID, en, now); err != nil {
		return Status{}, err
	}
	en.mu.Lock()
	defer en.mu.Unlock()
	since := en.start
	if en.resetAt.After(since) {
		since = en.resetAt
	}
	held := en.held(since)
	used := en.base.plus(en.written).plus(en.pending).plus(held)
	return Status{Limits: en.limits, Custom: en.custom, Default: e.def, Month: en.month, Since: since,
		ResetsAt: en.next, Used: Limits{Tokens: used.tokens, Cost: used.cost},
		InFlight: Limits{Tokens: held.tokens, Cost: held.cost}, Currency: e.cur}, nil
}

// Set stores the workspace's own limits (replacing the default) and
// returns the new status; Check sees them at once in this process and
// within TTL in others.
func (e *Enforcer) Set(ctx context.Context, workspaceID string, l Limits) (Status, error) {
	if _, err := e.budgets.Put(ctx, store.Budget{WorkspaceID: workspaceID, Custom: true, Tokens: l.Tokens, Cost: l.Cost}); err != nil {
		return Status{}, err
	}
	return e.Status(ctx, workspaceID)
}

// UseDefault drops the workspace's own limits: the configuration's
// default applies again.
func (e *Enforcer) UseDefault(ctx context.Context, workspaceID string) (Status, error) {
	if _, err := e.budgets.Put(ctx, store.Budget{WorkspaceID: workspaceID}); err != nil {
		return Status{}, err
	}
	return e.Status(ctx, workspaceID)
}

// Reset starts the month's count afresh from now (an admin's reset): the
// stored running count is zeroed and the month's warnings cleared, so
// that requests run again and the 80 % warning is sent again when the
// new count reaches it.
func (e *Enforcer) Reset(ctx context.Context, workspaceID string) (Status, error) {
	if _, err := e.budgets.Reset(ctx, workspaceID, e.now()); err != nil {
		return Status{}, err
	}
	return e.Status(ctx, workspaceID)
}
