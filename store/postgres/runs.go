package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

const runColumns = `id, workspace_id, workflow_id, workflow_version, definition, status, input, output,
	error, waiting_node, lease_owner, lease_until, created_at, updated_at, finished_at, task_id, executor, trigger_id,
	traceparent, tracestate`

func scanRun(row pgx.Row) (store.Run, error) {
	var (
		r          store.Run
		workflowID *string
		taskID     *string
		executor   *string
		triggerID  *string
		tp, ts     *string
	)
	if err := row.Scan(&r.ID, &r.WorkspaceID, &workflowID, &r.WorkflowVersion, (*[]byte)(&r.Definition),
		&r.Status, (*[]byte)(&r.Input), (*[]byte)(&r.Output), &r.Error, &r.WaitingNode,
		&r.LeaseOwner, &r.LeaseUntil, &r.CreatedAt, &r.UpdatedAt, &r.FinishedAt, &taskID, &executor, &triggerID, &tp, &ts); err != nil {
		return store.Run{}, err
	}
	if workflowID != nil {
		r.WorkflowID = *workflowID
	}
	if taskID != nil {
		r.TaskID = *taskID
	}
	if executor != nil {
		r.Executor = *executor
	}
	if triggerID != nil {
		r.TriggerID = *triggerID
	}
	if tp != nil {
		r.TraceParent = *tp
	}
	if ts != nil {
		r.TraceState = *ts
	}
	r.LeaseUntil = utc(r.LeaseUntil)
	r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	r.FinishedAt = utc(r.FinishedAt)
	return r, nil
}

// nullString stores "" as NULL.
func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// nullJSON stores an empty JSON value as NULL.
func nullJSON(m []byte) []byte {
	if len(m) == 0 {
		return nil
	}
	return m
}

// RunInsert returns the whole row, which hands back what a later read will
// return, including the JSON columns as jsonb formats them.
func (d driver) RunInsert(ctx context.Context, p *store.RunInsertParams) (store.Run, error) {
	run := p.Run
	got, err := scanRun(d.s.pool.QueryRow(ctx,
		`INSERT INTO runs (`+runColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, '', NULL, $11, $12, $13, $14, $15, $16, $17, $18)
		RETURNING `+runColumns,
		run.ID, run.WorkspaceID, nullString(run.WorkflowID), run.WorkflowVersion, []byte(run.Definition),
		run.Status, nullJSON(run.Input), nullJSON(run.Output), run.Error, run.WaitingNode,
		run.CreatedAt, run.UpdatedAt, run.FinishedAt, nullString(run.TaskID), nullString(run.Executor), nullString(run.TriggerID),
		nullString(run.TraceParent), nullString(run.TraceState)))
	return got, mapErr(err)
}

func (d driver) RunGet(ctx context.Context, workspaceID, id string) (store.Run, error) {
	run, err := scanRun(d.s.pool.QueryRow(ctx,
		`SELECT `+runColumns+` FROM runs WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	return run, mapErr(err)
}

func (d driver) RunList(ctx context.Context, p *store.RunListParams) ([]store.Run, error) {
	// An empty filter value matches every row.
	return queryList(ctx, d.s, scanRun,
		`SELECT `+runColumns+` FROM runs
		WHERE workspace_id = $1 AND ($2 = '' OR status = $2) AND ($3 = '' OR workflow_id = $3)
			AND ($5 = '' OR task_id = $5) AND ($6 = '' OR executor = $6) AND ($7 = '' OR trigger_id = $7)
		ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $4`,
		p.WorkspaceID, string(p.Status), p.WorkflowID, p.Limit, p.TaskID, p.Executor, p.TriggerID)
}

func (d driver) RunListLive(ctx context.Context) ([]store.Run, error) {
	// The WHERE clause repeats the runs_live index's, so PostgreSQL can use it.
	return queryList(ctx, d.s, scanRun,
		`SELECT `+runColumns+` FROM runs WHERE status IN ('queued', 'running') ORDER BY created_at, id COLLATE "C"`)
}

// RunClaim: a concurrent claim waits on the row lock and then re-checks the
// condition against the new row, so two executors cannot both win.
func (d driver) RunClaim(ctx context.Context, p *store.RunClaimParams) (store.Run, error) {
	run, err := scanRun(d.s.pool.QueryRow(ctx,
		`UPDATE runs SET status = 'running', lease_owner = $1, lease_until = $2, updated_at = $3
		WHERE workspace_id = $4 AND id = $5 AND status IN ('queued', 'running')
			AND (lease_owner = '' OR lease_owner = $1 OR lease_until IS NULL OR lease_until < $3 OR $6)
		RETURNING `+runColumns,
		p.Owner, p.Until, p.Now, p.WorkspaceID, p.ID, p.Force))
	return run, mapErr(err)
}

func (d driver) RunTransition(ctx context.Context, p *store.RunTransitionParams) (store.Run, error) {
	statuses := make([]string, len(p.From))
	for i, s := range p.From {
		statuses[i] = string(s)
	}
	run, err := scanRun(d.s.pool.QueryRow(ctx,
		`UPDATE runs SET status = $1, output = coalesce($2::jsonb, output), error = coalesce($3, error),
			waiting_node = coalesce($4, waiting_node), updated_at = $5, finished_at = $6,
			lease_owner = CASE WHEN $7 THEN '' ELSE lease_owner END,
			lease_until = CASE WHEN $7 THEN NULL ELSE lease_until END
		WHERE workspace_id = $8 AND id = $9 AND status = ANY ($10) AND ($11 = '' OR lease_owner = $11)
		RETURNING `+runColumns,
		p.To, []byte(p.Update.Output), p.Update.Error, p.Update.WaitingNode, p.Now, p.Finished, p.Release,
		p.WorkspaceID, p.ID, statuses, p.LeaseOwner))
	return run, mapErr(err)
}

// eventColumns returns events as the arrays the inserts unnest.
func eventColumns(events []store.RunEvent) (runIDs []string, seqs []int64, types []string, data []*string) {
	runIDs = make([]string, len(events))
	seqs = make([]int64, len(events))
	types = make([]string, len(events))
	data = make([]*string, len(events))
	for i, e := range events {
		runIDs[i], seqs[i], types[i] = e.RunID, e.Seq, e.Type
		if len(e.Data) > 0 {
			d := string(e.Data)
			data[i] = &d
		}
	}
	return runIDs, seqs, types, data
}

// RunCheckpointInsert is one statement, so one round trip and its own
// transaction: the checkpoint insert selects from runs (no row when the run
// is not the workspace's: ErrNotFound), a saved key fails it with a unique
// violation (ErrConflict) and takes the event insert down with it, and the
// event insert reads the run id from the checkpoint insert, so it writes
// only when the checkpoint was written.
func (d driver) RunCheckpointInsert(ctx context.Context, p *store.RunCheckpointInsertParams) error {
	cp := p.Checkpoint
	_, seqs, types, data := eventColumns(p.Events)
	var n int
	err := d.s.pool.QueryRow(ctx,
		`WITH cp AS (
			INSERT INTO run_checkpoints (run_id, key, node_id, output, handle, created_at)
			SELECT id, $3, $4, $5, $6, $7 FROM runs WHERE id = $1 AND workspace_id = $2
			RETURNING run_id
		), ev AS (
			INSERT INTO run_events (run_id, seq, type, data, created_at)
			SELECT cp.run_id, e.seq, e.type, e.data::jsonb, $7
			FROM cp, unnest($8::bigint[], $9::text[], $10::text[]) AS e (seq, type, data)
			ON CONFLICT (run_id, seq) DO NOTHING
		)
		SELECT count(*) FROM cp`,
		cp.RunID, p.WorkspaceID, cp.Key, cp.NodeID, nullJSON(cp.Output), cp.Handle, p.Now,
		seqs, types, data).Scan(&n)
	if err == nil && n == 0 {
		return store.ErrNotFound
	}
	return mapErr(err)
}

// RunEventInsert inserts only events whose run belongs to the workspace,
// and refuses the whole call when one does not.
func (d driver) RunEventInsert(ctx context.Context, p *store.RunEventInsertParams) error {
	runIDs, seqs, types, data := eventColumns(p.Events)
	var missing *string
	err := pgx.BeginFunc(ctx, d.s.pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx,
			`SELECT u.run_id FROM unnest($1::text[]) AS u (run_id)
			WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = u.run_id AND r.workspace_id = $2) LIMIT 1`,
			runIDs, p.WorkspaceID).Scan(&missing)
		if err == nil {
			return fmt.Errorf("%w: run %s does not exist in the workspace", store.ErrNotFound, *missing)
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		_, err = tx.Exec(ctx,
			`INSERT INTO run_events (run_id, seq, type, data, created_at)
			SELECT e.run_id, e.seq, e.type, e.data::jsonb, $5
			FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) AS e (run_id, seq, type, data)
			ON CONFLICT (run_id, seq) DO NOTHING`,
			runIDs, seqs, types, data, p.Now)
		return err
	})
	return mapErr(err)
}

