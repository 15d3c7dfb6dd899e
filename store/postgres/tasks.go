package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentcraftlab/agentcraft/store"
)

const taskColumns = `id, workspace_id, title, detail, intent, status, capability, assignee_user_id, source,
	source_ref, parent_task_id, due_at, created_by, created_at, updated_at, reply_to`

func scanTask(row pgx.Row) (store.Task, error) {
	var (
		t           store.Task
		ref, parent *string
	)
	if err := row.Scan(&t.ID, &t.WorkspaceID, &t.Title, &t.Detail, (*[]byte)(&t.Intent), &t.Status, &t.Capability,
		&t.AssigneeUserID, &t.Source, &ref, &parent, &t.DueAt, &t.CreatedBy, &t.CreatedAt, &t.UpdatedAt, (*[]byte)(&t.ReplyTo)); err != nil {
		return store.Task{}, err
	}
	if ref != nil {
		t.SourceRef = *ref
	}
	if parent != nil {
		t.ParentTaskID = *parent
	}
	t.DueAt = utc(t.DueAt)
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	return t, nil
}

// taskExists reports whether the workspace holds the task.
func taskExists(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, workspaceID, id string) (bool, error) {
	var exists bool
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tasks WHERE workspace_id = $1 AND id = $2)`, workspaceID, id).Scan(&exists)
	return exists, err
}

func (d driver) TaskInsert(ctx context.Context, p *store.TaskInsertParams) error {
	t, e := p.Task, p.Event
	err := pgx.BeginFunc(ctx, d.s.pool, func(tx pgx.Tx) error {
		if t.ParentTaskID != "" {
			ok, err := taskExists(ctx, tx, t.WorkspaceID, t.ParentTaskID)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("%w: parent task %s does not exist in the workspace", store.ErrNotFound, t.ParentTaskID)
			}
		}
		if _, err := tx.Exec(ctx,
			`INSERT INTO tasks (`+taskColumns+`, event_seq, step_seq)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, 1, 0)`,
			t.ID, t.WorkspaceID, t.Title, t.Detail, nullJSON(t.Intent), t.Status, t.Capability, t.AssigneeUserID, t.Source,
			nullString(t.SourceRef), nullString(t.ParentTaskID), t.DueAt, t.CreatedBy, t.CreatedAt, t.UpdatedAt, nullJSON(t.ReplyTo)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO task_events (`+taskEventColumns+`) VALUES ($1, $2, $3, $4, $5, $6)`,
			t.ID, e.Seq, e.Type, e.Actor, nullJSON(e.Payload), e.CreatedAt)
		return err
	})
	return mapErr(err)
}

