package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Tasks implements Store.
func (c Core) Tasks() Tasks { return tasks{c} }

// Approvals implements Store.
func (c Core) Approvals() Approvals { return approvals{c} }

// Steps implements Store.
func (c Core) Steps() Steps { return steps{c} }

// tasks is Tasks on a Driver: the task state machine, written once.
type tasks struct{ c Core }

func (r tasks) Create(ctx context.Context, t Task) (Task, error) {
	if err := t.Validate(); err != nil {
		return Task{}, r.c.errorf("create task: %w", err)
	}
	if t.ID == "" {
		t.ID = NewID()
	}
	if t.Status == "" {
		t.Status = TaskOpen
	}
	if t.Capability == "" {
		t.Capability = CapabilityLow
	}
	t.Intent, t.ReplyTo = cloneJSON(t.Intent), cloneJSON(t.ReplyTo)
	t.DueAt = timestampPtr(t.DueAt)
	ts := now()
	t.CreatedAt, t.UpdatedAt = ts, ts
	ev := TaskEvent{TaskID: t.ID, Seq: 1, Type: TaskEventCreated, Actor: t.CreatedBy, CreatedAt: ts}
	err := r.c.d.TaskInsert(ctx, &TaskInsertParams{Task: t, Event: ev})
	if errors.Is(err, ErrConflict) && t.SourceRef != "" {
		// The message made a task already (a redelivered webhook): hand
		// that task back with the conflict.
		if got, gerr := r.c.d.TaskGetBySource(ctx, t.WorkspaceID, t.Source, t.SourceRef); gerr == nil {
			return got, r.c.errorf("create task: %w: %s message %q made task %s already", ErrConflict, t.Source, t.SourceRef, got.ID)
		}
	}
	if err != nil {
		return Task{}, r.c.errorf("create task: %w", err)
	}
	return t, nil
}

func (r tasks) Get(ctx context.Context, workspaceID, id string) (Task, error) {
	t, err := r.c.d.TaskGet(ctx, workspaceID, id)
	if err != nil {
		return Task{}, r.c.errorf("get task %s: %w", id, err)
	}
	return t, nil
}

func (r tasks) GetBySource(ctx context.Context, workspaceID, source, ref string) (Task, error) {
	if source == "" || ref == "" {
		return Task{}, r.c.errorf("get task by source: %w: the source or the ref is empty", ErrInvalid)
	}
	t, err := r.c.d.TaskGetBySource(ctx, workspaceID, source, ref)
	if err != nil {
		return Task{}, r.c.errorf("get task of %s message %q: %w", source, ref, err)
	}
	return t, nil
}

func (r tasks) List(ctx context.Context, workspaceID string, f TaskFilter) (TaskPage, error) {
	if f.Status != "" && !f.Status.Valid() {
		return TaskPage{}, r.c.errorf("list tasks: %w: status %q is unknown", ErrInvalid, f.Status)
	}
	p := &TaskListParams{WorkspaceID: workspaceID, Filter: f, Limit: clampList(f.Limit) + 1}
	if f.Cursor != "" {
		t, id, err := decodeListCursor("task", f.Cursor)
		if err != nil {
			return TaskPage{}, r.c.errorf("list tasks: %w", err)
		}
		p.After, p.AfterTime, p.AfterID = true, t, id
	}
	rows, err := r.c.d.TaskList(ctx, p)
	if err != nil {
		return TaskPage{}, r.c.errorf("list tasks: %w", err)
	}
	page := TaskPage{Tasks: rows}
	if n := p.Limit - 1; len(rows) > n {
		page.Tasks = rows[:n]
		last := rows[n-1]
		page.Next = encodeListCursor(last.CreatedAt, last.ID)
	}
	return page, nil
}

