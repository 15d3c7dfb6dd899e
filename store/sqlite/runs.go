package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentcraftlab/agentcraft/store"
)

const runColumns = `id, workspace_id, workflow_id, workflow_version, definition, status, input, output,
	error, waiting_node, lease_owner, lease_until, created_at, updated_at, finished_at, task_id, executor, trigger_id,
	traceparent, tracestate`

func scanRun(sc scanner) (store.Run, error) {
	var (
		r                store.Run
		workflowID       sql.NullString
		taskID, executor sql.NullString
		triggerID        sql.NullString
		tp, ts           sql.NullString
		created, updated int64
		until, finished  sql.NullInt64
	)
	if err := sc.Scan(&r.ID, &r.WorkspaceID, &workflowID, &r.WorkflowVersion, (*[]byte)(&r.Definition),
		&r.Status, (*[]byte)(&r.Input), (*[]byte)(&r.Output), &r.Error, &r.WaitingNode,
		&r.LeaseOwner, &until, &created, &updated, &finished, &taskID, &executor, &triggerID, &tp, &ts); err != nil {
		return store.Run{}, err
	}
	r.WorkflowID = workflowID.String
	r.TaskID, r.Executor, r.TriggerID = taskID.String, executor.String, triggerID.String
	r.TraceParent, r.TraceState = tp.String, ts.String
	r.LeaseUntil = fromNullMicros(until)
	r.CreatedAt = fromMicros(created)
	r.UpdatedAt = fromMicros(updated)
	r.FinishedAt = fromNullMicros(finished)
	return r, nil
}

// cloneJSON copies m, keeping empty as nil: what a read returns.
func cloneJSON(m json.RawMessage) json.RawMessage {
	if len(m) == 0 {
		return nil
	}
	return append(json.RawMessage(nil), m...)
}

// RunInsert returns the row it was given: SQLite stores what it is given.
func (d driver) RunInsert(ctx context.Context, p *store.RunInsertParams) (store.Run, error) {
	run := p.Run
	var finished any
	if run.FinishedAt != nil {
		finished = micros(*run.FinishedAt)
	}
	_, err := d.s.writer.ExecContext(ctx,
		`INSERT INTO runs (`+runColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', NULL, ?, ?, ?, ?, ?, ?, ?, ?)`,
		run.ID, run.WorkspaceID, nullString(run.WorkflowID), run.WorkflowVersion, string(run.Definition),
		run.Status, nullJSON(run.Input), nullJSON(run.Output), run.Error, run.WaitingNode,
		micros(run.CreatedAt), micros(run.UpdatedAt), finished, nullString(run.TaskID), nullString(run.Executor), nullString(run.TriggerID),
		nullString(run.TraceParent), nullString(run.TraceState))
	if err != nil {
		return store.Run{}, mapErr(err)
	}
	return run, nil
}

func (d driver) RunGet(ctx context.Context, workspaceID, id string) (store.Run, error) {
	run, err := scanRun(d.s.reader.QueryRowContext(ctx,
		`SELECT `+runColumns+` FROM runs WHERE workspace_id = ? AND id = ?`, workspaceID, id))
	return run, mapErr(err)
}