func (d driver) TaskGet(ctx context.Context, workspaceID, id string) (store.Task, error) {
	t, err := scanTask(d.s.pool.QueryRow(ctx,
		`SELECT `+taskColumns+` FROM tasks WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	return t, mapErr(err)
}

func (d driver) TaskGetBySource(ctx context.Context, workspaceID, source, ref string) (store.Task, error) {
	t, err := scanTask(d.s.pool.QueryRow(ctx,
		`SELECT `+taskColumns+` FROM tasks WHERE workspace_id = $1 AND source = $2 AND source_ref = $3`, workspaceID, source, ref))
	return t, mapErr(err)
}

func (d driver) TaskList(ctx context.Context, p *store.TaskListParams) ([]store.Task, error) {
	f := p.Filter
	// An empty filter value matches every row.
	out, err := queryList(ctx, d.s, scanTask,
		`SELECT `+taskColumns+` FROM tasks
		WHERE workspace_id = $1 AND ($2 = '' OR status = $2) AND ($3 = '' OR source = $3)
			AND ($4 = '' OR assignee_user_id = $4)
			AND (NOT $5 OR (created_at, id COLLATE "C") < ($6, $7 COLLATE "C"))
		ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $8`,
		p.WorkspaceID, string(f.Status), f.Source, f.AssigneeUserID, p.After, p.AfterTime, p.AfterID, p.Limit)
	return out, mapErr(err)
}

// insertTaskEvent moves the task's event_seq on in the statement that
// checks the workspace (and locks the task row until the transaction
// ends, so a concurrent append waits and numbers after this one), then
// inserts e with that seq.
func insertTaskEvent(ctx context.Context, tx pgx.Tx, workspaceID, taskID string, e store.TaskEvent) (store.TaskEvent, error) {
	if err := tx.QueryRow(ctx,
		`UPDATE tasks SET event_seq = event_seq + 1 WHERE workspace_id = $1 AND id = $2 RETURNING event_seq`,
		workspaceID, taskID).Scan(&e.Seq); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return e, fmt.Errorf("%w: task %s does not exist in the workspace", store.ErrNotFound, taskID)
		}
		return e, err
	}
	e.TaskID = taskID
	_, err := tx.Exec(ctx, `INSERT INTO task_events (`+taskEventColumns+`) VALUES ($1, $2, $3, $4, $5, $6)`,
		e.TaskID, e.Seq, e.Type, e.Actor, nullJSON(e.Payload), e.CreatedAt)
	return e, err
}

func (d driver) TaskTransition(ctx context.Context, p *store.TaskTransitionParams) (store.Task, error) {
	statuses := make([]string, len(p.From))
	for i, s := range p.From {
		statuses[i] = string(s)
	}
	var t store.Task
	err := pgx.BeginFunc(ctx, d.s.pool, func(tx pgx.Tx) error {
		var err error
		t, err = scanTask(tx.QueryRow(ctx,
			`UPDATE tasks SET status = $1, intent = coalesce($2::jsonb, intent), capability = coalesce(nullif($3, ''), capability),
				assignee_user_id = coalesce($4, assignee_user_id), updated_at = $5
			WHERE workspace_id = $6 AND id = $7 AND status = ANY ($8)
			RETURNING `+taskColumns,
			p.To, nullJSON(p.Intent), string(p.Capability), p.Assignee, p.Now, p.WorkspaceID, p.ID, statuses))
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
	err := pgx.BeginFunc(ctx, d.s.pool, func(tx pgx.Tx) error {
		e := p.Event
		e.CreatedAt = p.Now
		var err error
		out, err = insertTaskEvent(ctx, tx, p.WorkspaceID, p.TaskID, e)
		return err
	})
	if err != nil {
		return store.TaskEvent{}, mapErr(err)
	}
	return out, nil
}

const taskEventColumns = `task_id, seq, type, actor, payload, created_at`

func scanTaskEvent(row pgx.Row) (store.TaskEvent, error) {
	var e store.TaskEvent
	if err := row.Scan(&e.TaskID, &e.Seq, &e.Type, &e.Actor, (*[]byte)(&e.Payload), &e.CreatedAt); err != nil {
		return store.TaskEvent{}, err
	}
	e.CreatedAt = e.CreatedAt.UTC()
	return e, nil
}

func (d driver) TaskEventList(ctx context.Context, p *store.TaskEventListParams) ([]store.TaskEvent, error) {
	out, err := queryList(ctx, d.s, scanTaskEvent,
		`SELECT e.task_id, e.seq, e.type, e.actor, e.payload, e.created_at
		FROM task_events e JOIN tasks t ON t.id = e.task_id
		WHERE t.workspace_id = $1 AND e.task_id = $2 AND e.seq > $3 ORDER BY e.seq LIMIT $4`,
		p.WorkspaceID, p.TaskID, p.After, p.Limit)
	return out, mapErr(err)
}

func (d driver) TaskExists(ctx context.Context, workspaceID, id string) (bool, error) {
	return taskExists(ctx, d.s.pool, workspaceID, id)
}

const approvalColumns = `id, workspace_id, task_id, run_id, step_key, capability, summary, status, requested_by,
	approver_user_id, decided_at, expires_at, created_at`

func scanApproval(row pgx.Row) (store.Approval, error) {
	var (
		a              store.Approval
		runID, stepKey *string
	)
	if err := row.Scan(&a.ID, &a.WorkspaceID, &a.TaskID, &runID, &stepKey, &a.Capability, &a.Summary, &a.Status,
		&a.RequestedBy, &a.ApproverUserID, &a.DecidedAt, &a.ExpiresAt, &a.CreatedAt); err != nil {
		return store.Approval{}, err
	}
	if runID != nil {
		a.RunID = *runID
	}
	if stepKey != nil {
		a.StepKey = *stepKey
	}
	a.DecidedAt, a.ExpiresAt = utc(a.DecidedAt), utc(a.ExpiresAt)
	a.CreatedAt = a.CreatedAt.UTC()
	return a, nil
}

// errTaskOrRun is the ErrNotFound of an insert whose task or run is not
// the workspace's.
var errTaskOrRun = fmt.Errorf("%w: task or run does not exist in the workspace", store.ErrNotFound)

func (d driver) ApprovalInsert(ctx context.Context, p *store.ApprovalInsertParams) error {
	a := p.Approval
	tag, err := d.s.pool.Exec(ctx,
		`INSERT INTO approvals (`+approvalColumns+`)
		SELECT $1, $2, $3, $4, $5, $6, $7, 'pending', $8, '', NULL, $9, $10
		WHERE EXISTS (SELECT 1 FROM tasks WHERE id = $3 AND workspace_id = $2)
			AND ($4::text IS NULL OR EXISTS (SELECT 1 FROM runs WHERE id = $4 AND workspace_id = $2))`,
		a.ID, a.WorkspaceID, a.TaskID, nullString(a.RunID), nullString(a.StepKey), a.Capability, a.Summary,
		a.RequestedBy, a.ExpiresAt, a.CreatedAt)
	if err != nil {
		return mapErr(err)
	}
	if affected(tag) != nil {
		return errTaskOrRun
	}
	return nil
}

func (d driver) ApprovalGet(ctx context.Context, workspaceID, id string) (store.Approval, error) {
	a, err := scanApproval(d.s.pool.QueryRow(ctx,
		`SELECT `+approvalColumns+` FROM approvals WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	return a, mapErr(err)
}

func (d driver) ApprovalGetByStep(ctx context.Context, workspaceID, taskID, stepKey string) (store.Approval, error) {
	a, err := scanApproval(d.s.pool.QueryRow(ctx,
		`SELECT `+approvalColumns+` FROM approvals WHERE workspace_id = $1 AND task_id = $2 AND step_key = $3`,
		workspaceID, taskID, stepKey))
	return a, mapErr(err)
}

func (d driver) ApprovalList(ctx context.Context, p *store.ApprovalListParams) ([]store.Approval, error) {
	out, err := queryList(ctx, d.s, scanApproval,
		`SELECT `+approvalColumns+` FROM approvals
		WHERE workspace_id = $1 AND ($2 = '' OR status = $2) AND ($3 = '' OR task_id = $3)
		ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $4`,
		p.WorkspaceID, string(p.Status), p.TaskID, p.Limit)
	return out, mapErr(err)
}

// ApprovalDecide: a concurrent decision waits on the row lock and then
// re-checks the condition against the decided row, so only one wins, and
// only the winner appends the event.
func (d driver) ApprovalDecide(ctx context.Context, p *store.ApprovalDecideParams) (store.Approval, error) {
	var a store.Approval
	err := pgx.BeginFunc(ctx, d.s.pool, func(tx pgx.Tx) error {
		var err error
		a, err = scanApproval(tx.QueryRow(ctx,
			`UPDATE approvals SET status = $1, approver_user_id = $2, decided_at = $3
			WHERE workspace_id = $4 AND id = $5 AND status = 'pending' AND (expires_at IS NULL OR expires_at > $3)
			RETURNING `+approvalColumns,
			p.To, p.Approver, p.Now, p.WorkspaceID, p.ID))
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
	out, err := queryList(ctx, d.s, scanApproval,
		`WITH u AS (
			UPDATE approvals SET status = 'expired'
			WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= $1
				AND ($2 = '' OR workspace_id = $3 AND id = $2)
			RETURNING `+approvalColumns+`
		)
		SELECT `+approvalColumns+` FROM u ORDER BY expires_at, id COLLATE "C"`,
		p.Now, p.ID, p.WorkspaceID)
	return out, mapErr(err)
}

const stepColumns = `id, workspace_id, task_id, run_id, seq, idempotency_key, tool, capability, input, output, undo,
	status, error, created_at, finished_at`

func scanStep(row pgx.Row) (store.TaskStep, error) {
	var (
		s     store.TaskStep
		runID *string
	)
	if err := row.Scan(&s.ID, &s.WorkspaceID, &s.TaskID, &runID, &s.Seq, &s.IdempotencyKey, &s.Tool, &s.Capability,
		(*[]byte)(&s.Input), (*[]byte)(&s.Output), (*[]byte)(&s.Undo), &s.Status, &s.Error, &s.CreatedAt, &s.FinishedAt); err != nil {
		return store.TaskStep{}, err
	}
	if runID != nil {
		s.RunID = *runID
	}
	s.CreatedAt, s.FinishedAt = s.CreatedAt.UTC(), utc(s.FinishedAt)
	return s, nil
}

// StepInsert moves the task's step_seq on in the statement that checks
// the workspace and the run (and locks the task row, so steps of one task
// number in order), then inserts the step; a taken key fails the insert
// and rolls the counter back with it. It returns the inserted row, JSON
// as jsonb keeps it.
func (d driver) StepInsert(ctx context.Context, p *store.StepInsertParams) (store.TaskStep, error) {
	s := p.Step
	run := nullString(s.RunID)
	var out store.TaskStep
	err := pgx.BeginFunc(ctx, d.s.pool, func(tx pgx.Tx) error {
		var seq int64
		err := tx.QueryRow(ctx,
			`UPDATE tasks SET step_seq = step_seq + 1
			WHERE id = $1 AND workspace_id = $2
				AND ($3::text IS NULL OR EXISTS (SELECT 1 FROM runs WHERE id = $3 AND workspace_id = $2))
			RETURNING step_seq`,
			s.TaskID, s.WorkspaceID, run).Scan(&seq)
		if errors.Is(err, pgx.ErrNoRows) {
			return errTaskOrRun
		}
		if err != nil {
			return err
		}
		out, err = scanStep(tx.QueryRow(ctx,
			`INSERT INTO task_steps (`+stepColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
			RETURNING `+stepColumns,
			s.ID, s.WorkspaceID, s.TaskID, run, seq, s.IdempotencyKey, s.Tool, s.Capability,
			nullJSON(s.Input), nullJSON(s.Output), nullJSON(s.Undo), s.Status, s.Error, s.CreatedAt, s.FinishedAt))
		return err
	})
	if err != nil {
		return store.TaskStep{}, mapErr(err)
	}
	return out, nil
}

func (d driver) StepGet(ctx context.Context, workspaceID, id string) (store.TaskStep, error) {
	s, err := scanStep(d.s.pool.QueryRow(ctx,
		`SELECT `+stepColumns+` FROM task_steps WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	return s, mapErr(err)
}

func (d driver) StepGetByKey(ctx context.Context, workspaceID, key string) (store.TaskStep, error) {
	s, err := scanStep(d.s.pool.QueryRow(ctx,
		`SELECT `+stepColumns+` FROM task_steps WHERE workspace_id = $1 AND idempotency_key = $2`, workspaceID, key))
	return s, mapErr(err)
}

// StepFinish: a concurrent finish waits on the row lock and then finds
// the step finished, so evidence is written once.
func (d driver) StepFinish(ctx context.Context, p *store.StepFinishParams) (store.TaskStep, error) {
	r := p.Result
	s, err := scanStep(d.s.pool.QueryRow(ctx,
		`UPDATE task_steps SET status = $1, output = $2, error = $3, undo = coalesce(undo, $4), finished_at = $5
		WHERE workspace_id = $6 AND id = $7 AND status = 'pending'
		RETURNING `+stepColumns,
		r.Status, nullJSON(r.Output), r.Error, nullJSON(r.Undo), p.Now, p.WorkspaceID, p.ID))
	return s, mapErr(err)
}

func (d driver) StepCompensate(ctx context.Context, workspaceID, id string) (store.TaskStep, error) {
	s, err := scanStep(d.s.pool.QueryRow(ctx,
		`UPDATE task_steps SET status = 'compensated' WHERE workspace_id = $1 AND id = $2 AND status = 'ok'
		RETURNING `+stepColumns, workspaceID, id))
	return s, mapErr(err)
}

func (d driver) StepList(ctx context.Context, workspaceID, taskID string) ([]store.TaskStep, error) {
	out, err := queryList(ctx, d.s, scanStep,
		`SELECT `+stepColumns+` FROM task_steps WHERE workspace_id = $1 AND task_id = $2 ORDER BY seq`, workspaceID, taskID)
	return out, mapErr(err)
}

const notificationColumns = `id, workspace_id, task_id, channel, target, kind, payload, status, error, send_at, sent_at, created_at`

func scanNotification(row pgx.Row) (store.Notification, error) {
	var (
		n      store.Notification
		taskID *string
	)
	if err := row.Scan(&n.ID, &n.WorkspaceID, &taskID, &n.Channel, &n.Target, &n.Kind, (*[]byte)(&n.Payload), &n.Status,
		&n.Error, &n.SendAt, &n.SentAt, &n.CreatedAt); err != nil {
		return store.Notification{}, err
	}
	if taskID != nil {
		n.TaskID = *taskID
	}
	n.SendAt, n.SentAt = utc(n.SendAt), utc(n.SentAt)
	n.CreatedAt = n.CreatedAt.UTC()
	return n, nil
}

// NotificationInsert checks the task, when there is one, in the insert:
// no row inserted is ErrNotFound; an unknown workspace fails the foreign
// key.
func (d driver) NotificationInsert(ctx context.Context, p *store.NotificationInsertParams) error {
	return mapErr(insertNotification(ctx, d.s.pool, p.Notification))
}

// insertNotification inserts n through db (the pool, or a transaction),
// checking its task in the statement.
func insertNotification(ctx context.Context, db interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}, n store.Notification) error {
	tag, err := db.Exec(ctx,
		`INSERT INTO notifications (`+notificationColumns+`)
		SELECT $1, $2, $3, $4, $5, $6, $7, 'pending', '', $8, NULL, $9
		WHERE $3::text IS NULL OR EXISTS (SELECT 1 FROM tasks WHERE id = $3 AND workspace_id = $2)`,
		n.ID, n.WorkspaceID, nullString(n.TaskID), n.Channel, n.Target, n.Kind, nullJSON(n.Payload), n.SendAt, n.CreatedAt)
	if err != nil {
		return err
	}
	if affected(tag) != nil {
		return fmt.Errorf("%w: task %s does not exist in the workspace", store.ErrNotFound, n.TaskID)
	}
	return nil
}

func (d driver) NotificationGet(ctx context.Context, workspaceID, id string) (store.Notification, error) {
	n, err := scanNotification(d.s.pool.QueryRow(ctx,
		`SELECT `+notificationColumns+` FROM notifications WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	return n, mapErr(err)
}

func (d driver) NotificationList(ctx context.Context, p *store.NotificationListParams) ([]store.Notification, error) {
	out, err := queryList(ctx, d.s, scanNotification,
		`SELECT `+notificationColumns+` FROM notifications
		WHERE workspace_id = $1 AND ($2 = '' OR status = $2) AND ($3 = '' OR task_id = $3)
		ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $4`,
		p.WorkspaceID, string(p.Status), p.TaskID, p.Limit)
	return out, mapErr(err)
}

func (d driver) NotificationDue(ctx context.Context, p *store.NotificationDueParams) ([]store.Notification, error) {
	// The WHERE clause repeats the notifications_due index's.
	out, err := queryList(ctx, d.s, scanNotification,
		`SELECT `+notificationColumns+` FROM notifications
		WHERE status = 'pending' AND coalesce(send_at, created_at) <= $1
		ORDER BY coalesce(send_at, created_at), id COLLATE "C" LIMIT $2`, p.Now, p.Limit)
	return out, mapErr(err)
}

func (d driver) NotificationFinish(ctx context.Context, p *store.NotificationFinishParams) (store.Notification, error) {
	n, err := scanNotification(d.s.pool.QueryRow(ctx,
		`UPDATE notifications SET status = $1, error = $2, sent_at = $3
		WHERE workspace_id = $4 AND id = $5 AND status = 'pending'
		RETURNING `+notificationColumns,
		p.To, p.Error, p.SentAt, p.WorkspaceID, p.ID))
	return n, mapErr(err)
}
