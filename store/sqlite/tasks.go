package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentcraftlab/agentcraft/store"
)

const taskColumns = `id, workspace_id, title, detail, intent, status, capability, assignee_user_id, source,
	source_ref, parent_task_id, due_at, created_by, created_at, updated_at, reply_to`

func scanTask(sc scanner) (store.Task, error) {
	var (
		t                store.Task
		ref, parent      sql.NullString
		due              sql.NullInt64
		created, updated int64
	)
	if err := sc.Scan(&t.ID, &t.WorkspaceID, &t.Title, &t.Detail, (*[]byte)(&t.Intent), &t.Status, &t.Capability,
		&t.AssigneeUserID, &t.Source, &ref, &parent, &due, &t.CreatedBy, &created, &updated, (*[]byte)(&t.ReplyTo)); err != nil {
		return store.Task{}, err
	}
	t.SourceRef, t.ParentTaskID = ref.String, parent.String
	t.DueAt = fromNullMicros(due)
	t.CreatedAt, t.UpdatedAt = fromMicros(created), fromMicros(updated)
	return t, nil
}

// taskExists reports whether the workspace holds the task.
func taskExists(ctx context.Context, db queryRower, workspaceID, id string) (bool, error) {
	var one int
	err := db.QueryRowContext(ctx, `SELECT 1 FROM tasks WHERE workspace_id = ? AND id = ?`, workspaceID, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (d driver) TaskInsert(ctx context.Context, p *store.TaskInsertParams) error {
	t, e := p.Task, p.Event
	var due any
	if t.DueAt != nil {
		due = micros(*t.DueAt)
	}
	err := d.s.writeTx(ctx, func(tx *sql.Tx) error {
		if t.ParentTaskID != "" {
			ok, err := taskExists(ctx, tx, t.WorkspaceID, t.ParentTaskID)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("%w: parent task %s does not exist in the workspace", store.ErrNotFound, t.ParentTaskID)
			}
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO tasks (`+taskColumns+`, event_seq, step_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 0)`,
			t.ID, t.WorkspaceID, t.Title, t.Detail, nullJSON(t.Intent), t.Status, t.Capability, t.AssigneeUserID, t.Source,
			nullString(t.SourceRef), nullString(t.ParentTaskID), due, t.CreatedBy, micros(t.CreatedAt), micros(t.UpdatedAt), nullJSON(t.ReplyTo)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO task_events (`+taskEventColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
			t.ID, e.Seq, e.Type, e.Actor, nullJSON(e.Payload), micros(e.CreatedAt))
		return err
	})
	return mapErr(err)
}

func (d driver) TaskGet(ctx context.Context, workspaceID, id string) (store.Task, error) {
	t, err := scanTask(d.s.reader.QueryRowContext(ctx,
		`SELECT `+taskColumns+` FROM tasks WHERE workspace_id = ? AND id = ?`, workspaceID, id))
	return t, mapErr(err)
}

func (d driver) TaskGetBySource(ctx context.Context, workspaceID, source, ref string) (store.Task, error) {
	t, err := scanTask(d.s.reader.QueryRowContext(ctx,
		`SELECT `+taskColumns+` FROM tasks WHERE workspace_id = ? AND source = ? AND source_ref = ?`, workspaceID, source, ref))
	return t, mapErr(err)
}

func (d driver) TaskList(ctx context.Context, p *store.TaskListParams) ([]store.Task, error) {
	q := `SELECT ` + taskColumns + ` FROM tasks WHERE workspace_id = ?`
	args := []any{p.WorkspaceID}
	f := p.Filter
	if f.Status != "" {
		q += ` AND status = ?`
		args = append(args, f.Status)
	}
	if f.Source != "" {
		q += ` AND source = ?`
		args = append(args, f.Source)
	}
	if f.AssigneeUserID != "" {
		q += ` AND assignee_user_id = ?`
		args = append(args, f.AssigneeUserID)
	}
	if p.After {
		t := micros(p.AfterTime)
		q += ` AND (created_at < ? OR created_at = ? AND id < ?)`
		args = append(args, t, t, p.AfterID)
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	out, err := queryList(ctx, d.s.reader, scanTask, q, append(args, p.Limit)...)
	return out, mapErr(err)
}

// insertTaskEvent moves the task's event_seq on in the statement that
// checks the workspace, then inserts e with that seq.
func insertTaskEvent(ctx context.Context, tx *sql.Tx, workspaceID, taskID string, e store.TaskEvent) (store.TaskEvent, error) {
	if err := tx.QueryRowContext(ctx,
		`UPDATE tasks SET event_seq = event_seq + 1 WHERE workspace_id = ? AND id = ? RETURNING event_seq`,
		workspaceID, taskID).Scan(&e.Seq); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return e, fmt.Errorf("%w: task %s does not exist in the workspace", store.ErrNotFound, taskID)
		}
		return e, err
	}
	e.TaskID = taskID
	_, err := tx.ExecContext(ctx, `INSERT INTO task_events (`+taskEventColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
		e.TaskID, e.Seq, e.Type, e.Actor, nullJSON(e.Payload), micros(e.CreatedAt))
	return e, err
}

