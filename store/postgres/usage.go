package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

const usageColumns = `id, workspace_id, api_key_id, agent, model, provider, end_user,
	input_tokens, output_tokens, cached_tokens, latency_ms, upstream_ms, status, error_kind, created_at, surface, actor, run_id,
	workflow, cost, unpriced`

// UsageInsert sends the inserts and the running counts' updates as one
// pipelined batch in one transaction.
func (d driver) UsageInsert(ctx context.Context, p *store.UsageInsertParams) error {
	tx, err := d.s.pool.Begin(ctx)
	if err != nil {
		return mapErr(err)
	}
	defer tx.Rollback(ctx)
	resets := map[string]time.Time{}
	for _, u := range p.Records {
		if _, ok := resets[u.WorkspaceID]; ok {
			continue
		}
		var at *time.Time
		err := tx.QueryRow(ctx, `SELECT reset_at FROM workspace_budgets WHERE workspace_id = $1`, u.WorkspaceID).Scan(&at)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return mapErr(err)
		}
		resets[u.WorkspaceID] = time.Time{}
		if at != nil {
			resets[u.WorkspaceID] = *at
		}
	}
	var batch pgx.Batch
	for _, u := range p.Records {
		batch.Queue(`INSERT INTO usage_records (`+usageColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)`,
			u.ID, u.WorkspaceID, u.APIKeyID, u.Agent, u.Model, u.Provider, u.User,
			u.InputTokens, u.OutputTokens, u.CachedTokens, u.LatencyMs, u.UpstreamMs,
			u.Status, u.ErrorKind, u.CreatedAt, u.Surface, u.Actor, u.RunID,
			u.Workflow, int64(u.Cost), u.Unpriced)
	}
	for _, s := range store.SpendDeltas(p.Records, resets) {
		batch.Queue(`INSERT INTO budget_spend (workspace_id, month, tokens, cost, requests)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (workspace_id, month) DO UPDATE SET tokens = budget_spend.tokens + excluded.tokens,
			cost = budget_spend.cost + excluded.cost, requests = budget_spend.requests + excluded.requests`,
			s.WorkspaceID, s.Month, s.Tokens, int64(s.Cost), s.Requests)
	}
	if err := tx.SendBatch(ctx, &batch).Close(); err != nil {
		return mapErr(err)
	}
	return mapErr(tx.Commit(ctx))
}

func scanUsage(row pgx.Row) (store.UsageRecord, error) {
	var u store.UsageRecord
	if err := row.Scan(&u.ID, &u.WorkspaceID, &u.APIKeyID, &u.Agent, &u.Model, &u.Provider, &u.User,
		&u.InputTokens, &u.OutputTokens, &u.CachedTokens, &u.LatencyMs, &u.UpstreamMs,
		&u.Status, &u.ErrorKind, &u.CreatedAt, &u.Surface, &u.Actor, &u.RunID,
		&u.Workflow, (*int64)(&u.Cost), &u.Unpriced); err != nil {
		return store.UsageRecord{}, err
	}
	u.CreatedAt = u.CreatedAt.UTC()
	return u, nil
}

func (d driver) UsageList(ctx context.Context, p *store.UsageListParams) ([]store.UsageRecord, error) {
	return queryList(ctx, d.s, scanUsage,
		`SELECT `+usageColumns+` FROM usage_records
		WHERE workspace_id = $1 AND created_at >= $2
		ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $3`,
		p.WorkspaceID, p.Since, p.Limit)
}

// usageRows is the workspace ($1) detail records since $2 and its daily
// totals from $2 on, as one relation of totals: a detail record is one
// request.
const usageRows = `(
	SELECT created_at AS at, agent, workflow, actor, api_key_id, end_user, provider, model,
		1::bigint AS requests, (status = 'error')::int::bigint AS errors, input_tokens::bigint AS input_tokens,
		output_tokens::bigint AS output_tokens, cached_tokens::bigint AS cached_tokens,
		latency_ms::bigint AS latency_ms, upstream_ms::bigint AS upstream_ms, cost, unpriced::int::bigint AS unpriced
	FROM usage_records WHERE workspace_id = $1 AND created_at >= $2
	UNION ALL
	SELECT day, agent, workflow, actor, api_key_id, end_user, provider, model,
		requests, errors, input_tokens, output_tokens, cached_tokens,
		latency_ms, upstream_ms, cost, unpriced
	FROM usage_daily WHERE workspace_id = $1 AND day >= $2
) AS r`

// usageSums total usageRows; sum(bigint) is numeric, cast back.
const usageSums = `sum(requests)::bigint, sum(errors)::bigint, sum(input_tokens)::bigint, sum(output_tokens)::bigint,
	sum(cached_tokens)::bigint, sum(latency_ms)::bigint, sum(upstream_ms)::bigint, sum(cost)::bigint, sum(unpriced)::bigint`

func (d driver) UsageSummary(ctx context.Context, p *store.UsageSummaryParams) ([]store.UsageSummary, error) {
	return queryList(ctx, d.s, func(row pgx.Row) (store.UsageSummary, error) {
		var s store.UsageSummary
		err := row.Scan(&s.Agent, &s.Provider, &s.Model, &s.Requests, &s.Errors,
			&s.InputTokens, &s.OutputTokens, &s.CachedTokens, &s.LatencyMs, &s.UpstreamMs, (*int64)(&s.Cost), &s.Unpriced)
		return s, err
	}, `SELECT agent, provider, model, `+usageSums+`
		FROM `+usageRows+`
		GROUP BY agent, provider, model
		ORDER BY agent COLLATE "C", provider COLLATE "C", model COLLATE "C"`,
		p.WorkspaceID, p.Since)
}

// usageKeys are the SQL of each store.UsageGroup's key; days are
// calendar days in UTC, whatever the session's time zone.
var usageKeys = map[store.UsageGroup]string{
	store.UsageByDay:      `to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
	store.UsageByAgent:    `agent`,
	store.UsageByWorkflow: `workflow`,
	store.UsageByUser:     `end_user`,
	store.UsageByAPIKey:   `api_key_id`,
	store.UsageByActor:    `actor`,
	store.UsageByModel:    `provider || '/' || model`,
}