func (d driver) RunList(ctx context.Context, p *store.RunListParams) ([]store.Run, error) {
	q := `SELECT ` + runColumns + ` FROM runs WHERE workspace_id = ?`
	args := []any{p.WorkspaceID}
	if p.Status != "" {
		q += ` AND status = ?`
		args = append(args, p.Status)
	}
	if p.WorkflowID != "" {
		q += ` AND workflow_id = ?`
		args = append(args, p.WorkflowID)
	}
	if p.TaskID != "" {
		q += ` AND task_id = ?`
		args = append(args, p.TaskID)
	}
	if p.Executor != "" {
		q += ` AND executor = ?`
		args = append(args, p.Executor)
	}
	if p.TriggerID != "" {
		q += ` AND trigger_id = ?`
		args = append(args, p.TriggerID)
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	args = append(args, p.Limit)
	return queryList(ctx, d.s.reader, scanRun, q, args...)
}

func (d driver) RunListLive(ctx context.Context) ([]store.Run, error) {
	// The WHERE clause repeats the runs_live index's, so SQLite uses it.
	return queryList(ctx, d.s.reader, scanRun,
		`SELECT `+runColumns+` FROM runs WHERE status IN ('queued', 'running') ORDER BY created_at, id`)
}

func (d driver) RunClaim(ctx context.Context, p *store.RunClaimParams) (store.Run, error) {
	run, err := scanRun(d.s.writer.QueryRowContext(ctx,
		`UPDATE runs SET status = 'running', lease_owner = ?, lease_until = ?, updated_at = ?
		WHERE workspace_id = ? AND id = ? AND status IN ('queued', 'running')
			AND (lease_owner = '' OR lease_owner = ? OR lease_until IS NULL OR lease_until < ? OR ?)
		RETURNING `+runColumns,
		p.Owner, micros(p.Until), micros(p.Now), p.WorkspaceID, p.ID, p.Owner, micros(p.Now), p.Force))
	return run, mapErr(err)
}

func (d driver) RunTransition(ctx context.Context, p *store.RunTransitionParams) (store.Run, error) {
	var finished any
	if p.Finished != nil {
		finished = micros(*p.Finished)
	}
	var errText, waiting any
	if p.Update.Error != nil {
		errText = *p.Update.Error
	}
	if p.Update.WaitingNode != nil {
		waiting = *p.Update.WaitingNode
	}
	var output any
	if p.Update.Output != nil {
		output = string(p.Update.Output)
	}
	args := []any{p.To, output, errText, waiting, micros(p.Now), finished, p.Release, p.Release, p.WorkspaceID, p.ID, p.LeaseOwner, p.LeaseOwner}
	for _, s := range p.From {
		args = append(args, s)
	}
	run, err := scanRun(d.s.writer.QueryRowContext(ctx,
		`UPDATE runs SET status = ?, output = coalesce(?, output), error = coalesce(?, error),
			waiting_node = coalesce(?, waiting_node), updated_at = ?, finished_at = ?,
			lease_owner = CASE WHEN ? THEN '' ELSE lease_owner END,
			lease_until = CASE WHEN ? THEN NULL ELSE lease_until END
		WHERE workspace_id = ? AND id = ? AND (? = '' OR lease_owner = ?)
			AND status IN (?`+strings.Repeat(", ?", len(p.From)-1)+`)
		RETURNING `+runColumns, args...))
	return run, mapErr(err)
}

// insertCheckpoint selects from runs, so one statement both checks that the
// run belongs to the workspace (no row inserted: ErrNotFound) and refuses a
// key already saved (unique violation: ErrConflict).
const insertCheckpoint = `INSERT INTO run_checkpoints (run_id, key, node_id, output, handle, created_at)
	SELECT id, ?, ?, ?, ?, ? FROM runs WHERE id = ? AND workspace_id = ?`

// maxEventRows caps the events one statement inserts, which bounds the
// statements the cache holds; longer lists take several statements.
const maxEventRows = 8

// insertEvents[n] inserts n events in one statement, skipping those stored
// already.
var insertEvents = func() (q [maxEventRows + 1]string) {
	for n := 1; n <= maxEventRows; n++ {
		q[n] = `INSERT INTO run_events (run_id, seq, type, data, created_at) VALUES (?, ?, ?, ?, ?)` +
			strings.Repeat(`, (?, ?, ?, ?, ?)`, n-1) + ` ON CONFLICT (run_id, seq) DO NOTHING`
	}
	return q
}()

// RunCheckpointInsert is on the hot path of every workflow node: a
// transaction of one insert for the checkpoint and one for the events (per
// maxEventRows), prepared once. Preparing cuts the user CPU time of a call
// by about a fifth (BenchmarkRunCheckpoint, Prepared vs Adhoc); most of the
// rest is the commit writing its WAL frames and taking the WAL locks.
func (d driver) RunCheckpointInsert(ctx context.Context, p *store.RunCheckpointInsertParams) error {
	return d.checkpoint(ctx, p, d.s.writeStmt)
}

// checkpoint is RunCheckpointInsert with the statements from prepare; nil
// prepare runs them unprepared (the benchmark's peer).
func (d driver) checkpoint(ctx context.Context, p *store.RunCheckpointInsertParams,
	prepare func(context.Context, string) (*sql.Stmt, error)) error {
	cp, events := p.Checkpoint, p.Events
	// Prepare first: the transaction holds the writer's only connection.
	cpExec, err := d.exec(ctx, prepare, insertCheckpoint)
	if err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	var evExecs []txExec
	for rest := len(events); rest > 0; rest -= maxEventRows {
		ex, err := d.exec(ctx, prepare, insertEvents[min(rest, maxEventRows)])
		if err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		evExecs = append(evExecs, ex)
	}
	t := micros(p.Now)
	err = d.s.writeTx(ctx, func(tx *sql.Tx) error {
		res, err := cpExec(ctx, tx, cp.Key, cp.NodeID, nullJSON(cp.Output), cp.Handle, t, cp.RunID, p.WorkspaceID)
		if err != nil {
			return err
		}
		if err := rowsAffected(res); err != nil {
			return err
		}
		args := make([]any, 0, 5*min(len(events), maxEventRows))
		for i, ex := range evExecs {
			args = args[:0]
			for _, e := range events[i*maxEventRows : min(len(events), (i+1)*maxEventRows)] {
				args = append(args, e.RunID, e.Seq, e.Type, nullJSON(e.Data), t)
			}
			if _, err := ex(ctx, tx, args...); err != nil {
				return err
			}
		}
		return nil
	})
	return mapErr(err)
}

// txExec runs one statement in a transaction.
type txExec func(ctx context.Context, tx *sql.Tx, args ...any) (sql.Result, error)

// exec returns an executor of query: prepared through prepare, or parsed
// at each call when prepare is nil.
func (d driver) exec(ctx context.Context, prepare func(context.Context, string) (*sql.Stmt, error), query string) (txExec, error) {
	if prepare == nil {
		return func(ctx context.Context, tx *sql.Tx, args ...any) (sql.Result, error) {
			return tx.ExecContext(ctx, query, args...)
		}, nil
	}
	st, err := prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, tx *sql.Tx, args ...any) (sql.Result, error) {
		return tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}, nil
}

