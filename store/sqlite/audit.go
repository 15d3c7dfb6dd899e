package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/agentcraftlab/agentcraft/store"
)

type auditLog struct{ s *Store }

// AuditLog implements store.Store.
func (s *Store) AuditLog() store.AuditLog { return auditLog{s} }

const auditColumns = `id, workspace_id, actor, action, target, details, created_at`

func (r auditLog) Append(ctx context.Context, events ...store.AuditEvent) error {
	for _, e := range events {
		if err := e.Validate(); err != nil {
			return fmt.Errorf("sqlite: append audit events: %w", err)
		}
	}
	if len(events) == 0 {
		return nil
	}
	err := r.s.writeTx(ctx, func(tx *sql.Tx) error {
		// audit_log has no foreign key (its rows outlive their
		// workspace, see 00003_audit.sql), so the check is here.
		seen := map[string]bool{}
		for _, e := range events {
			if seen[e.WorkspaceID] {
				continue
			}
			seen[e.WorkspaceID] = true
			var one int
			if err := tx.QueryRowContext(ctx, `SELECT 1 FROM workspaces WHERE id = ?`, e.WorkspaceID).Scan(&one); err != nil {
				return fmt.Errorf("workspace %s: %w", e.WorkspaceID, mapErr(err))
			}
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO audit_log (`+auditColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return mapErr(err)
		}
		defer stmt.Close()
		for _, e := range events {
			if e.ID == "" {
				e.ID = store.NewID()
			}
			created := now()
			if !e.CreatedAt.IsZero() {
				created = store.Timestamp(e.CreatedAt)
			}
			if _, err := stmt.ExecContext(ctx, e.ID, e.WorkspaceID, e.Actor, e.Action, e.Target,
				nullJSON(e.Details), micros(created)); err != nil {
				return mapErr(err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: append audit events: %w", err)
	}
	return nil
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

func (r auditLog) List(ctx context.Context, f store.AuditFilter) (store.AuditPage, error) {
	limit := store.ClampAuditLimit(f.Limit)
	var (
		where = []string{"workspace_id = ?"}
		args  = []any{f.WorkspaceID}
	)
	if f.Cursor != "" {
		at, id, err := store.DecodeAuditCursor(f.Cursor)
		if err != nil {
			return store.AuditPage{}, fmt.Errorf("sqlite: list audit events: %w", err)
		}
		where = append(where, "(created_at < ? OR (created_at = ? AND id < ?))")
		args = append(args, micros(at), micros(at), id)
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
		args = append(args, micros(store.Timestamp(f.Since)))
	}
	if !f.Until.IsZero() {
		where = append(where, "created_at < ?")
		args = append(args, micros(store.Timestamp(f.Until)))
	}
	args = append(args, limit+1) // one more tells whether a next page exists
	events, err := queryList(ctx, r.s.reader, scanAudit,
		`SELECT `+auditColumns+` FROM audit_log WHERE `+strings.Join(where, " AND ")+`
		ORDER BY created_at DESC, id DESC LIMIT ?`, args...)
	if err != nil {
		return store.AuditPage{}, fmt.Errorf("sqlite: list audit events: %w", err)
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
