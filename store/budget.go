package store

import (
	"context"
	"fmt"
	"time"

	"github.com/agentcraftlab/agentcraft/pricing"
)

// BudgetKind names what a budget limits.
type BudgetKind string

// Budget kinds.
const (
	BudgetTokens BudgetKind = "tokens" // input + output tokens per month
	BudgetCost   BudgetKind = "cost"   // money per month, in the price table's currency
)

// Budget is a workspace's monthly limits and the state of their month.
type Budget struct {
	WorkspaceID string `json:"workspace_id"`
	// Custom says the limits were set through the API; when false the
	// configuration's default limits apply and Tokens and Cost are
	// ignored.
	Custom bool `json:"custom"`
	// Tokens and Cost limit a UTC month's spending; 0 is no limit.
	Tokens int64         `json:"tokens"`
	Cost   pricing.Money `json:"cost"`
	// ResetAt is when an admin last reset the month's count; zero when
	// never.
	ResetAt time.Time `json:"reset_at,omitzero"`
	// WarnedTokens and WarnedCost are the months ("2026-12") whose 80 %
	// warning was sent, "" when none.
	WarnedTokens string    `json:"-"`
	WarnedCost   string    `json:"-"`
	UpdatedAt    time.Time `json:"updated_at,omitzero"`
}

// Budgets stores the workspaces' monthly budgets.
type Budgets interface {
	// Get returns the workspace's budget; ErrNotFound when none was ever
	// set or reset.
	Get(ctx context.Context, workspaceID string) (Budget, error)
	// Put sets the workspace's limits (b.Custom, b.Tokens, b.Cost),
	// keeping its reset time and warnings, and returns the row as stored.
	// Negative limits give ErrInvalid; an unknown workspace ErrNotFound.
	Put(ctx context.Context, b Budget) (Budget, error)
	// Reset, in one transaction, zeroes the running count of the month
	// holding at (Usage.Spend counts afresh from then), clears the
	// month's warnings and stamps ResetAt; a workspace without a budget
	// row gets one that keeps the default limits (Custom false).
	Reset(ctx context.Context, workspaceID string, at time.Time) (Budget, error)
	// MarkWarned records that the 80 % warning of kind was sent for
	// month ("2026-12") and reports whether this call recorded it: of
	// many processes asking at once exactly one gets true, so the
	// warning is sent once per workspace, month and kind.
	MarkWarned(ctx context.Context, workspaceID string, kind BudgetKind, month string) (bool, error)
}

// UsageSpendDelta is what a batch of usage records adds to one
// workspace's month.
type UsageSpendDelta struct {
	WorkspaceID string
	Month       string
	Tokens      int64
	Cost        pricing.Money
	Requests    int64
}

// BudgetDriver holds the verbs of Budgets.
type BudgetDriver interface {
	// BudgetGet returns ErrNotFound for a workspace without a row.
	BudgetGet(ctx context.Context, workspaceID string) (Budget, error)
	// BudgetUpsert writes the limits and UpdatedAt of p.Budget, inserting
	// the row (no reset, no warnings) when there is none.
	BudgetUpsert(ctx context.Context, b Budget) (Budget, error)
	// BudgetReset does Budgets.Reset: zeroes budget_spend of (workspace,
	// month), clears the warnings, sets reset_at and updated_at to at
	// (inserting a Custom false row without limits when there is none).
	BudgetReset(ctx context.Context, workspaceID, month string, at time.Time) (Budget, error)
	// BudgetMarkWarned sets the warned month of kind when it differs and
	// reports whether it did; a workspace without a row gets one (Custom
	// false).
	BudgetMarkWarned(ctx context.Context, workspaceID string, kind BudgetKind, month string, at time.Time) (bool, error)
}

// budgets is Budgets on a Driver.
type budgets struct{ c Core }

// Budgets implements Store.
func (c Core) Budgets() Budgets { return budgets{c} }

func (r budgets) Get(ctx context.Context, workspaceID string) (Budget, error) {
	b, err := r.c.d.BudgetGet(ctx, workspaceID)
	if err != nil {
		return Budget{}, r.c.errorf("get budget: %w", err)
	}
	return b, nil
}

func (r budgets) Put(ctx context.Context, b Budget) (Budget, error) {
	switch {
	case b.WorkspaceID == "":
		return Budget{}, r.c.errorf("put budget: %w", fmt.Errorf("%w: budget workspace id is empty", ErrInvalid))
	case b.Tokens < 0:
		return Budget{}, r.c.errorf("put budget: %w", fmt.Errorf("%w: tokens is negative; give a monthly token limit of 0 (none) or more", ErrInvalid))
	case b.Cost < 0:
		return Budget{}, r.c.errorf("put budget: %w", fmt.Errorf("%w: cost is negative; give a monthly cost limit of 0 (none) or more", ErrInvalid))
	}
	b.UpdatedAt = now()
	out, err := r.c.d.BudgetUpsert(ctx, b)
	if err != nil {
		return Budget{}, r.c.errorf("put budget: %w", err)
	}
	return out, nil
}

func (r budgets) Reset(ctx context.Context, workspaceID string, at time.Time) (Budget, error) {
	if at.IsZero() {
		at = time.Now()
	}
	at = Timestamp(at)
	out, err := r.c.d.BudgetReset(ctx, workspaceID, MonthKey(at), at)
	if err != nil {
		return Budget{}, r.c.errorf("reset budget: %w", err)
	}
	return out, nil
}

func (r budgets) MarkWarned(ctx context.Context, workspaceID string, kind BudgetKind, month string) (bool, error) {
	if kind != BudgetTokens && kind != BudgetCost {
		return false, r.c.errorf("mark budget warned: %w", fmt.Errorf("%w: budget kind %q is unknown; use %q or %q", ErrInvalid, kind, BudgetTokens, BudgetCost))
	}
	ok, err := r.c.d.BudgetMarkWarned(ctx, workspaceID, kind, month, now())
	if err != nil {
		return false, r.c.errorf("mark budget warned: %w", err)
	}
	return ok, nil
}