func (r tasks) Transition(ctx context.Context, workspaceID, id string, from []TaskStatus, to TaskStatus, u TaskUpdate) (Task, error) {
	if err := checkTransition("task", from, to, u); err != nil {
		return Task{}, r.c.errorf("transition task %s: %w", id, err)
	}
	p := &TaskTransitionParams{WorkspaceID: workspaceID, ID: id, From: from, To: to,
		Intent: cloneJSON(u.Intent), Capability: u.Capability, Assignee: u.AssigneeUserID, Now: now()}
	if u.Event != nil {
		ev := *u.Event
		ev.TaskID, ev.Seq, ev.CreatedAt = id, 0, p.Now
		ev.Payload = cloneJSON(ev.Payload)
		p.Event = &ev
	}
	if u.Notification != nil {
		n := newNotification(*u.Notification, p.Now)
		if n.WorkspaceID != "" && n.WorkspaceID != workspaceID || n.TaskID != "" && n.TaskID != id {
			return Task{}, r.c.errorf("transition task %s: %w: its notification names workspace %q and task %q, not the task's",
				id, ErrInvalid, n.WorkspaceID, n.TaskID)
		}
		n.WorkspaceID, n.TaskID = workspaceID, id
		if err := n.Validate(); err != nil {
			return Task{}, r.c.errorf("transition task %s: %w", id, err)
		}
		p.Notification = &n
	}
	t, err := r.c.d.TaskTransition(ctx, p)
	if isNotFound(err) {
		cur, gerr := r.c.d.TaskGet(ctx, workspaceID, id)
		if gerr != nil {
			return Task{}, r.c.errorf("transition task %s: %w", id, ErrNotFound)
		}
		return cur, r.c.errorf("transition task %s to %s: %w: task is %s", id, to, ErrConflict, cur.Status)
	}
	if err != nil {
		return Task{}, r.c.errorf("transition task %s: %w", id, err)
	}
	return t, nil
}

func (r tasks) AppendEvent(ctx context.Context, workspaceID, taskID string, e TaskEvent) (TaskEvent, error) {
	if err := e.Validate(); err != nil {
		return TaskEvent{}, r.c.errorf("append event to task %s: %w", taskID, err)
	}
	e.TaskID, e.Seq = taskID, 0
	e.Payload = cloneJSON(e.Payload)
	got, err := r.c.d.TaskEventInsert(ctx, &TaskEventInsertParams{WorkspaceID: workspaceID, TaskID: taskID, Event: e, Now: now()})
	if err != nil {
		return TaskEvent{}, r.c.errorf("append event to task %s: %w", taskID, err)
	}
	return got, nil
}

// taskExists returns ErrNotFound unless the workspace holds the task.
func (r tasks) taskExists(ctx context.Context, workspaceID, id string) error {
	ok, err := r.c.d.TaskExists(ctx, workspaceID, id)
	if err == nil && !ok {
		err = fmt.Errorf("%w: task %s does not exist in the workspace", ErrNotFound, id)
	}
	return err
}

func (r tasks) Events(ctx context.Context, workspaceID, taskID string, after int64, limit int) ([]TaskEvent, error) {
	if limit <= 0 {
		limit = 1000
	}
	out, err := r.c.d.TaskEventList(ctx, &TaskEventListParams{WorkspaceID: workspaceID, TaskID: taskID, After: after, Limit: limit})
	if err == nil && len(out) == 0 {
		err = r.taskExists(ctx, workspaceID, taskID)
	}
	if err != nil {
		return nil, r.c.errorf("list events of task %s: %w", taskID, err)
	}
	return out, nil
}

// approvals is Approvals on a Driver.
type approvals struct{ c Core }

func (r approvals) Create(ctx context.Context, a Approval) (Approval, error) {
	if err := a.Validate(); err != nil {
		return Approval{}, r.c.errorf("create approval: %w", err)
	}
	if a.ID == "" {
		a.ID = NewID()
	}
	a.Status, a.ApproverUserID, a.DecidedAt = ApprovalPending, "", nil
	a.ExpiresAt = timestampPtr(a.ExpiresAt)
	a.CreatedAt = now()
	err := r.c.d.ApprovalInsert(ctx, &ApprovalInsertParams{Approval: a})
	if errors.Is(err, ErrConflict) && a.StepKey != "" {
		if got, gerr := r.c.d.ApprovalGetByStep(ctx, a.WorkspaceID, a.TaskID, a.StepKey); gerr == nil {
			return got, r.c.errorf("create approval: %w: task %s asked for step %q already (approval %s, %s)",
				ErrConflict, a.TaskID, a.StepKey, got.ID, got.Status)
		}
	}
	if err != nil {
		return Approval{}, r.c.errorf("create approval: %w", err)
	}
	return a, nil
}

