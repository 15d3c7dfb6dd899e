package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

type runs struct{ s *Store }

const runColumns = `id, workspace_id, workflow_id, workflow_version, definition, status, input, output,
	error, waiting_node, lease_owner, lease_until, created_at, updated_at, finished_at`

func scanRun(sc scanner) (store.Run, error) {
	var (
		r                store.Run
		workflowID       sql.NullString
		created, updated int64
		until, finished  sql.NullInt64
	)
	if err := sc.Scan(&r.ID, &r.WorkspaceID, &workflowID, &r.WorkflowVersion, (*[]byte)(&r.Definition),
		&r.Status, (*[]byte)(&r.Input), (*[]byte)(&r.Output), &r.Error, &r.WaitingNode,
		&r.LeaseOwner, &until, &created, &updated, &finished); err != nil {
		return store.Run{}, err
	}
	r.WorkflowID = workflowID.String
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

func (r runs) Create(ctx context.Context, run store.Run) (store.Run, error) {
	if err := run.Validate(); err != nil {
		return store.Run{}, fmt.Errorf("sqlite: create run: %w", err)
	}
	if run.ID == "" {
		run.ID = store.NewID()
	}
	if run.Status == "" {
		run.Status = store.RunQueued
	}
	run.Definition = append(json.RawMessage(nil), run.Definition...)
	run.Input, run.Output = cloneJSON(run.Input), cloneJSON(run.Output)
	run.LeaseOwner, run.LeaseUntil = "", nil
	t := now()
	run.CreatedAt, run.UpdatedAt, run.FinishedAt = t, t, nil
	var finished any
	if run.Status.Final() {
		run.FinishedAt = &t
		finished = micros(t)
	}
	_, err := r.s.writer.ExecContext(ctx,
		`INSERT INTO runs (`+runColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', NULL, ?, ?, ?)`,
		run.ID, run.WorkspaceID, nullString(run.WorkflowID), run.WorkflowVersion, string(run.Definition),
		run.Status, nullJSON(run.Input), nullJSON(run.Output), run.Error, run.WaitingNode,
		micros(t), micros(t), finished)
	if err != nil {
		return store.Run{}, fmt.Errorf("sqlite: create run: %w", mapErr(err))
	}
	return run, nil
}

func (r runs) Get(ctx context.Context, workspaceID, id string) (store.Run, error) {
	run, err := scanRun(r.s.reader.QueryRowContext(ctx,
		`SELECT `+runColumns+` FROM runs WHERE workspace_id = ? AND id = ?`, workspaceID, id))
	if err != nil {
		return store.Run{}, fmt.Errorf("sqlite: get run %s: %w", id, mapErr(err))
	}
	return run, nil
}

func (r runs) List(ctx context.Context, workspaceID string, f store.RunFilter) ([]store.Run, error) {
	q := `SELECT ` + runColumns + ` FROM runs WHERE workspace_id = ?`
	args := []any{workspaceID}
	if f.Status != "" {
		q += ` AND status = ?`
		args = append(args, f.Status)
	}
	if f.WorkflowID != "" {
		q += ` AND workflow_id = ?`
		args = append(args, f.WorkflowID)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	args = append(args, limit)
	out, err := queryList(ctx, r.s.reader, scanRun, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list runs: %w", err)
	}
	return out, nil
}

func (r runs) Live(ctx context.Context) ([]store.Run, error) {
	// The WHERE clause repeats the runs_live index's, so SQLite uses it.
	out, err := queryList(ctx, r.s.reader, scanRun,
		`SELECT `+runColumns+` FROM runs WHERE status IN ('queued', 'running') ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list live runs: %w", err)
	}
	return out, nil
}

func (r runs) Claim(ctx context.Context, workspaceID, id, owner string, ttl time.Duration, force bool) (store.Run, error) {
	switch {
	case owner == "":
		return store.Run{}, fmt.Errorf("sqlite: claim run %s: %w: owner is empty; name the executor", id, store.ErrInvalid)
	case ttl <= 0:
		return store.Run{}, fmt.Errorf("sqlite: claim run %s: %w: ttl is %v; set a positive lease duration", id, store.ErrInvalid, ttl)
	}
	t := now()
	// One statement decides and takes the lease, so two executors
	// claiming at once cannot both win.
	run, err := scanRun(r.s.writer.QueryRowContext(ctx,
		`UPDATE runs SET status = 'running', lease_owner = ?, lease_until = ?, updated_at = ?
		WHERE workspace_id = ? AND id = ? AND status IN ('queued', 'running')
			AND (lease_owner = '' OR lease_owner = ? OR lease_until IS NULL OR lease_until < ? OR ?)
		RETURNING `+runColumns,
		owner, micros(t.Add(ttl)), micros(t), workspaceID, id, owner, micros(t), force))
	if errors.Is(err, sql.ErrNoRows) {
		return r.refuse(ctx, "claim", workspaceID, id)
	}
	if err != nil {
		return store.Run{}, fmt.Errorf("sqlite: claim run %s: %w", id, mapErr(err))
	}
	return run, nil
}

// refuse explains a conditional update that matched no row: the run is
// unknown (ErrNotFound) or in a state that refuses op (ErrConflict, with
// the run as stored).
func (r runs) refuse(ctx context.Context, op, workspaceID, id string) (store.Run, error) {
	run, err := r.Get(ctx, workspaceID, id)
	if err != nil {
		return store.Run{}, fmt.Errorf("sqlite: %s run %s: %w", op, id, store.ErrNotFound)
	}
	return run, fmt.Errorf("sqlite: %s run %s: %w: run is %s, leased by %q until %v",
		op, id, store.ErrConflict, run.Status, run.LeaseOwner, run.LeaseUntil)
}

func (r runs) Transition(ctx context.Context, workspaceID, id string, from []store.RunStatus, to store.RunStatus, u store.RunUpdate) (store.Run, error) {
	if err := checkTransition(from, to, u); err != nil {
		return store.Run{}, fmt.Errorf("sqlite: transition run %s: %w", id, err)
	}
	t := now()
	var finished any
	if to.Final() {
		finished = micros(t)
	}
	var errText, waiting any
	if u.Error != nil {
		errText = *u.Error
	}
	if u.WaitingNode != nil {
		waiting = *u.WaitingNode
	}
	var output any
	if u.Output != nil {
		output = string(u.Output)
	}
	release := to != store.RunRunning
	args := []any{to, output, errText, waiting, micros(t), finished, release, release, workspaceID, id}
	for _, s := range from {
		args = append(args, s)
	}
	run, err := scanRun(r.s.writer.QueryRowContext(ctx,
		`UPDATE runs SET status = ?, output = coalesce(?, output), error = coalesce(?, error),
			waiting_node = coalesce(?, waiting_node), updated_at = ?, finished_at = ?,
			lease_owner = CASE WHEN ? THEN '' ELSE lease_owner END,
			lease_until = CASE WHEN ? THEN NULL ELSE lease_until END
		WHERE workspace_id = ? AND id = ? AND status IN (?`+strings.Repeat(", ?", len(from)-1)+`)
		RETURNING `+runColumns, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return r.refuse(ctx, "transition", workspaceID, id)
	}
	if err != nil {
		return store.Run{}, fmt.Errorf("sqlite: transition run %s: %w", id, mapErr(err))
	}
	return run, nil
}

// checkTransition validates the arguments of Runs.Transition.
func checkTransition(from []store.RunStatus, to store.RunStatus, u store.RunUpdate) error {
	if len(from) == 0 {
		return fmt.Errorf("%w: no from status; list the statuses the run may leave", store.ErrInvalid)
	}
	for _, s := range from {
		if !s.Valid() {
			return fmt.Errorf("%w: from status %q is unknown", store.ErrInvalid, s)
		}
	}
	if !to.Valid() {
		return fmt.Errorf("%w: to status %q is unknown", store.ErrInvalid, to)
	}
	return u.Validate()
}

// checkEvents validates events and gives an empty RunID the value runID
// (when runID is set), in place.
func checkEvents(runID string, events []store.RunEvent) error {
	for i := range events {
		e := &events[i]
		if runID != "" {
			if e.RunID == "" {
				e.RunID = runID
			} else if e.RunID != runID {
				return fmt.Errorf("%w: event %d belongs to run %s, not to the checkpoint's run %s", store.ErrInvalid, e.Seq, e.RunID, runID)
			}
		}
		if err := e.Validate(); err != nil {
			return err
		}
	}
	return nil
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

// Checkpoint is on the hot path of every workflow node: a transaction of
// one insert for the checkpoint and one for the events (per maxEventRows),
// prepared once. Preparing cuts the user CPU time of a call by about a
// fifth (BenchmarkRunCheckpoint, Prepared vs Adhoc); most of the rest is
// the commit writing its WAL frames and taking the WAL locks.
func (r runs) Checkpoint(ctx context.Context, workspaceID string, cp store.Checkpoint, events []store.RunEvent) error {
	return r.checkpoint(ctx, workspaceID, cp, events, r.s.writeStmt)
}

// checkpoint is Checkpoint with the statements from prepare; nil prepare
// runs them unprepared (the benchmark's peer).
func (r runs) checkpoint(ctx context.Context, workspaceID string, cp store.Checkpoint, events []store.RunEvent,
	prepare func(context.Context, string) (*sql.Stmt, error)) error {
	if err := cp.Validate(); err != nil {
		return fmt.Errorf("sqlite: save checkpoint: %w", err)
	}
	if len(events) > 0 {
		events = append([]store.RunEvent(nil), events...) // checkEvents fills RunID
		if err := checkEvents(cp.RunID, events); err != nil {
			return fmt.Errorf("sqlite: save checkpoint %q: %w", cp.Key, err)
		}
	}
	// Prepare first: the transaction holds the writer's only connection.
	cpExec, err := r.exec(ctx, prepare, insertCheckpoint)
	if err != nil {
		return fmt.Errorf("sqlite: save checkpoint %q: prepare: %w", cp.Key, err)
	}
	var evExecs []txExec
	for rest := len(events); rest > 0; rest -= maxEventRows {
		ex, err := r.exec(ctx, prepare, insertEvents[min(rest, maxEventRows)])
		if err != nil {
			return fmt.Errorf("sqlite: save checkpoint %q: prepare: %w", cp.Key, err)
		}
		evExecs = append(evExecs, ex)
	}
	t := micros(now())
	err = r.s.writeTx(ctx, func(tx *sql.Tx) error {
		res, err := cpExec(ctx, tx, cp.Key, cp.NodeID, nullJSON(cp.Output), cp.Handle, t, cp.RunID, workspaceID)
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
	if err != nil {
		return fmt.Errorf("sqlite: save checkpoint %q of run %s: %w", cp.Key, cp.RunID, mapRunErr(err))
	}
	return nil
}

// txExec runs one statement in a transaction.
type txExec func(ctx context.Context, tx *sql.Tx, args ...any) (sql.Result, error)

// exec returns an executor of query: prepared through prepare, or parsed
// at each call when prepare is nil.
func (r runs) exec(ctx context.Context, prepare func(context.Context, string) (*sql.Stmt, error), query string) (txExec, error) {
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

// mapRunErr is mapErr for rows that hang off a run: a missing parent is
// the run, not the workspace.
func mapRunErr(err error) error {
	err = mapErr(err)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: run does not exist in the workspace", store.ErrNotFound)
	}
	return err
}

func (r runs) AppendEvents(ctx context.Context, workspaceID string, events []store.RunEvent) error {
	if len(events) == 0 {
		return nil
	}
	if err := checkEvents("", events); err != nil {
		return fmt.Errorf("sqlite: append run events: %w", err)
	}
	stmt, err := r.s.writeStmt(ctx, insertEvents[1])
	if err != nil {
		return fmt.Errorf("sqlite: append run events: prepare: %w", err)
	}
	t := micros(now())
	err = r.s.writeTx(ctx, func(tx *sql.Tx) error {
		checked := ""
		for _, e := range events {
			// Events come in runs of one run: check each run once.
			if e.RunID != checked {
				if err := runExists(ctx, tx, workspaceID, e.RunID); err != nil {
					return err
				}
				checked = e.RunID
			}
			if _, err := tx.StmtContext(ctx, stmt).ExecContext(ctx, e.RunID, e.Seq, e.Type, nullJSON(e.Data), t); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: append run events: %w", mapRunErr(err))
	}
	return nil
}

// queryRower is a *sql.DB or *sql.Tx.
type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// runExists returns ErrNotFound unless the workspace holds the run.
func runExists(ctx context.Context, db queryRower, workspaceID, id string) error {
	var one int
	err := db.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE workspace_id = ? AND id = ?`, workspaceID, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: run %s does not exist in the workspace", store.ErrNotFound, id)
	}
	return err
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

func (r runs) Checkpoints(ctx context.Context, workspaceID, runID string) ([]store.Checkpoint, error) {
	out, err := queryList(ctx, r.s.reader, scanCheckpoint,
		`SELECT c.run_id, c.key, c.node_id, c.output, c.handle, c.created_at
		FROM run_checkpoints c JOIN runs r ON r.id = c.run_id
		WHERE r.workspace_id = ? AND c.run_id = ? ORDER BY c.id`, workspaceID, runID)
	if err == nil && len(out) == 0 {
		err = runExists(ctx, r.s.reader, workspaceID, runID)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: list checkpoints of run %s: %w", runID, err)
	}
	return out, nil
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

func (r runs) Events(ctx context.Context, workspaceID, runID string, after int64, limit int) ([]store.RunEvent, error) {
	if limit <= 0 {
		limit = 1000
	}
	out, err := queryList(ctx, r.s.reader, scanEvent,
		`SELECT e.run_id, e.seq, e.type, e.data, e.created_at
		FROM run_events e JOIN runs r ON r.id = e.run_id
		WHERE r.workspace_id = ? AND e.run_id = ? AND e.seq > ? ORDER BY e.seq LIMIT ?`,
		workspaceID, runID, after, limit)
	if err == nil && len(out) == 0 {
		err = runExists(ctx, r.s.reader, workspaceID, runID)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: list events of run %s: %w", runID, err)
	}
	return out, nil
}
