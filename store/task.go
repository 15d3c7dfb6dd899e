package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// TaskStatus is where a task is in its life. A task is the source of truth
// of what someone asked for; how it is executed (runs, steps) lives apart.
type TaskStatus string

// Task statuses. Open, Planning, AwaitingApproval and Running are live;
// the others are final.
const (
	TaskOpen             TaskStatus = "open"              // asked for, nobody working on it
	TaskPlanning         TaskStatus = "planning"          // an agent is making the plan
	TaskAwaitingApproval TaskStatus = "awaiting_approval" // a step waits for a human
	TaskRunning          TaskStatus = "running"           // the plan is executing
	TaskDone             TaskStatus = "done"              // finished as asked
	TaskFailed           TaskStatus = "failed"            // a step failed for good
	TaskCancelled        TaskStatus = "cancelled"         // someone withdrew it
	TaskExpired          TaskStatus = "expired"           // its approval or due time passed
)

// Final reports whether s is a final status.
func (s TaskStatus) Final() bool {
	switch s {
	case TaskDone, TaskFailed, TaskCancelled, TaskExpired:
		return true
	}
	return false
}

// Valid reports whether s is one of the task statuses.
func (s TaskStatus) Valid() bool {
	switch s {
	case TaskOpen, TaskPlanning, TaskAwaitingApproval, TaskRunning:
		return true
	}
	return s.Final()
}

// Capability grades the harm an action can do, as tool.Capability does
// (whose String values these are) and as the approval permissions
// approve_low, approve_medium and approve_high of package identity name
// them. The store keeps the word; it cannot import package tool.
type Capability string

// Capabilities, in increasing order of risk.
const (
	CapabilityLow    Capability = "low"
	CapabilityMedium Capability = "medium"
	CapabilityHigh   Capability = "high"
)

// Valid reports whether c is one of the capabilities.
func (c Capability) Valid() bool {
	return c == CapabilityLow || c == CapabilityMedium || c == CapabilityHigh
}

// Task is a request someone made, in plain language or structured, from a
// channel (LINE, the web, the API).
type Task struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	Title       string `json:"title"`
	Detail      string `json:"detail,omitempty"`
	// Intent is the structured request, a JSON object such as
	// {"action", "object", "target", "actor", "raw"}; nil before it is
	// extracted.
	Intent json.RawMessage `json:"intent,omitempty"`
	Status TaskStatus      `json:"status"`
	// Capability is the highest capability the task needs; low when
	// created without one.
	Capability     Capability `json:"capability"`
	AssigneeUserID string     `json:"assignee_user_id,omitempty"`
	// Source names the channel the task came from: "line", "web", "api".
	Source string `json:"source"`
	// SourceRef is the channel's id of the message that asked (LINE's
	// webhookEventId); unique per workspace and source when set, so a
	// redelivered message cannot make a second task.
	SourceRef    string     `json:"source_ref,omitempty"`
	ParentTaskID string     `json:"parent_task_id,omitempty"`
	DueAt        *time.Time `json:"due_at,omitempty"`
	// CreatedBy is the actor that asked: a user id, an agent, "system".
	CreatedBy string `json:"created_by,omitempty"`
	// ReplyTo is where the task's answers go, a JSON object naming the
	// channel's address ({"channel": "line", "target": ...}); nil when
	// the asker polls the API.
	ReplyTo   json.RawMessage `json:"reply_to,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// validIntent checks that an intent, when set, is a JSON object.
func validIntent(m json.RawMessage) error {
	if len(m) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(m, &obj); err != nil || obj == nil {
		return fmt.Errorf("%w: task intent is not a JSON object; set Intent to {\"action\": ..., \"object\": ..., ...} or leave it empty", ErrInvalid)
	}
	return nil
}

// Validate reports whether t can be created.
func (t Task) Validate() error {
	switch {
	case t.WorkspaceID == "":
		return fmt.Errorf("%w: task workspace id is empty; set Task.WorkspaceID", ErrInvalid)
	case t.Title == "":
		return fmt.Errorf("%w: task title is empty; set Task.Title", ErrInvalid)
	case t.Source == "":
		return fmt.Errorf("%w: task source is empty; set Task.Source to the channel it came from (line, web, api)", ErrInvalid)
	case t.Status != "" && !t.Status.Valid():
		return fmt.Errorf("%w: task status %q is unknown; set Task.Status to a TaskStatus or leave it empty for open", ErrInvalid, t.Status)
	case t.Capability != "" && !t.Capability.Valid():
		return fmt.Errorf("%w: task capability %q is unknown; use low, medium or high", ErrInvalid, t.Capability)
	case t.ParentTaskID != "" && t.ParentTaskID == t.ID:
		return fmt.Errorf("%w: task parent task id is the task's own id", ErrInvalid)
	}
	if len(t.ReplyTo) > 0 && !json.Valid(t.ReplyTo) {
		return fmt.Errorf("%w: task reply_to is not valid JSON", ErrInvalid)
	}
	return validIntent(t.Intent)
}

// Task event types. The list is open: an event's type is any non-empty
// word; these are the ones the platform writes.
const (
	TaskEventCreated     = "created"
	TaskEventClaimed     = "claimed"
	TaskEventPlanned     = "planned"
	TaskEventApproved    = "approved"
	TaskEventRejected    = "rejected"
	TaskEventStep        = "step"
	TaskEventCompleted   = "completed"
	TaskEventFailed      = "failed"
	TaskEventCompensated = "compensated"
	TaskEventNote        = "note"
)

// TaskEvent is one entry of a task's append-only history. Seq is assigned
// by the store, from 1 within the task (the created event).
type TaskEvent struct {
	TaskID string `json:"task_id"`
	Seq    int64  `json:"seq"`
	Type   string `json:"type"`
	// Actor is who caused it: a user id, an agent, "system".
	Actor     string          `json:"actor,omitempty"`
	Payload   json.RawMessage `json:"payload,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
}