func (d driver) TaskTransition(ctx context.Context, p *store.TaskTransitionParams) (store.Task, error) {
	var intent, capability, assignee any
	if p.Intent != nil {
		intent = string(p.Intent)
	}
	if p.Capability != "" {
		capability = p.Capability
	}
	if p.Assignee != nil {
		assignee = *p.Assignee
	}
	args := []any{p.To, intent, capability, assignee, micros(p.Now), p.WorkspaceID, p.ID}
	for _, s := range p.From {
		args = append(args, s)
	}
	var t store.Task
	err := d.s.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		t, err = scanTask(tx.QueryRowContext(ctx,
			`UPDATE tasks SET status = ?, intent = coalesce(?, intent), capability = coalesce(?, capability),
				assignee_user_id = coalesce(?, assignee_user_id), updated_at = ?
			WHERE workspace_id = ? AND id = ? AND status IN (?`+strings.Repeat(", ?", len(p.From)-1)+`)
			RETURNING `+taskColumns, args...))
		if err != nil {
			return err
		}
		if p.Event != nil {
			e := *p.Event
			e.CreatedAt = p.Now
			if _, err := insertTaskEvent(ctx, tx, p.WorkspaceID, p.ID, e); err != nil {
				return err
			}
		}
		if p.Notification != nil {
			return insertNotification(ctx, tx, *p.Notification)
		}
		return nil
	})
	return t, mapErr(err)
}

func (d driver) TaskEventInsert(ctx context.Context, p *store.TaskEventInsertParams) (store.TaskEvent, error) {
	var out store.TaskEvent
	err := d.s.writeTx(ctx, func(tx *sql.Tx) error {
		e := p.Event
		e.CreatedAt = p.Now
		var err error
		out, err = insertTaskEvent(ctx, tx, p.WorkspaceID, p.TaskID, e)
		return err
	})
	return out, mapErr(err)
}

const taskEventColumns = `task_id, seq, type, actor, payload, created_at`

func scanTaskEvent(sc scanner) (store.TaskEvent, error) {
	var (
		e       store.TaskEvent
		created int64
	)
	if err := sc.Scan(&e.TaskID, &e.Seq, &e.Type, &e.Actor, (*[]byte)(&e.Payload), &created); err != nil {
		return store.TaskEvent{}, err
	}
	e.CreatedAt = fromMicros(created)
	return e, nil
}

func (d driver) TaskEventList(ctx context.Context, p *store.TaskEventListParams) ([]store.TaskEvent, error) {
	out, err := queryList(ctx, d.s.reader, scanTaskEvent,
		`SELECT e.task_id, e.seq, e.type, e.actor, e.payload, e.created_at
		FROM task_events e JOIN tasks t ON t.id = e.task_id
		WHERE t.workspace_id = ? AND e.task_id = ? AND e.seq > ? ORDER BY e.seq LIMIT ?`,
		p.WorkspaceID, p.TaskID, p.After, p.Limit)
	return out, mapErr(err)
}

func (d driver) TaskExists(ctx context.Context, workspaceID, id string) (bool, error) {
	return taskExists(ctx, d.s.reader, workspaceID, id)
}

const approvalColumns = `id, workspace_id, task_id, run_id, step_key, capability, summary, status, requested_by,
	approver_user_id, decided_at, expires_at, created_at`

func scanApproval(sc scanner) (store.Approval, error) {
	var (
		a                store.Approval
		runID, stepKey   sql.NullString
		decided, expires sql.NullInt64
		created          int64
	)
	if err := sc.Scan(&a.ID, &a.WorkspaceID, &a.TaskID, &runID, &stepKey, &a.Capability, &a.Summary, &a.Status,
		&a.RequestedBy, &a.ApproverUserID, &decided, &expires, &created); err != nil {
		return store.Approval{}, err
	}
	a.RunID, a.StepKey = runID.String, stepKey.String
	a.DecidedAt, a.ExpiresAt = fromNullMicros(decided), fromNullMicros(expires)
	a.CreatedAt = fromMicros(created)
	return a, nil
}

