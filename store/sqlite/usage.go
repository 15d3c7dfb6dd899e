package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

type usage struct{ s *Store }

const usageColumns = `id, workspace_id, api_key_id, agent, model, provider, end_user,
	input_tokens, output_tokens, cached_tokens, latency_ms, upstream_ms, status, error_kind, created_at, surface, actor, run_id`

func (r usage) Record(ctx context.Context, records ...store.UsageRecord) error {
	for _, u := range records {
		if err := u.Validate(); err != nil {
			return fmt.Errorf("sqlite: record usage: %w", err)
		}
	}
	if len(records) == 0 {
		return nil
	}
	tx, err := r.s.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: record usage: %w", mapErr(err))
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO usage_records (`+usageColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("sqlite: record usage: %w", mapErr(err))
	}
	defer stmt.Close()
	for _, u := range records {
		if u.ID == "" {
			u.ID = store.NewID()
		}
		created := now()
		if !u.CreatedAt.IsZero() {
			created = store.Timestamp(u.CreatedAt)
		}
		if _, err := stmt.ExecContext(ctx,
			u.ID, u.WorkspaceID, u.APIKeyID, u.Agent, u.Model, u.Provider, u.User,
			u.InputTokens, u.OutputTokens, u.CachedTokens, u.LatencyMs, u.UpstreamMs,
			u.Status, u.ErrorKind, micros(created), u.Surface, u.Actor, u.RunID); err != nil {
			return fmt.Errorf("sqlite: record usage: %w", mapErr(err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: record usage: %w", mapErr(err))
	}
	return nil
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

func (r usage) List(ctx context.Context, workspaceID string, since time.Time, limit int) ([]store.UsageRecord, error) {
	if limit <= 0 {
		limit = store.DefaultUsageLimit
	}
	out, err := queryList(ctx, r.s.reader, scanUsage,
		`SELECT `+usageColumns+` FROM usage_records
		WHERE workspace_id = ? AND created_at >= ?
		ORDER BY created_at DESC, id DESC LIMIT ?`,
		workspaceID, micros(store.Timestamp(since)), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list usage: %w", err)
	}
	return out, nil
}

func (r usage) Summary(ctx context.Context, workspaceID string, since time.Time) ([]store.UsageSummary, error) {
	out, err := queryList(ctx, r.s.reader, func(sc scanner) (store.UsageSummary, error) {
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
		workspaceID, micros(store.Timestamp(since)))
	if err != nil {
		return nil, fmt.Errorf("sqlite: summarize usage: %w", err)
	}
	return out, nil
}
