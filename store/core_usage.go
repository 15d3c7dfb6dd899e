package store

import (
	"context"
	"fmt"
	"time"
)

// usage is Usage on a Driver.
type usage struct{ c Core }

func (r usage) Record(ctx context.Context, records ...UsageRecord) error {
	for _, u := range records {
		if err := u.Validate(); err != nil {
			return r.c.errorf("record usage: %w", err)
		}
	}
	if len(records) == 0 {
		return nil
	}
	p := &UsageInsertParams{Records: make([]UsageRecord, len(records))}
	t := now()
	for i, u := range records {
		if u.ID == "" {
			u.ID = NewID()
		}
		if u.CreatedAt.IsZero() {
			u.CreatedAt = t
		} else {
			u.CreatedAt = Timestamp(u.CreatedAt)
		}
		p.Records[i] = u
	}
	if err := r.c.d.UsageInsert(ctx, p); err != nil {
		return r.c.errorf("record usage: %w", err)
	}
	return nil
}

func (r usage) List(ctx context.Context, workspaceID string, since time.Time, limit int) ([]UsageRecord, error) {
	if limit <= 0 {
		limit = DefaultUsageLimit
	}
	out, err := r.c.d.UsageList(ctx, &UsageListParams{WorkspaceID: workspaceID, Since: Timestamp(since), Limit: limit})
	if err != nil {
		return nil, r.c.errorf("list usage: %w", err)
	}
	return out, nil
}

func (r usage) Summary(ctx context.Context, workspaceID string, since time.Time) ([]UsageSummary, error) {
	out, err := r.c.d.UsageSummary(ctx, &UsageSummaryParams{WorkspaceID: workspaceID, Since: Timestamp(since)})
	if err != nil {
		return nil, r.c.errorf("summarize usage: %w", err)
	}
	return out, nil
}

func (r usage) SummaryBy(ctx context.Context, workspaceID string, since time.Time, by UsageGroup) ([]UsageTotal, error) {
	if !by.Valid() {
		return nil, r.c.errorf("summarize usage: %w", fmt.Errorf("%w: usage group %q is unknown; use one of %v", ErrInvalid, by, UsageGroups))
	}
	out, err := r.c.d.UsageSummaryBy(ctx, &UsageSummaryByParams{WorkspaceID: workspaceID, Since: Timestamp(since), By: by})
	if err != nil {
		return nil, r.c.errorf("summarize usage by %s: %w", by, err)
	}
	return out, nil
}

// SpendDeltas totals recs per workspace and UTC month, in the order they
// first appear, for the running counts budgets read (budget_spend).
// resetAt gives a workspace's last budget reset (zero: none): a record
// created before it is not counted, so that a reset counts afresh even
// for the records of earlier requests still on their way to the store.
// Drivers call it inside UsageInsert's transaction.
func SpendDeltas(recs []UsageRecord, resetAt map[string]time.Time) []UsageSpendDelta {
	var out []UsageSpendDelta
	for _, u := range recs {
		if u.CreatedAt.Before(resetAt[u.WorkspaceID]) {
			continue
		}
		month := MonthKey(u.CreatedAt)
		i := 0
		for i < len(out) && (out[i].WorkspaceID != u.WorkspaceID || out[i].Month != month) {
			i++
		}
		if i == len(out) {
			out = append(out, UsageSpendDelta{WorkspaceID: u.WorkspaceID, Month: month})
		}
		out[i].Tokens += int64(u.InputTokens) + int64(u.OutputTokens)
		out[i].Cost += u.Cost
		out[i].Requests++
	}
	return out
}

func (r usage) Spend(ctx context.Context, workspaceID string, month time.Time) (UsageSpend, error) {
	s, err := r.c.d.UsageSpend(ctx, workspaceID, MonthKey(month))
	if err != nil {
		return UsageSpend{}, r.c.errorf("read usage spend: %w", err)
	}
	return s, nil
}

func (r usage) Rollup(ctx context.Context, before time.Time) (int64, error) {
	if before.IsZero() {
		return 0, r.c.errorf("roll up usage: %w", fmt.Errorf("%w: rollup cut-off is zero; give the time before which records are folded", ErrInvalid))
	}
	n, err := r.c.d.UsageRollup(ctx, &UsageRollupParams{Before: Timestamp(before)})
	if err != nil {
		return 0, r.c.errorf("roll up usage: %w", err)
	}
	return n, nil
}