func (d driver) UsageSummaryBy(ctx context.Context, p *store.UsageSummaryByParams) ([]store.UsageTotal, error) {
	key, ok := usageKeys[p.By]
	if !ok {
		return nil, fmt.Errorf("%w: usage group %q is unknown", store.ErrInvalid, p.By)
	}
	return queryList(ctx, d.s, func(row pgx.Row) (store.UsageTotal, error) {
		var s store.UsageTotal
		err := row.Scan(&s.Key, &s.Requests, &s.Errors,
			&s.InputTokens, &s.OutputTokens, &s.CachedTokens, &s.LatencyMs, &s.UpstreamMs, (*int64)(&s.Cost), &s.Unpriced)
		return s, err
	}, `SELECT k, `+usageSums+`
		FROM (SELECT `+key+` AS k, requests, errors, input_tokens, output_tokens, cached_tokens, latency_ms, upstream_ms, cost, unpriced
			FROM `+usageRows+`) AS g
		GROUP BY k
		ORDER BY k COLLATE "C"`,
		p.WorkspaceID, p.Since)
}

func (d driver) UsageSpend(ctx context.Context, workspaceID, month string) (store.UsageSpend, error) {
	s := store.UsageSpend{Month: month}
	err := d.s.pool.QueryRow(ctx, `SELECT tokens, cost, requests FROM budget_spend WHERE workspace_id = $1 AND month = $2`,
		workspaceID, month).Scan(&s.Tokens, (*int64)(&s.Cost), &s.Requests)
	if errors.Is(err, pgx.ErrNoRows) {
		return s, nil
	}
	return s, mapErr(err)
}

// UsageRollup folds and deletes in one transaction; the day is the UTC
// day's first instant, whatever the session's time zone.
func (d driver) UsageRollup(ctx context.Context, p *store.UsageRollupParams) (int64, error) {
	tx, err := d.s.pool.Begin(ctx)
	if err != nil {
		return 0, mapErr(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO usage_daily (workspace_id, day, agent, workflow, actor, api_key_id, end_user, provider, model,
			requests, errors, input_tokens, output_tokens, cached_tokens, latency_ms, upstream_ms, cost, unpriced)
		SELECT workspace_id, date_trunc('day', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
			agent, workflow, actor, api_key_id, end_user, provider, model,
			count(*), count(*) FILTER (WHERE status = 'error'), sum(input_tokens), sum(output_tokens), sum(cached_tokens),
			sum(latency_ms), sum(upstream_ms), sum(cost), count(*) FILTER (WHERE unpriced)
		FROM usage_records WHERE created_at < $1
		GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
		ON CONFLICT (workspace_id, day, agent, workflow, actor, api_key_id, end_user, provider, model) DO UPDATE SET
			requests = usage_daily.requests + excluded.requests, errors = usage_daily.errors + excluded.errors,
			input_tokens = usage_daily.input_tokens + excluded.input_tokens,
			output_tokens = usage_daily.output_tokens + excluded.output_tokens,
			cached_tokens = usage_daily.cached_tokens + excluded.cached_tokens,
			latency_ms = usage_daily.latency_ms + excluded.latency_ms,
			upstream_ms = usage_daily.upstream_ms + excluded.upstream_ms,
			cost = usage_daily.cost + excluded.cost, unpriced = usage_daily.unpriced + excluded.unpriced`,
		p.Before); err != nil {
		return 0, mapErr(err)
	}
	tag, err := tx.Exec(ctx, `DELETE FROM usage_records WHERE created_at < $1`, p.Before)
	if err != nil {
		return 0, mapErr(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, mapErr(err)
	}
	return tag.RowsAffected(), nil
}
