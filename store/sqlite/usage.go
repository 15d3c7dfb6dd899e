package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentcraftlab/agentcraft/store"
)

const usageColumns = `id, workspace_id, api_key_id, agent, model, provider, end_user,
	input_tokens, output_tokens, cached_tokens, latency_ms, upstream_ms, status, error_kind, created_at, surface, actor, run_id`

func (d driver) UsageInsert(ctx context.Context, p *store.UsageInsertParams) error {
	err := d.s.writeTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO usage_records (`+usageColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, u := range p.Records {
			if _, err := stmt.ExecContext(ctx,
				u.ID, u.WorkspaceID, u.APIKeyID, u.Agent, u.Model, u.Provider, u.User,
				u.InputTokens, u.OutputTokens, u.CachedTokens, u.LatencyMs, u.UpstreamMs,
				u.Status, u.ErrorKind, micros(u.CreatedAt), u.Surface, u.Actor, u.RunID); err != nil {
				return err
			}
		}
		return nil
	})
	return mapErr(err)
}

func scanUsage(sc scanner) (store.UsageRecord, error) {
	var (
		u       store.UsageRecord
		created int64
	)
	if err := sc.Scan(&u.ID, &u.WorkspaceID, &u.APIKeyID, &u.Agent, &u.Model, &u.Provider, &u.User,
		&u.InputTokens, &u.OutputTokens, &u.CachedTokens, &u.LatencyMs, &u.UpstreamMs,
		&u.Status, &u.ErrorKind, &created, &u.Surface, &u.Actor, &u.RunID); err != nil {
		return store.UsageRecord{}, err
	}
	u.CreatedAt = fromMicros(created)
	return u, nil
}

func (d driver) UsageList(ctx context.Context, p *store.UsageListParams) ([]store.UsageRecord, error) {
	return queryList(ctx, d.s.reader, scanUsage,
		`SELECT `+usageColumns+` FROM usage_records
		WHERE workspace_id = ? AND created_at >= ?
		ORDER BY created_at DESC, id DESC LIMIT ?`,
		p.WorkspaceID, micros(p.Since), p.Limit)
}

func (d driver) UsageSummary(ctx context.Context, p *store.UsageSummaryParams) ([]store.UsageSummary, error) {
	return queryList(ctx, d.s.reader, func(sc scanner) (store.UsageSummary, error) {
		var s store.UsageSummary
		err := sc.Scan(&s.Agent, &s.Provider, &s.Model, &s.Requests, &s.Errors,
			&s.InputTokens, &s.OutputTokens, &s.CachedTokens, &s.LatencyMs, &s.UpstreamMs)
		return s, err
	}, `SELECT agent, provider, model, count(*), sum(status = 'error'),
			sum(input_tokens), sum(output_tokens), sum(cached_tokens), sum(latency_ms), sum(upstream_ms)
		FROM usage_records
		WHERE workspace_id = ? AND created_at >= ?
		GROUP BY agent, provider, model
		ORDER BY agent, provider, model`,
		p.WorkspaceID, micros(p.Since))
}

// usageKeys are the SQL of each store.UsageGroup's key. created_at holds
// microseconds since the epoch, which strftime reads as seconds in UTC.
var usageKeys = map[store.UsageGroup]string{
	store.UsageByDay:   `strftime('%Y-%m-%d', created_at / 1000000, 'unixepoch')`,
	store.UsageByAgent: `agent`,
	store.UsageByActor: `actor`,
	store.UsageByModel: `provider || '/' || model`,
}

func (d driver) UsageSummaryBy(ctx context.Context, p *store.UsageSummaryByParams) ([]store.UsageTotal, error) {
	key, ok := usageKeys[p.By]
	if !ok {
		return nil, fmt.Errorf("%w: usage group %q is unknown", store.ErrInvalid, p.By)
	}
	return queryList(ctx, d.s.reader, func(sc scanner) (store.UsageTotal, error) {
		var s store.UsageTotal
		err := sc.Scan(&s.Key, &s.Requests, &s.Errors,
			&s.InputTokens, &s.OutputTokens, &s.CachedTokens, &s.LatencyMs, &s.UpstreamMs)
		return s, err
	}, `SELECT `+key+` AS k, count(*), sum(status = 'error'),
			sum(input_tokens), sum(output_tokens), sum(cached_tokens), sum(latency_ms), sum(upstream_ms)
		FROM usage_records
		WHERE workspace_id = ? AND created_at >= ?
		GROUP BY k
		ORDER BY k`,
		p.WorkspaceID, micros(p.Since))
}
