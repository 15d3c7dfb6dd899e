package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

type usage struct{ s *Store }

const usageColumns = `id, workspace_id, api_key_id, agent, model, provider, end_user,
	input_tokens, output_tokens, cached_tokens, latency_ms, upstream_ms, status, error_kind, created_at, surface, actor, run_id`

func (r usage) Record(ctx context.Context, records ...store.UsageRecord) error {
	for _, u := range records {
		if err := u.Validate(); err != nil {
			return fmt.Errorf("postgres: record usage: %w", err)
		}
	}
	if len(records) == 0 {
		return nil
	}
	// One transaction, its inserts sent as one pipelined batch.
	tx, err := r.s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: record usage: %w", mapErr(err))
	}
	defer tx.Rollback(ctx)
	var batch pgx.Batch
	for _, u := range records {
		if u.ID == "" {
			u.ID = store.NewID()
		}
		created := now()
		if !u.CreatedAt.IsZero() {
			created = store.Timestamp(u.CreatedAt)
		}
		batch.Queue(`INSERT INTO usage_records (`+usageColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
			u.ID, u.WorkspaceID, u.APIKeyID, u.Agent, u.Model, u.Provider, u.User,
			u.InputTokens, u.OutputTokens, u.CachedTokens, u.LatencyMs, u.UpstreamMs,
			u.Status, u.ErrorKind, created, u.Surface, u.Actor, u.RunID)
	}
	if err := tx.SendBatch(ctx, &batch).Close(); err != nil {
		return fmt.Errorf("postgres: record usage: %w", mapErr(err))
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: record usage: %w", mapErr(err))
	}
	return nil
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

func (r usage) List(ctx context.Context, workspaceID string, since time.Time, limit int) ([]store.UsageRecord, error) {
	if limit <= 0 {
		limit = store.DefaultUsageLimit
	}
	out, err := queryList(ctx, r.s, scanUsage,
		`SELECT `+usageColumns+` FROM usage_records
		WHERE workspace_id = $1 AND created_at >= $2
		ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $3`,
		workspaceID, store.Timestamp(since), limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: list usage: %w", err)
	}
	return out, nil
}

func (r usage) Summary(ctx context.Context, workspaceID string, since time.Time) ([]store.UsageSummary, error) {
	out, err := queryList(ctx, r.s, func(row pgx.Row) (store.UsageSummary, error) {
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
		workspaceID, store.Timestamp(since))
	if err != nil {
		return nil, fmt.Errorf("postgres: summarize usage: %w", err)
	}
	return out, nil
}
