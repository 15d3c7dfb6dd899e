package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

const auditColumns = `id, workspace_id, actor, action, target, details, created_at`

func (d driver) AuditInsert(ctx context.Context, p *store.AuditInsertParams) error {
	err := pgx.BeginFunc(ctx, d.s.pool, func(tx pgx.Tx) error {
		// audit_log has no foreign key (its rows outlive their workspace,
		// see 00003_audit.sql), so the check is here. FOR KEY SHARE holds
		// off a concurrent delete of the workspace until the commit, as a
		// foreign key would.
		var found int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM workspaces WHERE id = ANY($1) FOR KEY SHARE) w`,
			p.WorkspaceIDs).Scan(&found); err != nil {
			return err
		}
		if found != len(p.WorkspaceIDs) {
			return fmt.Errorf("%w: workspace does not exist", store.ErrNotFound)
		}
		var batch pgx.Batch
		for _, e := range p.Events {
			var details any
			if len(e.Details) > 0 {
				details = string(e.Details)
			}
			batch.Queue(`INSERT INTO audit_log (`+auditColumns+`) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)`,
				e.ID, e.WorkspaceID, e.Actor, e.Action, e.Target, details, e.CreatedAt)
		}
		return tx.SendBatch(ctx, &batch).Close()
	})
	return mapErr(err)
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

func (d driver) AuditList(ctx context.Context, p *store.AuditListParams) ([]store.AuditEvent, error) {
	f := p.Filter
	var (
		where = []string{"workspace_id = $1"}
		args  = []any{f.WorkspaceID}
	)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if p.After {
		where = append(where, `(created_at, id COLLATE "C") < (`+arg(p.AfterTime)+`, `+arg(p.AfterID)+` COLLATE "C")`)
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
		where = append(where, "created_at >= "+arg(f.Since))
	}
	if !f.Until.IsZero() {
		where = append(where, "created_at < "+arg(f.Until))
	}
	query := `SELECT ` + auditColumns + ` FROM audit_log WHERE ` + strings.Join(where, " AND ") + `
		ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT ` + arg(p.Limit)
	return queryList(ctx, d.s, scanAudit, query, args...)
}
