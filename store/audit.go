package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// AuditEvent is one entry of the audit log: who did what to what, when.
// Entries are only ever appended; no method rewrites or removes one.
//
// Details must never hold personal data: callers record counts, rule names
// and entity types, not values (GDPR Art. 30 wants the record of processing,
// not the data processed).
type AuditEvent struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	// Actor is who acted: "apikey:<id>", "cli", "system", or the end user
	// a front end named.
	Actor string `json:"actor"`
	// Action is a dotted verb: "guard.block", "guard.warn", "pii.detected",
	// "credential.put", "agent.create", "kb.delete", ...
	Action string `json:"action"`
	// Target is what was acted on: "agent:support", "provider:openai",
	// "kb:<id>"; empty when nothing in particular.
	Target string `json:"target,omitempty"`
	// Details is a JSON object with the specifics; nil means none.
	Details json.RawMessage `json:"details,omitempty"`
	// CreatedAt is when it happened; Append stamps the current time when
	// it is zero.
	CreatedAt time.Time `json:"created_at"`
}

// Validate reports whether e can be written.
func (e AuditEvent) Validate() error {
	switch {
	case e.WorkspaceID == "":
		return fmt.Errorf("%w: audit event workspace id is empty; set AuditEvent.WorkspaceID", ErrInvalid)
	case e.Action == "":
		return fmt.Errorf("%w: audit event action is empty; set AuditEvent.Action, e.g. \"agent.create\"", ErrInvalid)
	case e.Actor == "":
		return fmt.Errorf("%w: audit event %q has no actor; set AuditEvent.Actor, e.g. \"system\"", ErrInvalid, e.Action)
	}
	if len(e.Details) > 0 {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(e.Details, &obj); err != nil {
			return fmt.Errorf("%w: audit event %q details are not a JSON object: %v", ErrInvalid, e.Action, err)
		}
	}
	return nil
}

// DefaultAuditLimit is how many events AuditLog.List returns when the
// filter's limit is zero or negative; MaxAuditLimit is the most it returns.
const (
	DefaultAuditLimit = 100
	MaxAuditLimit     = 1000
)

// AuditFilter selects audit events of one workspace. Empty fields do not
// filter.
type AuditFilter struct {
	WorkspaceID string
	// Action matches exactly, or, when it ends in ".", every action with
	// that prefix ("guard." selects guard.block, guard.warn and guard.log).
	Action string
	Actor  string
	Target string
	// Since and Until bound CreatedAt: Since <= CreatedAt < Until.
	Since, Until time.Time
	// Cursor continues a listing: pass the Next of the previous page.
	Cursor string
	// Limit caps the page (DefaultAuditLimit when <= 0, at most
	// MaxAuditLimit).
	Limit int
}

// AuditPage is one page of a listing, newest first.
type AuditPage struct {
	Events []AuditEvent `json:"events"`
	// Next is the cursor of the following page; empty on the last page.
	Next string `json:"next,omitempty"`
}

// AuditLog is the append-only audit log. Append is called from many
// goroutines at once.
type AuditLog interface {
	// Append stores the events in one transaction, assigning IDs where
	// empty: all are stored or none. An unknown workspace gives
	// ErrNotFound.
	Append(ctx context.Context, events ...AuditEvent) error
	// List returns the events matching f, newest first (by CreatedAt,
	// then ID). A malformed cursor gives ErrInvalid.
	List(ctx context.Context, f AuditFilter) (AuditPage, error)
}
