package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

const usageColumns = `id, workspace_id, api_key_id, agent, model, provider, end_user,
	input_tokens, output_tokens, cached_tokens, latency_ms, upstream_ms, status, error_kind, created_at, surface, actor, run_id`

// UsageInsert sends the inserts as one pipelined batch in one transaction.
func (d driver) UsageInsert(ctx context.Context, p *store.UsageInsertParams) error {
	tx, err := d.s.pool.Begin(ctx)
	if err != nil {
		return mapErr(err)
	}
	defer tx.Rollback(ctx)
	var batch pgx.Batch
	for _, u := range p.Records {
		batch.Queue(`INSERT INTO usage_records (`+usageColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
			u.ID, u.WorkspaceID, u.APIKeyID, u.Agent, u.Model, u.Provider, u.User,
			u.InputTokens, u.OutputTokens, u.CachedTokens, u.LatencyMs, u.UpstreamMs,
			u.Status, u.ErrorKind, u.CreatedAt, u.Surface, u.Actor, u.RunID)
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
		&u.Status, &u.ErrorKind, &u.CreatedAt, &u.Surface, &u.Actor, &u.RunID); err != nil {
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

func (d driver) UsageSummary(ctx context.Context, p *store.UsageSummaryParams) ([]store.UsageSummary, error) {
	return queryList(ctx, d.s, func(row pgx.Row) (store.UsageSummary, error) {
		var s store.UsageSummary
		err := row.Scan(&s.Agent, &s.Provider, &s.Model, &s.Requests, &s.Errors,
			&s.InputTokens, &s.OutputTokens, &s.CachedTokens, &s.LatencyMs, &s.UpstreamMs)
		return s, err
	}, `SELECT agent, provider, model, count(*), count(*) FILTER (WHERE status = 'error'),
			sum(input_tokens), sum(output_tokens), sum(cached_tokens), sum(latency_ms), sum(upstream_ms)
		FROM usage_records
		WHERE workspace_id = $1 AND created_at >= $2
		GROUP BY agent, provider, model
		ORDER BY agent COLLATE "C", provider COLLATE "C", model COLLATE "C"`,
		p.WorkspaceID, p.Since)
}

// usageKeys are the SQL of each store.UsageGroup's key; days are
// calendar days in UTC, whatever the session's time zone.
var usageKeys = map[store.UsageGroup]string{
	store.UsageByDay:   `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
	store.UsageByAgent: `agent`,
	store.UsageByActor: `actor`,
	store.UsageByModel: `provider || '/' || model`,
}

func (d driver) UsageSummaryBy(ctx context.Context, p *store.UsageSummaryByParams) ([]store.UsageTotal, error) {
	key, ok := usageKeys[p.By]
	if !ok {
		return nil, fmt.Errorf("%w: usage group %q is unknown", store.ErrInvalid, p.By)
	}
	return queryList(ctx, d.s, func(row pgx.Row) (store.UsageTotal, error) {
		var s store.UsageTotal
		err := row.Scan(&s.Key, &s.Requests, &s.Errors,
			&s.InputTokens, &s.OutputTokens, &s.CachedTokens, &s.LatencyMs, &s.UpstreamMs)
		return s, err
	}, `SELECT k, count(*), count(*) FILTER (WHERE status = 'error'),
			sum(input_tokens), sum(output_tokens), sum(cached_tokens), sum(latency_ms), sum(upstream_ms)
		FROM (SELECT `+key+` AS k, status, input_tokens, output_tokens, cached_tokens, latency_ms, upstream_ms
			FROM usage_records
			WHERE workspace_id = $1 AND created_at >= $2) AS r
		GROUP BY k
		ORDER BY k COLLATE "C"`,
		p.WorkspaceID, p.Since)
}