// taskAndRunExist is the condition of an insert naming a task and maybe a
// run: both the workspace's. Its arguments are task id, workspace id, run
// id, run id, workspace id.
const taskAndRunExist = `EXISTS (SELECT 1 FROM tasks WHERE id = ? AND workspace_id = ?)
	AND (? IS NULL OR EXISTS (SELECT 1 FROM runs WHERE id = ? AND workspace_id = ?))`

// errTaskOrRun is the ErrNotFound of an insert whose task or run is not
// the workspace's.
var errTaskOrRun = fmt.Errorf("%w: task or run does not exist in the workspace", store.ErrNotFound)

func (d driver) ApprovalInsert(ctx context.Context, p *store.ApprovalInsertParams) error {
	a := p.Approval
	var expires any
	if a.ExpiresAt != nil {
		expires = micros(*a.ExpiresAt)
	}
	run := nullString(a.RunID)
	res, err := d.s.writer.ExecContext(ctx,
		`INSERT INTO approvals (`+approvalColumns+`)
		SELECT ?, ?, ?, ?, ?, ?, ?, 'pending', ?, '', NULL, ?, ? WHERE `+taskAndRunExist,
		a.ID, a.WorkspaceID, a.TaskID, run, nullString(a.StepKey), a.Capability, a.Summary, a.RequestedBy,
		expires, micros(a.CreatedAt), a.TaskID, a.WorkspaceID, run, run, a.WorkspaceID)
	if err != nil {
		return mapErr(err)
	}
	if rowsAffected(res) != nil {
		return errTaskOrRun
	}
	return nil
}

func (d driver) ApprovalGet(ctx context.Context, workspaceID, id string) (store.Approval, error) {
	a, err := scanApproval(d.s.reader.QueryRowContext(ctx,
		`SELECT `+approvalColumns+` FROM approvals WHERE workspace_id = ? AND id = ?`, workspaceID, id))
	return a, mapErr(err)
}

func (d driver) ApprovalGetByStep(ctx context.Context, workspaceID, taskID, stepKey string) (store.Approval, error) {
	a, err := scanApproval(d.s.reader.QueryRowContext(ctx,
		`SELECT `+approvalColumns+` FROM approvals WHERE workspace_id = ? AND task_id = ? AND step_key = ?`,
		workspaceID, taskID, stepKey))
	return a, mapErr(err)
}

func (d driver) ApprovalList(ctx context.Context, p *store.ApprovalListParams) ([]store.Approval, error) {
	q := `SELECT ` + approvalColumns + ` FROM approvals WHERE workspace_id = ?`
	args := []any{p.WorkspaceID}
	if p.Status != "" {
		q += ` AND status = ?`
		args = append(args, p.Status)
	}
	if p.TaskID != "" {
		q += ` AND task_id = ?`
		args = append(args, p.TaskID)
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	out, err := queryList(ctx, d.s.reader, scanApproval, q, append(args, p.Limit)...)
	return out, mapErr(err)
}

func (d driver) ApprovalDecide(ctx context.Context, p *store.ApprovalDecideParams) (store.Approval, error) {
	t := micros(p.Now)
	var a store.Approval
	err := d.s.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		a, err = scanApproval(tx.QueryRowContext(ctx,
			`UPDATE approvals SET status = ?, approver_user_id = ?, decided_at = ?
			WHERE workspace_id = ? AND id = ? AND status = 'pending' AND (expires_at IS NULL OR expires_at > ?)
			RETURNING `+approvalColumns,
			p.To, p.Approver, t, p.WorkspaceID, p.ID, t))
		if err != nil {
			return err
		}
		e := p.Event
		e.CreatedAt = p.Now
		_, err = insertTaskEvent(ctx, tx, p.WorkspaceID, a.TaskID, e)
		return err
	})
	return a, mapErr(err)
}