func (d driver) RunEventInsert(ctx context.Context, p *store.RunEventInsertParams) error {
	stmt, err := d.s.writeStmt(ctx, insertEvents[1])
	if err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	t := micros(p.Now)
	err = d.s.writeTx(ctx, func(tx *sql.Tx) error {
		checked := ""
		for _, e := range p.Events {
			// Events come in runs of one run: check each run once.
			if e.RunID != checked {
				ok, err := runExists(ctx, tx, p.WorkspaceID, e.RunID)
				if err != nil {
					return err
				}
				if !ok {
					return fmt.Errorf("%w: run %s does not exist in the workspace", store.ErrNotFound, e.RunID)
				}
				checked = e.RunID
			}
			if _, err := tx.StmtContext(ctx, stmt).ExecContext(ctx, e.RunID, e.Seq, e.Type, nullJSON(e.Data), t); err != nil {
				return err
			}
		}
		return nil
	})
	return mapErr(err)
}

// queryRower is a *sql.DB or *sql.Tx.
type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// runExists reports whether the workspace holds the run.
func runExists(ctx context.Context, db queryRower, workspaceID, id string) (bool, error) {
	var one int
	err := db.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE workspace_id = ? AND id = ?`, workspaceID, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (d driver) RunExists(ctx context.Context, workspaceID, id string) (bool, error) {
	return runExists(ctx, d.s.reader, workspaceID, id)
}

func scanCheckpoint(sc scanner) (store.Checkpoint, error) {
	var (
		cp      store.Checkpoint
		created int64
	)
	if err := sc.Scan(&cp.RunID, &cp.Key, &cp.NodeID, (*[]byte)(&cp.Output), &cp.Handle, &created); err != nil {
		return store.Checkpoint{}, err
	}
	cp.CreatedAt = fromMicros(created)
	return cp, nil
}

func (d driver) RunCheckpointList(ctx context.Context, workspaceID, runID string) ([]store.Checkpoint, error) {
	return queryList(ctx, d.s.reader, scanCheckpoint,
		`SELECT c.run_id, c.key, c.node_id, c.output, c.handle, c.created_at
		FROM run_checkpoints c JOIN runs r ON r.id = c.run_id
		WHERE r.workspace_id = ? AND c.run_id = ? ORDER BY c.id`, workspaceID, runID)
}

func scanEvent(sc scanner) (store.RunEvent, error) {
	var (
		e       store.RunEvent
		created int64
	)
	if err := sc.Scan(&e.RunID, &e.Seq, &e.Type, (*[]byte)(&e.Data), &created); err != nil {
		return store.RunEvent{}, err
	}
	e.CreatedAt = fromMicros(created)
	return e, nil
}

func (d driver) RunEventList(ctx context.Context, p *store.RunEventListParams) ([]store.RunEvent, error) {
	return queryList(ctx, d.s.reader, scanEvent,
		`SELECT e.run_id, e.seq, e.type, e.data, e.created_at
		FROM run_events e JOIN runs r ON r.id = e.run_id
		WHERE r.workspace_id = ? AND e.run_id = ? AND e.seq > ? ORDER BY e.seq LIMIT ?`,
		p.WorkspaceID, p.RunID, p.After, p.Limit)
}
