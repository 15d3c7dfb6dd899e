package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/agentcraftlab/agentcraft/store"
)

const auditColumns = `id, workspace_id, actor, action, target, details, created_at`

func (d driver) AuditInsert(ctx context.Context, p *store.AuditInsertParams) error {
	err := d.s.writeTx(ctx, func(tx *sql.Tx) error {
		// audit_log has no foreign key (its rows outlive their
		// workspace, see 00003_audit.sql), so the check is here.
		for _, id := range p.WorkspaceIDs {
			var one int
			if err := tx.QueryRowContext(ctx, `SELECT 1 FROM workspaces WHERE id = ?`, id).Scan(&one); err != nil {
				return fmt.Errorf("workspace %s: %w", id, mapErr(err))
			}
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO audit_log (`+auditColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, e := range p.Events {
			if _, err := stmt.ExecContext(ctx, e.ID, e.WorkspaceID, e.Actor, e.Action, e.Target,
				nullJSON(e.Details), micros(e.CreatedAt)); err != nil {
				return err
			}
		}
		return nil
	})
	return mapErr(err)
}

func scanAudit(sc scanner) (store.AuditEvent, error) {
	var (
		e       store.AuditEvent
		details sql.NullString
		created int64
	)
	if err := sc.Scan(&e.ID, &e.WorkspaceID, &e.Actor, &e.Action, &e.Target, &details, &created); err != nil {
		return store.AuditEvent{}, err
	}
	if details.Valid {
		e.Details = []byte(details.String)
	}
	e.CreatedAt = fromMicros(created)
	return e, nil
}

func (d driver) AuditList(ctx context.Context, p *store.AuditListParams) ([]store.AuditEvent, error) {
	f := p.Filter
	var (
		where = []string{"workspace_id = ?"}
		args  = []any{f.WorkspaceID}
	)
	if p.After {
		where = append(where, "(created_at < ? OR (created_at = ? AND id < ?))")
		args = append(args, micros(p.AfterTime), micros(p.AfterTime), p.AfterID)
	}
	if strings.HasSuffix(f.Action, ".") {
		// substr, not LIKE: an action may hold '%' or '_'.
		where = append(where, "substr(action, 1, length(?)) = ?")
		args = append(args, f.Action, f.Action)
	} else if f.Action != "" {
		where = append(where, "action = ?")
		args = append(args, f.Action)
	}
	if f.Actor != "" {
		where = append(where, "actor = ?")
		args = append(args, f.Actor)
	}
	if f.Target != "" {
		where = append(where, "target = ?")
		args = append(args, f.Target)
	}
	if !f.Since.IsZero() {
		where = append(where, "created_at >= ?")
		args = append(args, micros(f.Since))
	}
	if !f.Until.IsZero() {
		where = append(where, "created_at < ?")
		args = append(args, micros(f.Until))
	}
	args = append(args, p.Limit)
	return queryList(ctx, d.s.reader, scanAudit,
		`SELECT `+auditColumns+` FROM audit_log WHERE `+strings.Join(where, " AND ")+`
		ORDER BY created_at DESC, id DESC LIMIT ?`, args...)
}