func (d driver) ApprovalExpire(ctx context.Context, p *store.ApprovalExpireParams) ([]store.Approval, error) {
	q := `UPDATE approvals SET status = 'expired'
		WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= ?`
	args := []any{micros(p.Now)}
	if p.ID != "" {
		q += ` AND workspace_id = ? AND id = ?`
		args = append(args, p.WorkspaceID, p.ID)
	}
	var out []store.Approval
	err := d.s.writeTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, q+` RETURNING `+approvalColumns, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			a, err := scanApproval(rows)
			if err != nil {
				return err
			}
			out = append(out, a)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, mapErr(err)
	}
	// RETURNING gives no order; the contract's is by expiry, then id.
	slices.SortFunc(out, func(a, b store.Approval) int {
		if c := a.ExpiresAt.Compare(*b.ExpiresAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

const stepColumns = `id, workspace_id, task_id, run_id, seq, idempotency_key, tool, capability, input, output, undo,
	status, error, created_at, finished_at`

func scanStep(sc scanner) (store.TaskStep, error) {
	var (
		s        store.TaskStep
		runID    sql.NullString
		created  int64
		finished sql.NullInt64
	)
	if err := sc.Scan(&s.ID, &s.WorkspaceID, &s.TaskID, &runID, &s.Seq, &s.IdempotencyKey, &s.Tool, &s.Capability,
		(*[]byte)(&s.Input), (*[]byte)(&s.Output), (*[]byte)(&s.Undo), &s.Status, &s.Error, &created, &finished); err != nil {
		return store.TaskStep{}, err
	}
	s.RunID = runID.String
	s.CreatedAt, s.FinishedAt = fromMicros(created), fromNullMicros(finished)
	return s, nil
}

// StepInsert moves the task's step_seq on in the statement that checks the
// workspace (and the run), then inserts the step; a taken key fails the
// insert and rolls the counter back with it.
func (d driver) StepInsert(ctx context.Context, p *store.StepInsertParams) (store.TaskStep, error) {
	s := p.Step
	run := nullString(s.RunID)
	var finished any
	if s.FinishedAt != nil {
		finished = micros(*s.FinishedAt)
	}
	err := d.s.writeTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx,
			`UPDATE tasks SET step_seq = step_seq + 1
			WHERE id = ? AND workspace_id = ? AND (? IS NULL OR EXISTS (SELECT 1 FROM runs WHERE id = ? AND workspace_id = ?))
			RETURNING step_seq`,
			s.TaskID, s.WorkspaceID, run, run, s.WorkspaceID).Scan(&s.Seq)
		if errors.Is(err, sql.ErrNoRows) {
			return errTaskOrRun
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx,
			`INSERT INTO task_steps (`+stepColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			s.ID, s.WorkspaceID, s.TaskID, run, s.Seq, s.IdempotencyKey, s.Tool, s.Capability,
			nullJSON(s.Input), nullJSON(s.Output), nullJSON(s.Undo), s.Status, s.Error, micros(s.CreatedAt), finished)
		return err
	})
	if err != nil {
		return store.TaskStep{}, mapErr(err)
	}
	return s, nil
}

func (d driver) StepGet(ctx context.Context, workspaceID, id string) (store.TaskStep, error) {
	s, err := scanStep(d.s.reader.QueryRowContext(ctx,
		`SELECT `+stepColumns+` FROM task_steps WHERE workspace_id = ? AND id = ?`, workspaceID, id))
	return s, mapErr(err)
}

func (d driver) StepGetByKey(ctx context.Context, workspaceID, key string) (store.TaskStep, error) {
	s, err := scanStep(d.s.reader.QueryRowContext(ctx,
		`SELECT `+stepColumns+` FROM task_steps WHERE workspace_id = ? AND idempotency_key = ?`, workspaceID, key))
	return s, mapErr(err)
}

func (d driver) StepFinish(ctx context.Context, p *store.StepFinishParams) (store.TaskStep, error) {
	r := p.Result
	s, err := scanStep(d.s.writer.QueryRowContext(ctx,
		`UPDATE task_steps SET status = ?, output = ?, error = ?, undo = coalesce(undo, ?), finished_at = ?
		WHERE workspace_id = ? AND id = ? AND status = 'pending'
		RETURNING `+stepColumns,
		r.Status, nullJSON(r.Output), r.Error, nullJSON(r.Undo), micros(p.Now), p.WorkspaceID, p.ID))
	return s, mapErr(err)
}

func (d driver) StepCompensate(ctx context.Context, workspaceID, id string) (store.TaskStep, error) {
	s, err := scanStep(d.s.writer.QueryRowContext(ctx,
		`UPDATE task_steps SET status = 'compensated' WHERE workspace_id = ? AND id = ? AND status = 'ok'
		RETURNING `+stepColumns, workspaceID, id))
	return s, mapErr(err)
}

