package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

const usageColumns = `id, workspace_id, api_key_id, agent, model, provider, end_user,
	input_tokens, output_tokens, cached_tokens, latency_ms, upstream_ms, status, error_kind, created_at, surface, actor, run_id,
	workflow, cost, unpriced`

func (d driver) UsageInsert(ctx context.Context, p *store.UsageInsertParams) error {
	err := d.s.writeTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO usage_records (`+usageColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, u := range p.Records {
			if _, err := stmt.ExecContext(ctx,
				u.ID, u.WorkspaceID, u.APIKeyID, u.Agent, u.Model, u.Provider, u.User,
				u.InputTokens, u.OutputTokens, u.CachedTokens, u.LatencyMs, u.UpstreamMs,
				u.Status, u.ErrorKind, micros(u.CreatedAt), u.Surface, u.Actor, u.RunID,
				u.Workflow, int64(u.Cost), u.Unpriced); err != nil {
				return err
			}
		}
		resets := map[string]time.Time{}
		for _, u := range p.Records {
			if _, ok := resets[u.WorkspaceID]; ok {
				continue
			}
			var at int64
			err := tx.QueryRowContext(ctx, `SELECT reset_at FROM workspace_budgets WHERE workspace_id = ?`, u.WorkspaceID).Scan(&at)
			if err != nil && err != sql.ErrNoRows {
				return err
			}
			resets[u.WorkspaceID] = time.Time{}
			if at != 0 {
				resets[u.WorkspaceID] = fromMicros(at)
			}
		}
		for _, s := range store.SpendDeltas(p.Records, resets) {
			if _, err := tx.ExecContext(ctx, `INSERT INTO budget_spend (workspace_id, month, tokens, cost, requests)
				VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (workspace_id, month) DO UPDATE SET
					tokens = tokens + excluded.tokens, cost = cost + excluded.cost, requests = requests + excluded.requests`,
				s.WorkspaceID, s.Month, s.Tokens, int64(s.Cost), s.Requests); err != nil {
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
		&u.Status, &u.ErrorKind, &created, &u.Surface, &u.Actor, &u.RunID,
		&u.Workflow, &u.Cost, &u.Unpriced); err != nil {
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

// usageRows is the workspace's detail records since a time and its daily
// totals from that time on, as one relation of totals: a detail record
// is one request. Its arguments are workspace, since, workspace, since.
const usageRows = `(
	SELECT created_at AS at, agent, workflow, actor, api_key_id, end_user, provider, model,
		1 AS requests, status = 'error' AS errors, input_tokens, output_tokens, cached_tokens,
		latency_ms, upstream_ms, cost, unpriced
	FROM usage_records WHERE workspace_id = ? AND created_at >= ?
	UNION ALL
	SELECT day, agent, workflow, actor, api_key_id, end_user, provider, model,
		requests, errors, input_tokens, output_tokens, cached_tokens,
		latency_ms, upstream_ms, cost, unpriced
	FROM usage_daily WHERE workspace_id = ? AND day >= ?
)`

const usageSums = `sum(requests), sum(errors), sum(input_tokens), sum(output_tokens), sum(cached_tokens),
	sum(latency_ms), sum(upstream_ms), sum(cost), sum(unpriced)`

func (d driver) UsageSummary(ctx context.Context, p *store.UsageSummaryParams) ([]store.UsageSummary, error) {
	since := micros(p.Since)
	return queryList(ctx, d.s.reader, func(sc scanner) (store.UsageSummary, error) {
		var s store.UsageSummary
		err := sc.Scan(&s.Agent, &s.Provider, &s.Model, &s.Requests, &s.Errors,
			&s.InputTokens, &s.OutputTokens, &s.CachedTokens, &s.LatencyMs, &s.UpstreamMs, &s.Cost, &s.Unpriced)
		return s, err
	}, `SELECT agent, provider, model, `+usageSums+`
		FROM `+usageRows+`
		GROUP BY agent, provider, model
		ORDER BY agent, provider, model`,
		p.WorkspaceID, since, p.WorkspaceID, since)
}

// usageKeys are the SQL of each store.UsageGroup's key. Times hold
// microseconds since the epoch, which strftime reads as seconds in UTC.
var usageKeys = map[store.UsageGroup]string{
	store.UsageByDay:      `strftime('%Y-%m-%d', at / 1000000, 'unixepoch')`,
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
	since := micros(p.Since)
	return queryList(ctx, d.s.reader, func(sc scanner) (store.UsageTotal, error) {
		var s store.UsageTotal
		err := sc.Scan(&s.Key, &s.Requests, &s.Errors,
			&s.InputTokens, &s.OutputTokens, &s.CachedTokens, &s.LatencyMs, &s.UpstreamMs, &s.Cost, &s.Unpriced)
		return s, err
	}, `SELECT `+key+` AS k, `+usageSums+`
		FROM `+usageRows+`
		GROUP BY k
		ORDER BY k`,
		p.WorkspaceID, since, p.WorkspaceID, since)
}

func (d driver) UsageSpend(ctx context.Context, workspaceID, month string) (store.UsageSpend, error) {
	s := store.UsageSpend{Month: month}
	err := d.s.reader.QueryRowContext(ctx, `SELECT tokens, cost, requests FROM budget_spend WHERE workspace_id = ? AND month = ?`,
		workspaceID, month).Scan(&s.Tokens, &s.Cost, &s.Requests)
	if err == sql.ErrNoRows {
		return s, nil
	}
	return s, mapErr(err)
}

// UsageRollup groups by the day's first instant: created_at minus its
// remainder of a day in microseconds (UTC days have no leap seconds in
// Unix time).
func (d driver) UsageRollup(ctx context.Context, p *store.UsageRollupParams) (int64, error) {
	var n int64
	err := d.s.writeTx(ctx, func(tx *sql.Tx) error {
		before := micros(p.Before)
		if _, err := tx.ExecContext(ctx, `INSERT INTO usage_daily (workspace_id, day, agent, workflow, actor, api_key_id, end_user, provider, model,
				requests, errors, input_tokens, output_tokens, cached_tokens, latency_ms, upstream_ms, cost, unpriced)
			SELECT workspace_id, created_at - created_at % 86400000000, agent, workflow, actor, api_key_id, end_user, provider, model,
				count(*), sum(status = 'error'), sum(input_tokens), sum(output_tokens), sum(cached_tokens),
				sum(latency_ms), sum(upstream_ms), sum(cost), sum(unpriced)
			FROM usage_records WHERE created_at < ?
			GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
			ON CONFLICT (workspace_id, day, agent, workflow, actor, api_key_id, end_user, provider, model) DO UPDATE SET
				requests = requests + excluded.requests, errors = errors + excluded.errors,
				input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens,
				cached_tokens = cached_tokens + excluded.cached_tokens, latency_ms = latency_ms + excluded.latency_ms,
				upstream_ms = upstream_ms + excluded.upstream_ms, cost = cost + excluded.cost, unpriced = unpriced + excluded.unpriced`,
			before); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM usage_records WHERE created_at < ?`, before)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, mapErr(err)
}
