package store

import (
	"context"
	"encoding/json"
	"time"
)

// TaskDriver holds the verbs of Tasks, Approvals, Steps and
// Notifications. A task row
// keeps the seq of its newest event and of its newest step: an append
// moves the counter in the statement that also checks the workspace (and,
// on PostgreSQL, locks the task row), so concurrent appends never share a
// seq. A write of a row that names a task (or run) not the workspace's is
// ErrNotFound and stores nothing.
type TaskDriver interface {
	// TaskInsert inserts p.Task, complete, with p.Event as its event 1,
	// in one transaction. A parent task that is not the workspace's is
	// ErrNotFound naming it; a taken source ref ErrConflict.
	TaskInsert(ctx context.Context, p *TaskInsertParams) error
	TaskGet(ctx context.Context, workspaceID, id string) (Task, error)
	TaskGetBySource(ctx context.Context, workspaceID, source, ref string) (Task, error)
	// TaskList returns at most p.Limit tasks of p.Filter, newest first
	// (created_at, then id bytewise, both descending), after the cursor
	// position when p.After is set. Filter.Limit and Cursor are not to be
	// read.
	TaskList(ctx context.Context, p *TaskListParams) ([]Task, error)
	// TaskTransition, in one transaction, updates the task when its
	// status is one of p.From (no row matched is ErrNotFound), when
	// p.Event is set appends it numbered after the newest, and when
	// p.Notification is set inserts it.
	TaskTransition(ctx context.Context, p *TaskTransitionParams) (Task, error)
	// TaskEventInsert appends p.Event numbered after the newest and
	// returns it as stored.
	TaskEventInsert(ctx context.Context, p *TaskEventInsertParams) (TaskEvent, error)
	// TaskEventList returns the task's events with Seq > p.After, in
	// order (nil for none, whether or not the task exists).
	TaskEventList(ctx context.Context, p *TaskEventListParams) ([]TaskEvent, error)
	TaskExists(ctx context.Context, workspaceID, id string) (bool, error)

	// ApprovalInsert inserts p.Approval, complete (pending, undecided);
	// a step key the task holds already is ErrConflict.
	ApprovalInsert(ctx context.Context, p *ApprovalInsertParams) error
	ApprovalGet(ctx context.Context, workspaceID, id string) (Approval, error)
	ApprovalGetByStep(ctx context.Context, workspaceID, taskID, stepKey string) (Approval, error)
	// ApprovalList returns at most p.Limit approvals, newest first
	// (created_at, then id bytewise, both descending).
	ApprovalList(ctx context.Context, p *ApprovalListParams) ([]Approval, error)
	// ApprovalDecide sets p.To, the approver and decided_at in one
	// statement when the approval is pending and not expired at p.Now
	// (no row matched is ErrNotFound), and in the same transaction
	// appends p.Event, stamped p.Now, to the approval's task.
	ApprovalDecide(ctx context.Context, p *ApprovalDecideParams) (Approval, error)
	// ApprovalExpire sets expired the pending approvals whose expires_at
	// is at or before p.Now (of p.WorkspaceID's p.ID only when p.ID is
	// set) and returns them, by expires_at then id.
	ApprovalExpire(ctx context.Context, p *ApprovalExpireParams) ([]Approval, error)

	// StepInsert inserts p.Step, complete but for Seq, numbered after the
	// task's newest step, and returns it as stored; a taken idempotency
	// key is ErrConflict and stores nothing.
	StepInsert(ctx context.Context, p *StepInsertParams) (TaskStep, error)
	StepGet(ctx context.Context, workspaceID, id string) (TaskStep, error)
	StepGetByKey(ctx context.Context, workspaceID, key string) (TaskStep, error)
	// StepFinish writes p.Result and finished_at on the step when it is
	// pending (the undo only when it has none); no row matched is
	// ErrNotFound.
	StepFinish(ctx context.Context, p *StepFinishParams) (TaskStep, error)
	// StepCompensate sets an ok step compensated; no row matched is
	// ErrNotFound.
	StepCompensate(ctx context.Context, workspaceID, id string) (TaskStep, error)
	// StepList returns the task's steps by seq (nil for none, whether or
	// not the task exists).
	StepList(ctx context.Context, workspaceID, taskID string) ([]TaskStep, error)

	// NotificationInsert inserts p.Notification, complete (pending); a
	// task that is not the workspace's is ErrNotFound.
	NotificationInsert(ctx context.Context, p *NotificationInsertParams) error
	NotificationGet(ctx context.Context, workspaceID, id string) (Notification, error)
	// NotificationList returns at most p.Limit notifications, newest
	// first (created_at, then id bytewise, both descending).
	NotificationList(ctx context.Context, p *NotificationListParams) ([]Notification, error)
	// NotificationDue returns at most p.Limit pending notifications of
	// every workspace whose send_at is NULL or at or before p.Now, by
	// coalesce(send_at, created_at), then id.
	NotificationDue(ctx context.Context, p *NotificationDueParams) ([]Notification, error)
	// NotificationFinish sets p.To (sent or failed), the error and
	// sent_at (p.SentAt, nil for none) when the notification is pending;
	// no row matched is ErrNotFound.
	NotificationFinish(ctx context.Context, p *NotificationFinishParams) (Notification, error)
}

