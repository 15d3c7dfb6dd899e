package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

type auditLog struct{ s *Store }

// AuditLog implements store.Store.
func (s *Store) AuditLog() store.AuditLog { return auditLog{s} }

const auditColumns = `id, workspace_id, actor, action, target, details, created_at`

func (r auditLog) Append(ctx context.Context, events ...store.AuditEvent) error {
	for _, e := range events {
		if err := e.Validate(); err != nil {
			return fmt.Errorf("postgres: append audit events: %w", err)
		}
	}
	if len(events) == 0 {
		return nil
	}
	tx, err := r.s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: append audit events: %w", mapErr(err))
	}
	defer tx.Rollback(ctx)
	// audit_log has no foreign key (its rows outlive their workspace, see
	// 00003_audit.sql), so the check is here. FOR KEY SHARE holds off a
	// concurrent delete of the workspace until the commit, as a foreign
	// key would.
	var ids []string
	seen := map[string]bool{}
	for _, e := range events {
		if !seen[e.WorkspaceID] {
			seen[e.WorkspaceID] = true
			ids = append(ids, e.WorkspaceID)
		}
	}
	var found int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM workspaces WHERE id = ANY($1) FOR KEY SHARE) w`, ids).Scan(&found); err != nil {
		return fmt.Errorf("postgres: append audit events: %w", mapErr(err))
	}
	if found != len(ids) {
		return fmt.Errorf("postgres: append audit events: %w: workspace does not exist", store.ErrNotFound)
	}
	var batch pgx.Batch
	for _, e := range events {
		if e.ID == "" {
			e.ID = store.NewID()
		}
		created := now()
		if !e.CreatedAt.IsZero() {
			created = store.Timestamp(e.CreatedAt)
		}
		var details any
		if len(e.Details) > 0 {
			details = string(e.Details)
		}
		batch.Queue(`INSERT INTO audit_log (`+auditColumns+`) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)`,
			e.ID, e.WorkspaceID, e.Actor, e.Action, e.Target, details, created)
	}
	if err := tx.SendBatch(ctx, &batch).Close(); err != nil {
		return fmt.Errorf("postgres: append audit events: %w", mapErr(err))
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: append audit events: %w", mapErr(err))
	}
	return nil
}

func scanAudit(row pgx.Row) (store.AuditEvent, error) {
	var (
		e       store.AuditEvent
		details []byte
	)
	if err := row.Scan(&e.ID, &e.WorkspaceID, &e.Actor, &e.Action, &e.Target, &details, &e.CreatedAt); err != nil {
		return store.AuditEvent{}, err
	}
	if len(details) > 0 {
		e.Details = details
	}
	e.CreatedAt = e.CreatedAt.UTC()
	return e, nil
}

func (r auditLog) List(ctx context.Context, f store.AuditFilter) (store.AuditPage, error) {
	limit := store.ClampAuditLimit(f.Limit)
	var (
		where = []string{"workspace_id = $1"}
		args  = []any{f.WorkspaceID}
	)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if f.Cursor != "" {
		at, id, err := store.DecodeAuditCursor(f.Cursor)
		if err != nil {
			return store.AuditPage{}, fmt.Errorf("postgres: list audit events: %w", err)
		}
		where = append(where, `(created_at, id COLLATE "C") < (`+arg(at)+`, `+arg(id)+` COLLATE "C")`)
	}
	if strings.HasSuffix(f.Action, ".") {
		// starts_with, not LIKE: an action may hold '%' or '_'.
		where = append(where, "starts_with(action, "+arg(f.Action)+")")
	} else if f.Action != "" {
		where = append(where, "action = "+arg(f.Action))
	}
	if f.Actor != "" {
		where = append(where, "actor = "+arg(f.Actor))
	}
	if f.Target != "" {
		where = append(where, "target = "+arg(f.Target))
	}
	if !f.Since.IsZero() {
		where = append(where, "created_at >= "+arg(store.Timestamp(f.Since)))
	}
	if !f.Until.IsZero() {
		where = append(where, "created_at < "+arg(store.Timestamp(f.Until)))
	}
	// One more than the page tells whether a next page exists.
	query := `SELECT ` + auditColumns + ` FROM audit_log WHERE ` + strings.Join(where, " AND ") + `
		ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT ` + arg(limit+1)
	events, err := queryList(ctx, r.s, scanAudit, query, args...)
	if err != nil {
		return store.AuditPage{}, fmt.Errorf("postgres: list audit events: %w", err)
	}
	page := store.AuditPage{Events: events}
	if len(events) > limit {
		page.Events = events[:limit]
		last := page.Events[limit-1]
		page.Next = store.EncodeAuditCursor(last.CreatedAt, last.ID)
	}
	if page.Events == nil {
		page.Events = []store.AuditEvent{}
	}
	return page, nil
}