func (d driver) StepList(ctx context.Context, workspaceID, taskID string) ([]store.TaskStep, error) {
	out, err := queryList(ctx, d.s.reader, scanStep,
		`SELECT `+stepColumns+` FROM task_steps WHERE workspace_id = ? AND task_id = ? ORDER BY seq`, workspaceID, taskID)
	return out, mapErr(err)
}

const notificationColumns = `id, workspace_id, task_id, channel, target, kind, payload, status, error, send_at, sent_at, created_at`

func scanNotification(sc scanner) (store.Notification, error) {
	var (
		n            store.Notification
		taskID       sql.NullString
		sendAt, sent sql.NullInt64
		created      int64
	)
	if err := sc.Scan(&n.ID, &n.WorkspaceID, &taskID, &n.Channel, &n.Target, &n.Kind, (*[]byte)(&n.Payload), &n.Status,
		&n.Error, &sendAt, &sent, &created); err != nil {
		return store.Notification{}, err
	}
	n.TaskID = taskID.String
	n.SendAt, n.SentAt = fromNullMicros(sendAt), fromNullMicros(sent)
	n.CreatedAt = fromMicros(created)
	return n, nil
}

// NotificationInsert checks the task, when there is one, in the insert:
// no row inserted is ErrNotFound; an unknown workspace fails the foreign
// key.
func (d driver) NotificationInsert(ctx context.Context, p *store.NotificationInsertParams) error {
	return mapErr(insertNotification(ctx, d.s.writer, p.Notification))
}

// insertNotification inserts n through db (the writer, or a write
// transaction), checking its task in the statement.
func insertNotification(ctx context.Context, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, n store.Notification) error {
	var sendAt any
	if n.SendAt != nil {
		sendAt = micros(*n.SendAt)
	}
	task := nullString(n.TaskID)
	res, err := db.ExecContext(ctx,
		`INSERT INTO notifications (`+notificationColumns+`)
		SELECT ?, ?, ?, ?, ?, ?, ?, 'pending', '', ?, NULL, ?
		WHERE ? IS NULL OR EXISTS (SELECT 1 FROM tasks WHERE id = ? AND workspace_id = ?)`,
		n.ID, n.WorkspaceID, task, n.Channel, n.Target, n.Kind, nullJSON(n.Payload), sendAt, micros(n.CreatedAt),
		task, task, n.WorkspaceID)
	if err != nil {
		return err
	}
	if rowsAffected(res) != nil {
		return fmt.Errorf("%w: task %s does not exist in the workspace", store.ErrNotFound, n.TaskID)
	}
	return nil
}

func (d driver) NotificationGet(ctx context.Context, workspaceID, id string) (store.Notification, error) {
	n, err := scanNotification(d.s.reader.QueryRowContext(ctx,
		`SELECT `+notificationColumns+` FROM notifications WHERE workspace_id = ? AND id = ?`, workspaceID, id))
	return n, mapErr(err)
}

func (d driver) NotificationList(ctx context.Context, p *store.NotificationListParams) ([]store.Notification, error) {
	q := `SELECT ` + notificationColumns + ` FROM notifications WHERE workspace_id = ?`
	args := []any{p.WorkspaceID}
	if p.Status != "" {
		q += ` AND status = ?`
		args = append(args, p.Status)
	}
	if p.TaskID != "" {
		q += ` AND task_id = ?`
		args = append(args, p.TaskID)
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	out, err := queryList(ctx, d.s.reader, scanNotification, q, append(args, p.Limit)...)
	return out, mapErr(err)
}

func (d driver) NotificationDue(ctx context.Context, p *store.NotificationDueParams) ([]store.Notification, error) {
	// The WHERE and ORDER BY repeat the notifications_due index's.
	out, err := queryList(ctx, d.s.reader, scanNotification,
		`SELECT `+notificationColumns+` FROM notifications
		WHERE status = 'pending' AND coalesce(send_at, created_at) <= ?
		ORDER BY coalesce(send_at, created_at), id LIMIT ?`, micros(p.Now), p.Limit)
	return out, mapErr(err)
}

func (d driver) NotificationFinish(ctx context.Context, p *store.NotificationFinishParams) (store.Notification, error) {
	var sent any
	if p.SentAt != nil {
		sent = micros(*p.SentAt)
	}
	n, err := scanNotification(d.s.writer.QueryRowContext(ctx,
		`UPDATE notifications SET status = ?, error = ?, sent_at = ?
		WHERE workspace_id = ? AND id = ? AND status = 'pending'
		RETURNING `+notificationColumns,
		p.To, p.Error, sent, p.WorkspaceID, p.ID))
	return n, mapErr(err)
}