// NotificationInsertParams is the row NotificationInsert writes.
type NotificationInsertParams struct {
	Notification Notification
}

// NotificationListParams select notifications of one workspace; empty
// Status and TaskID do not filter; Limit is positive.
type NotificationListParams struct {
	WorkspaceID string
	Status      NotificationStatus
	TaskID      string
	Limit       int
}

// NotificationDueParams select the due notifications.
type NotificationDueParams struct {
	Now   time.Time
	Limit int
}

// NotificationFinishParams are the arguments of NotificationFinish.
type NotificationFinishParams struct {
	WorkspaceID, ID string
	To              NotificationStatus
	Error           string
	SentAt          *time.Time
}

// TaskInsertParams is the task TaskInsert writes and its created event
// (Seq 1, stamped as the task).
type TaskInsertParams struct {
	Task  Task
	Event TaskEvent
}

// TaskListParams select tasks; see TaskDriver.TaskList.
type TaskListParams struct {
	WorkspaceID string
	Filter      TaskFilter
	After       bool
	AfterTime   time.Time
	AfterID     string
	Limit       int
}

// TaskTransitionParams are the arguments of TaskTransition: when the
// task's status is one of From, set status To, the intent when Intent is
// not nil, the capability when Capability is not empty, the assignee when
// Assignee is not nil ("" clears it) and updated_at Now; then append
// Event, stamped Now, when it is not nil.
type TaskTransitionParams struct {
	WorkspaceID, ID string
	From            []TaskStatus
	To              TaskStatus
	Intent          json.RawMessage
	Capability      Capability
	Assignee        *string
	Event           *TaskEvent
	// Notification, when set, is inserted (complete, pending) in the
	// transaction too.
	Notification *Notification
	Now          time.Time
}

// TaskEventInsertParams is the event TaskEventInsert writes, stamped Now.
type TaskEventInsertParams struct {
	WorkspaceID, TaskID string
	Event               TaskEvent
	Now                 time.Time
}

// TaskEventListParams select at most Limit (positive) events of a task.
type TaskEventListParams struct {
	WorkspaceID, TaskID string
	After               int64
	Limit               int
}

// ApprovalInsertParams is the row ApprovalInsert writes.
type ApprovalInsertParams struct {
	Approval Approval
}

// ApprovalListParams select approvals of one workspace; empty Status and
// TaskID do not filter; Limit is positive.
type ApprovalListParams struct {
	WorkspaceID string
	Status      ApprovalStatus
	TaskID      string
	Limit       int
}

// ApprovalDecideParams are the arguments of ApprovalDecide.
type ApprovalDecideParams struct {
	WorkspaceID, ID string
	To              ApprovalStatus
	Approver        string
	Now             time.Time
	Event           TaskEvent
}

// ApprovalExpireParams select the approvals ApprovalExpire expires.
type ApprovalExpireParams struct {
	Now             time.Time
	WorkspaceID, ID string
}

// StepInsertParams is the row StepInsert writes.
type StepInsertParams struct {
	Step TaskStep
}

// StepFinishParams are the arguments of StepFinish.
type StepFinishParams struct {
	WorkspaceID, ID string
	Result          StepResult
	Now             time.Time
}
