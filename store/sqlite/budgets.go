package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

const budgetColumns = `workspace_id, custom, tokens, cost, reset_at, warned_tokens, warned_cost, updated_at`

func scanBudget(sc scanner) (store.Budget, error) {
	var (
		b              store.Budget
		reset, updated int64
	)
	if err := sc.Scan(&b.WorkspaceID, &b.Custom, &b.Tokens, &b.Cost, &reset, &b.WarnedTokens, &b.WarnedCost, &updated); err != nil {
		return store.Budget{}, err
	}
	if reset != 0 {
		b.ResetAt = fromMicros(reset)
	}
	b.UpdatedAt = fromMicros(updated)
	return b, nil
}

func (d driver) BudgetGet(ctx context.Context, workspaceID string) (store.Budget, error) {
	b, err := scanBudget(d.s.reader.QueryRowContext(ctx, `SELECT `+budgetColumns+` FROM workspace_budgets WHERE workspace_id = ?`, workspaceID))
	return b, mapErr(err)
}

func (d driver) BudgetUpsert(ctx context.Context, b store.Budget) (store.Budget, error) {
	var out store.Budget
	err := d.s.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = scanBudget(tx.QueryRowContext(ctx, `INSERT INTO workspace_budgets (`+budgetColumns+`)
			VALUES (?, ?, ?, ?, 0, '', '', ?)
			ON CONFLICT (workspace_id) DO UPDATE SET custom = excluded.custom, tokens = excluded.tokens,
				cost = excluded.cost, updated_at = excluded.updated_at
			RETURNING `+budgetColumns,
			b.WorkspaceID, b.Custom, b.Tokens, int64(b.Cost), micros(b.UpdatedAt)))
		return err
	})
	return out, mapErr(err)
}

func (d driver) BudgetReset(ctx context.Context, workspaceID, month string, at time.Time) (store.Budget, error) {
	var out store.Budget
	err := d.s.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = scanBudget(tx.QueryRowContext(ctx, `INSERT INTO workspace_budgets (`+budgetColumns+`)
			VALUES (?, 0, 0, 0, ?, '', '', ?)
			ON CONFLICT (workspace_id) DO UPDATE SET reset_at = excluded.reset_at, warned_tokens = '', warned_cost = '',
				updated_at = excluded.updated_at
			RETURNING `+budgetColumns,
			workspaceID, micros(at), micros(at)))
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE budget_spend SET tokens = 0, cost = 0, requests = 0 WHERE workspace_id = ? AND month = ?`,
			workspaceID, month)
		return err
	})
	return out, mapErr(err)
}

func (d driver) BudgetMarkWarned(ctx context.Context, workspaceID string, kind store.BudgetKind, month string, at time.Time) (bool, error) {
	col := "warned_tokens"
	if kind == store.BudgetCost {
		col = "warned_cost"
	}
	var n int64
	err := d.s.writeTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO workspace_budgets (`+budgetColumns+`)
			VALUES (?, 0, 0, 0, 0, '', '', ?) ON CONFLICT (workspace_id) DO NOTHING`, workspaceID, micros(at)); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE workspace_budgets SET `+col+` = ? WHERE workspace_id = ? AND `+col+` <> ?`,
			month, workspaceID, month)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n == 1, mapErr(err)
}