func (d driver) RunExists(ctx context.Context, workspaceID, id string) (bool, error) {
	var exists bool
	err := d.s.pool.QueryRow(ctx,
		`SELECT EXISTS (SELECT 1 FROM runs WHERE workspace_id = $1 AND id = $2)`, workspaceID, id).Scan(&exists)
	return exists, err
}

func scanCheckpoint(row pgx.Row) (store.Checkpoint, error) {
	var cp store.Checkpoint
	if err := row.Scan(&cp.RunID, &cp.Key, &cp.NodeID, (*[]byte)(&cp.Output), &cp.Handle, &cp.CreatedAt); err != nil {
		return store.Checkpoint{}, err
	}
	cp.CreatedAt = cp.CreatedAt.UTC()
	return cp, nil
}

func (d driver) RunCheckpointList(ctx context.Context, workspaceID, runID string) ([]store.Checkpoint, error) {
	return queryList(ctx, d.s, scanCheckpoint,
		`SELECT c.run_id, c.key, c.node_id, c.output, c.handle, c.created_at
		FROM run_checkpoints c JOIN runs r ON r.id = c.run_id
		WHERE r.workspace_id = $1 AND c.run_id = $2 ORDER BY c.id`, workspaceID, runID)
}

func scanEvent(row pgx.Row) (store.RunEvent, error) {
	var e store.RunEvent
	if err := row.Scan(&e.RunID, &e.Seq, &e.Type, (*[]byte)(&e.Data), &e.CreatedAt); err != nil {
		return store.RunEvent{}, err
	}
	e.CreatedAt = e.CreatedAt.UTC()
	return e, nil
}

func (d driver) RunEventList(ctx context.Context, p *store.RunEventListParams) ([]store.RunEvent, error) {
	return queryList(ctx, d.s, scanEvent,
		`SELECT e.run_id, e.seq, e.type, e.data, e.created_at
		FROM run_events e JOIN runs r ON r.id = e.run_id
		WHERE r.workspace_id = $1 AND e.run_id = $2 AND e.seq > $3 ORDER BY e.seq LIMIT $4`,
		p.WorkspaceID, p.RunID, p.After, p.Limit)
}
