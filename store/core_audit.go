package store

import "context"

// auditLog is AuditLog on a Driver.
type auditLog struct{ c Core }

func (r auditLog) Append(ctx context.Context, events ...AuditEvent) error {
	for _, e := range events {
		if err := e.Validate(); err != nil {
			return r.c.errorf("append audit events: %w", err)
		}
	}
	if len(events) == 0 {
		return nil
	}
	p := &AuditInsertParams{Events: make([]AuditEvent, len(events))}
	seen := map[string]bool{}
	t := now()
	for i, e := range events {
		if e.ID == "" {
			e.ID = NewID()
		}
		if e.CreatedAt.IsZero() {
			e.CreatedAt = t
		} else {
			e.CreatedAt = Timestamp(e.CreatedAt)
		}
		p.Events[i] = e
		if !seen[e.WorkspaceID] {
			seen[e.WorkspaceID] = true
			p.WorkspaceIDs = append(p.WorkspaceIDs, e.WorkspaceID)
		}
	}
	if err := r.c.d.AuditInsert(ctx, p); err != nil {
		return r.c.errorf("append audit events: %w", err)
	}
	return nil
}

func (r auditLog) List(ctx context.Context, f AuditFilter) (AuditPage, error) {
	limit := ClampAuditLimit(f.Limit)
	p := &AuditListParams{Filter: f, Limit: limit + 1} // one more tells whether a next page exists
	if f.Cursor != "" {
		at, id, err := DecodeAuditCursor(f.Cursor)
		if err != nil {
			return AuditPage{}, r.c.errorf("list audit events: %w", err)
		}
		p.After, p.AfterTime, p.AfterID = true, at, id
	}
	if !f.Since.IsZero() {
		p.Filter.Since = Timestamp(f.Since)
	}
	if !f.Until.IsZero() {
		p.Filter.Until = Timestamp(f.Until)
	}
	p.Filter.Cursor, p.Filter.Limit = "", 0
	events, err := r.c.d.AuditList(ctx, p)
	if err != nil {
		return AuditPage{}, r.c.errorf("list audit events: %w", err)
	}
	page := AuditPage{Events: events}
	if len(events) > limit {
		page.Events = events[:limit]
		last := page.Events[limit-1]
		page.Next = EncodeAuditCursor(last.CreatedAt, last.ID)
	}
	if page.Events == nil {
		page.Events = []AuditEvent{}
	}
	return page, nil
}