// Validate reports whether e can be appended.
func (e TaskEvent) Validate() error {
	switch {
	case e.Type == "":
		return fmt.Errorf("%w: task event type is empty; set TaskEvent.Type (created, note, ...)", ErrInvalid)
	case len(e.Payload) > 0 && !json.Valid(e.Payload):
		return fmt.Errorf("%w: task event %q payload is not valid JSON", ErrInvalid, e.Type)
	}
	return nil
}

// TaskUpdate holds the fields Tasks.Transition may change; nil or empty
// leaves a field as it is.
type TaskUpdate struct {
	Intent         json.RawMessage
	Capability     Capability
	AssigneeUserID *string
	// Event, when set, is appended in the same transaction as the
	// transition: both are stored or neither.
	Event *TaskEvent
	// Notification, when set, is queued in the same transaction (its
	// WorkspaceID and TaskID are the task's; others are ErrInvalid;
	// Notifications.Create fills the rest): whoever sees the task
	// settled finds its answer queued, and a crash between the two
	// cannot lose the answer.
	Notification *Notification
}

// Validate reports whether u can be applied.
func (u TaskUpdate) Validate() error {
	if u.Capability != "" && !u.Capability.Valid() {
		return fmt.Errorf("%w: task capability %q is unknown; use low, medium or high", ErrInvalid, u.Capability)
	}
	if u.Event != nil {
		if err := u.Event.Validate(); err != nil {
			return err
		}
	}
	return validIntent(u.Intent)
}

// TaskFilter narrows Tasks.List. Zero fields do not filter.
type TaskFilter struct {
	Status         TaskStatus
	Source         string
	AssigneeUserID string
	// Limit caps the page (0: DefaultListLimit, at most MaxListLimit).
	Limit int
	// Cursor is the Next of the previous page ("" for the first).
	Cursor string
}

// TaskPage is a page of Tasks.List, newest first.
type TaskPage struct {
	Tasks []Task `json:"data"`
	// Next continues the listing; "" on the last page.
	Next string `json:"next,omitempty"`
}

// Tasks stores tasks and their events.
type Tasks interface {
	// Create inserts t (ID assigned when empty, Status open and
	// Capability low when empty, times stamped) together with its first
	// event, {Seq 1, Type created, Actor t.CreatedBy}, in one transaction,
	// and returns the stored task. A SourceRef the workspace holds already
	// for t.Source gives ErrConflict with the existing task: a redelivered
	// message makes no second task. An unknown workspace or parent task
	// gives ErrNotFound.
	Create(ctx context.Context, t Task) (Task, error)
	// Get returns the workspace's task, or ErrNotFound.
	Get(ctx context.Context, workspaceID, id string) (Task, error)
	// GetBySource finds the task made from a channel's message, or
	// ErrNotFound.
	GetBySource(ctx context.Context, workspaceID, source, ref string) (Task, error)
	// List returns a page of the workspace's tasks, newest first.
	List(ctx context.Context, workspaceID string, f TaskFilter) (TaskPage, error)
	// Transition moves the task to status `to` when its status is one of
	// `from`, applying the fields of u (its Event appended in the same
	// transaction), and returns the stored row; a task in another status
	// gives ErrConflict with the task as stored, and stores no event.
	Transition(ctx context.Context, workspaceID, id string, from []TaskStatus, to TaskStatus, u TaskUpdate) (Task, error)
	// AppendEvent appends e to the task's history, numbered after the
	// newest (concurrent appends never share a seq), and returns it as
	// stored. An unknown task gives ErrNotFound.
	AppendEvent(ctx context.Context, workspaceID, taskID string, e TaskEvent) (TaskEvent, error)
	// Events returns the task's events with Seq > after, in order, at
	// most limit (0 means 1000). An unknown task gives ErrNotFound.
	Events(ctx context.Context, workspaceID, taskID string, after int64, limit int) ([]TaskEvent, error)
}