func (r approvals) Get(ctx context.Context, workspaceID, id string) (Approval, error) {
	a, err := r.c.d.ApprovalGet(ctx, workspaceID, id)
	if err != nil {
		return Approval{}, r.c.errorf("get approval %s: %w", id, err)
	}
	return a, nil
}

func (r approvals) List(ctx context.Context, workspaceID string, f ApprovalFilter) ([]Approval, error) {
	if f.Status != "" && !f.Status.Valid() {
		return nil, r.c.errorf("list approvals: %w: status %q is unknown", ErrInvalid, f.Status)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	out, err := r.c.d.ApprovalList(ctx, &ApprovalListParams{WorkspaceID: workspaceID, Status: f.Status, TaskID: f.TaskID, Limit: limit})
	if err != nil {
		return nil, r.c.errorf("list approvals: %w", err)
	}
	return out, nil
}

func (r approvals) Decide(ctx context.Context, workspaceID, id string, approved bool, approver string, at time.Time) (Approval, bool, error) {
	if approver == "" {
		return Approval{}, false, r.c.errorf("decide approval %s: %w: approver is empty; name who decides", id, ErrInvalid)
	}
	if at.IsZero() {
		return Approval{}, false, r.c.errorf("decide approval %s: %w: the time is zero; pass the time of the decision", id, ErrInvalid)
	}
	to := ApprovalRejected
	if approved {
		to = ApprovalApproved
	}
	at = Timestamp(at)
	typ := TaskEventRejected
	if approved {
		typ = TaskEventApproved
	}
	payload, err := json.Marshal(map[string]string{"approval_id": id})
	if err != nil {
		return Approval{}, false, r.c.errorf("decide approval %s: %w", id, err)
	}
	ev := TaskEvent{Type: typ, Actor: approver, Payload: payload}
	a, err := r.c.d.ApprovalDecide(ctx, &ApprovalDecideParams{WorkspaceID: workspaceID, ID: id, To: to, Approver: approver, Now: at, Event: ev})
	if err == nil {
		return a, true, nil
	}
	if !isNotFound(err) {
		return Approval{}, false, r.c.errorf("decide approval %s: %w", id, err)
	}
	// Not pending, or pending but expired: which?
	cur, gerr := r.c.d.ApprovalGet(ctx, workspaceID, id)
	if gerr != nil {
		return Approval{}, false, r.c.errorf("decide approval %s: %w", id, ErrNotFound)
	}
	if cur.Status == ApprovalPending {
		// Past its expiry and not swept yet: expire it now, so the row
		// handed back says why.
		if exp, err := r.c.d.ApprovalExpire(ctx, &ApprovalExpireParams{Now: at, WorkspaceID: workspaceID, ID: id}); err == nil && len(exp) == 1 {
			cur = exp[0]
		} else if got, err := r.c.d.ApprovalGet(ctx, workspaceID, id); err == nil {
			cur = got // decided by someone else in between
		}
	}
	if cur.Status == to {
		return cur, false, nil
	}
	return cur, false, r.c.errorf("decide approval %s: %w: approval is %s, cannot be %s", id, ErrConflict, cur.Status, to)
}

func (r approvals) ExpireDue(ctx context.Context, at time.Time) ([]Approval, error) {
	if at.IsZero() {
		return nil, r.c.errorf("expire approvals: %w: the time is zero", ErrInvalid)
	}
	out, err := r.c.d.ApprovalExpire(ctx, &ApprovalExpireParams{Now: Timestamp(at)})
	if err != nil {
		return nil, r.c.errorf("expire approvals: %w", err)
	}
	return out, nil
}

// steps is Steps on a Driver: the write-once evidence ledger.
type steps struct{ c Core }

func (r steps) Record(ctx context.Context, s TaskStep) (TaskStep, error) {
	if err := s.Validate(); err != nil {
		return TaskStep{}, r.c.errorf("record step: %w", err)
	}
	if s.ID == "" {
		s.ID = NewID()
	}
	if s.Status == "" {
		s.Status = StepPending
	}
	if s.Capability == "" {
		s.Capability = CapabilityLow
	}
	s.Seq = 0
	s.Input, s.Output, s.Undo = cloneJSON(s.Input), cloneJSON(s.Output), cloneJSON(s.Undo)
	t := now()
	s.CreatedAt, s.FinishedAt = t, nil
	if s.Status != StepPending {
		s.FinishedAt = &t
	}
	got, err := r.c.d.StepInsert(ctx, &StepInsertParams{Step: s})
	if errors.Is(err, ErrConflict) {
		if cur, gerr := r.c.d.StepGetByKey(ctx, s.WorkspaceID, s.IdempotencyKey); gerr == nil {
			return cur, r.c.errorf("record step: %w: idempotency key %q is step %d of task %s already (%s)",
				ErrConflict, s.IdempotencyKey, cur.Seq, cur.TaskID, cur.Status)
		}
	}
	if err != nil {
		return TaskStep{}, r.c.errorf("record step %q: %w", s.IdempotencyKey, err)
	}
	return got, nil
}

func (r steps) Finish(ctx context.Context, workspaceID, id string, res StepResult) (TaskStep, error) {
	if err := res.Validate(); err != nil {
		return TaskStep{}, r.c.errorf("finish step %s: %w", id, err)
	}
	res.Output, res.Undo = cloneJSON(res.Output), cloneJSON(res.Undo)
	s, err := r.c.d.StepFinish(ctx, &StepFinishParams{WorkspaceID: workspaceID, ID: id, Result: res, Now: now()})
	if isNotFound(err) {
		cur, gerr := r.c.d.StepGet(ctx, workspaceID, id)
		if gerr != nil {
			return TaskStep{}, r.c.errorf("finish step %s: %w", id, ErrNotFound)
		}
		return cur, r.c.errorf("finish step %s: %w: step is %s already; evidence is written once", id, ErrConflict, cur.Status)
	}
	if err != nil {
		return TaskStep{}, r.c.errorf("finish step %s: %w", id, err)
	}
	return s, nil
}

func (r steps) Compensate(ctx context.Context, workspaceID, id string) (TaskStep, error) {
	s, err := r.c.d.StepCompensate(ctx, workspaceID, id)
	if isNotFound(err) {
		cur, gerr := r.c.d.StepGet(ctx, workspaceID, id)
		if gerr != nil {
			return TaskStep{}, r.c.errorf("compensate step %s: %w", id, ErrNotFound)
		}
		return cur, r.c.errorf("compensate step %s: %w: step is %s; only an ok step is compensated", id, ErrConflict, cur.Status)
	}
	if err != nil {
		return TaskStep{}, r.c.errorf("compensate step %s: %w", id, err)
	}
	return s, nil
}

func (r steps) Get(ctx context.Context, workspaceID, id string) (TaskStep, error) {
	s, err := r.c.d.StepGet(ctx, workspaceID, id)
	if err != nil {
		return TaskStep{}, r.c.errorf("get step %s: %w", id, err)
	}
	return s, nil
}

func (r steps) GetByKey(ctx context.Context, workspaceID, key string) (TaskStep, error) {
	if key == "" {
		return TaskStep{}, r.c.errorf("get step by key: %w: the key is empty", ErrInvalid)
	}
	s, err := r.c.d.StepGetByKey(ctx, workspaceID, key)
	if err != nil {
		return TaskStep{}, r.c.errorf("get step %q: %w", key, err)
	}
	return s, nil
}

func (r steps) List(ctx context.Context, workspaceID, taskID string) ([]TaskStep, error) {
	out, err := r.c.d.StepList(ctx, workspaceID, taskID)
	if err == nil && len(out) == 0 {
		err = tasks(r).taskExists(ctx, workspaceID, taskID)
	}
	if err != nil {
		return nil, r.c.errorf("list steps of task %s: %w", taskID, err)
	}
	return out, nil
}

// Notifications implements Store.
func (c Core) Notifications() Notifications { return notifications{c} }

// notifications is Notifications on a Driver.
type notifications struct{ c Core }

func (r notifications) Create(ctx context.Context, n Notification) (Notification, error) {
	if err := n.Validate(); err != nil {
		return Notification{}, r.c.errorf("create notification: %w", err)
	}
	n = newNotification(n, now())
	if err := r.c.d.NotificationInsert(ctx, &NotificationInsertParams{Notification: n}); err != nil {
		return Notification{}, r.c.errorf("create notification: %w", err)
	}
	return n, nil
}

// newNotification completes n as it is stored: an id when it has none,
// the line channel when it names none, pending, created at.
func newNotification(n Notification, at time.Time) Notification {
	if n.ID == "" {
		n.ID = NewID()
	}
	if n.Channel == "" {
		n.Channel = "line"
	}
	n.Status, n.Error, n.SentAt = NotificationPending, "", nil
	n.SendAt = timestampPtr(n.SendAt)
	n.Payload = cloneJSON(n.Payload)
	n.CreatedAt = at
	return n
}

func (r notifications) Get(ctx context.Context, workspaceID, id string) (Notification, error) {
	n, err := r.c.d.NotificationGet(ctx, workspaceID, id)
	if err != nil {
		return Notification{}, r.c.errorf("get notification %s: %w", id, err)
	}
	return n, nil
}

func (r notifications) List(ctx context.Context, workspaceID string, f NotificationFilter) ([]Notification, error) {
	if f.Status != "" && !f.Status.Valid() {
		return nil, r.c.errorf("list notifications: %w: status %q is unknown", ErrInvalid, f.Status)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	out, err := r.c.d.NotificationList(ctx, &NotificationListParams{WorkspaceID: workspaceID, Status: f.Status, TaskID: f.TaskID, Limit: limit})
	if err != nil {
		return nil, r.c.errorf("list notifications: %w", err)
	}
	return out, nil
}

func (r notifications) Due(ctx context.Context, at time.Time, limit int) ([]Notification, error) {
	if at.IsZero() {
		return nil, r.c.errorf("list due notifications: %w: the time is zero", ErrInvalid)
	}
	if limit <= 0 {
		limit = 100
	}
	out, err := r.c.d.NotificationDue(ctx, &NotificationDueParams{Now: Timestamp(at), Limit: limit})
	if err != nil {
		return nil, r.c.errorf("list due notifications: %w", err)
	}
	return out, nil
}

// finish moves a pending notification to p.To; sameOK says a row in p.To
// already is no error.
func (r notifications) finish(ctx context.Context, op string, p *NotificationFinishParams, sameOK bool) (Notification, error) {
	n, err := r.c.d.NotificationFinish(ctx, p)
	if isNotFound(err) {
		cur, gerr := r.c.d.NotificationGet(ctx, p.WorkspaceID, p.ID)
		if gerr != nil {
			return Notification{}, r.c.errorf("%s notification %s: %w", op, p.ID, ErrNotFound)
		}
		if sameOK && cur.Status == p.To {
			return cur, nil
		}
		return cur, r.c.errorf("%s notification %s: %w: notification is %s", op, p.ID, ErrConflict, cur.Status)
	}
	if err != nil {
		return Notification{}, r.c.errorf("%s notification %s: %w", op, p.ID, err)
	}
	return n, nil
}

func (r notifications) MarkSent(ctx context.Context, workspaceID, id string, at time.Time) (Notification, error) {
	if at.IsZero() {
		return Notification{}, r.c.errorf("mark notification %s sent: %w: the time is zero", id, ErrInvalid)
	}
	t := Timestamp(at)
	return r.finish(ctx, "mark sent", &NotificationFinishParams{WorkspaceID: workspaceID, ID: id, To: NotificationSent, SentAt: &t}, true)
}

func (r notifications) MarkFailed(ctx context.Context, workspaceID, id, errText string) (Notification, error) {
	if errText == "" {
		return Notification{}, r.c.errorf("mark notification %s failed: %w: the error is empty; say why the channel refused it", id, ErrInvalid)
	}
	return r.finish(ctx, "mark failed", &NotificationFinishParams{WorkspaceID: workspaceID, ID: id, To: NotificationFailed, Error: errText}, false)
}
