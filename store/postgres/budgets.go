package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

const budgetColumns = `workspace_id, custom, tokens, cost, reset_at, warned_tokens, warned_cost, updated_at`

func scanBudget(row pgx.Row) (store.Budget, error) {
	var (
		b     store.Budget
		reset *time.Time
	)
	if err := row.Scan(&b.WorkspaceID, &b.Custom, &b.Tokens, (*int64)(&b.Cost), &reset, &b.WarnedTokens, &b.WarnedCost, &b.UpdatedAt); err != nil {
		return store.Budget{}, err
	}
	if reset != nil {
		b.ResetAt = reset.UTC()
	}
	b.UpdatedAt = b.UpdatedAt.UTC()
	return b, nil
}

func (d driver) BudgetGet(ctx context.Context, workspaceID string) (store.Budget, error) {
	b, err := scanBudget(d.s.pool.QueryRow(ctx, `SELECT `+budgetColumns+` FROM workspace_budgets WHERE workspace_id = $1`, workspaceID))
	return b, mapErr(err)
}

func (d driver) BudgetUpsert(ctx context.Context, b store.Budget) (store.Budget, error) {
	out, err := scanBudget(d.s.pool.QueryRow(ctx, `INSERT INTO workspace_budgets (`+budgetColumns+`)
		VALUES ($1, $2, $3, $4, NULL, '', '', $5)
		ON CONFLICT (workspace_id) DO UPDATE SET custom = excluded.custom, tokens = excluded.tokens,
			cost = excluded.cost, updated_at = excluded.updated_at
		RETURNING `+budgetColumns,
		b.WorkspaceID, b.Custom, b.Tokens, int64(b.Cost), b.UpdatedAt))
	return out, mapErr(err)
}

func (d driver) BudgetReset(ctx context.Context, workspaceID, month string, at time.Time) (store.Budget, error) {
	tx, err := d.s.pool.Begin(ctx)
	if err != nil {
		return store.Budget{}, mapErr(err)
	}
	defer tx.Rollback(ctx)
	out, err := scanBudget(tx.QueryRow(ctx, `INSERT INTO workspace_budgets (`+budgetColumns+`)
		VALUES ($1, false, 0, 0, $2, '', '', $2)
		ON CONFLICT (workspace_id) DO UPDATE SET reset_at = excluded.reset_at, warned_tokens = '', warned_cost = '',
			updated_at = excluded.updated_at
		RETURNING `+budgetColumns,
		workspaceID, at))
	if err != nil {
		return store.Budget{}, mapErr(err)
	}
	if _, err := tx.Exec(ctx, `UPDATE budget_spend SET tokens = 0, cost = 0, requests = 0 WHERE workspace_id = $1 AND month = $2`,
		workspaceID, month); err != nil {
		return store.Budget{}, mapErr(err)
	}
	return out, mapErr(tx.Commit(ctx))
}

// BudgetMarkWarned's conditional update is atomic under concurrency: of
// two transactions setting the same month, the second re-reads the row
// after the first commits, finds the month set and updates nothing.
func (d driver) BudgetMarkWarned(ctx context.Context, workspaceID string, kind store.BudgetKind, month string, at time.Time) (bool, error) {
	col := "warned_tokens"
	if kind == store.BudgetCost {
		col = "warned_cost"
	}
	if _, err := d.s.pool.Exec(ctx, `INSERT INTO workspace_budgets (`+budgetColumns+`)
		VALUES ($1, false, 0, 0, NULL, '', '', $2) ON CONFLICT (workspace_id) DO NOTHING`, workspaceID, at); err != nil {
		return false, mapErr(err)
	}
	tag, err := d.s.pool.Exec(ctx, `UPDATE workspace_budgets SET `+col+` = $1 WHERE workspace_id = $2 AND `+col+` <> $1`,
		month, workspaceID)
	if err != nil {
		return false, mapErr(err)
	}
	return tag.RowsAffected() == 1, nil
}
