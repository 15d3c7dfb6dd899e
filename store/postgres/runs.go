package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

type runs struct{ s *Store }

const runColumns = `id, workspace_id, workflow_id, workflow_version, definition, status, input, output,
	error, waiting_node, lease_owner, lease_until, created_at, updated_at, finished_at`

func scanRun(row pgx.Row) (store.Run, error) {
	var (
		r          store.Run
		workflowID *string
	)
	if err := row.Scan(&r.ID, &r.WorkspaceID, &workflowID, &r.WorkflowVersion, (*[]byte)(&r.Definition),
		&r.Status, (*[]byte)(&r.Input), (*[]byte)(&r.Output), &r.Error, &r.WaitingNode,
		&r.LeaseOwner, &r.LeaseUntil, &r.CreatedAt, &r.UpdatedAt, &r.FinishedAt); err != nil {
		return store.Run{}, err
	}
	if workflowID != nil {
		r.WorkflowID = *workflowID
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

// RETURNING the whole row hands back what a later read will return,
// including the JSON columns as jsonb formats them.
func (r runs) Create(ctx context.Context, run store.Run) (store.Run, error) {
	if err := run.Validate(); err != nil {
		return store.Run{}, fmt.Errorf("postgres: create run: %w", err)
	}
	if run.ID == "" {
		run.ID = store.NewID()
	}
	if run.Status == "" {
		run.Status = store.RunQueued
	}
	t := now()
	var finished *time.Time
	if run.Status.Final() {
		finished = &t
	}
	got, err := scanRun(r.s.pool.QueryRow(ctx,
		`INSERT INTO runs (`+runColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, '', NULL, $11, $11, $12)
		RETURNING `+runColumns,
		run.ID, run.WorkspaceID, nullString(run.WorkflowID), run.WorkflowVersion, []byte(run.Definition),
		run.Status, nullJSON(run.Input), nullJSON(run.Output), run.Error, run.WaitingNode, t, finished))
	if err != nil {
		return store.Run{}, fmt.Errorf("postgres: create run: %w", mapErr(err))
	}
	return got, nil
}

func (r runs) Get(ctx context.Context, workspaceID, id string) (store.Run, error) {
	run, err := scanRun(r.s.pool.QueryRow(ctx,
		`SELECT `+runColumns+` FROM runs WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	if err != nil {
		return store.Run{}, fmt.Errorf("postgres: get run %s: %w", id, mapErr(err))
	}
	return run, nil
}

func (r runs) List(ctx context.Context, workspaceID string, f store.RunFilter) ([]store.Run, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	// An empty filter value matches every row.
	out, err := queryList(ctx, r.s, scanRun,
		`SELECT `+runColumns+` FROM runs
		WHERE workspace_id = $1 AND ($2 = '' OR status = $2) AND ($3 = '' OR workflow_id = $3)
		ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $4`,
		workspaceID, string(f.Status), f.WorkflowID, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: list runs: %w", err)
	}
	return out, nil
}

func (r runs) Live(ctx context.Context) ([]store.Run, error) {
	// The WHERE clause repeats the runs_live index's, so PostgreSQL can use it.
	out, err := queryList(ctx, r.s, scanRun,
		`SELECT `+runColumns+` FROM runs WHERE status IN ('queued', 'running') ORDER BY created_at, id COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("postgres: list live runs: %w", err)
	}
	return out, nil
}

func (r runs) Claim(ctx context.Context, workspaceID, id, owner string, ttl time.Duration, force bool) (store.Run, error) {
	switch {
	case owner == "":
		return store.Run{}, fmt.Errorf("postgres: claim run %s: %w: owner is empty; name the executor", id, store.ErrInvalid)
	case ttl <= 0:
		return store.Run{}, fmt.Errorf("postgres: claim run %s: %w: ttl is %v; set a positive lease duration", id, store.ErrInvalid, ttl)
	}
	t := now()
	// One statement decides and takes the lease. A concurrent Claim waits
	// on the row lock and then re-checks the condition against the new
	// row, so two executors cannot both win.
	run, err := scanRun(r.s.pool.QueryRow(ctx,
		`UPDATE runs SET status = 'running', lease_owner = $1, lease_until = $2, updated_at = $3
		WHERE workspace_id = $4 AND id = $5 AND status IN ('queued', 'running')
			AND (lease_owner = '' OR lease_owner = $1 OR lease_until IS NULL OR lease_until < $3 OR $6)
		RETURNING `+runColumns,
		owner, t.Add(ttl), t, workspaceID, id, force))
	if errors.Is(err, pgx.ErrNoRows) {
		return r.refuse(ctx, "claim", workspaceID, id)
	}
	if err != nil {
		return store.Run{}, fmt.Errorf("postgres: claim run %s: %w", id, mapErr(err))
	}
	return run, nil
}

// refuse explains a conditional update that matched no row: the run is
// unknown (ErrNotFound) or in a state that refuses op (ErrConflict, with
// the run as stored).
func (r runs) refuse(ctx context.Context, op, workspaceID, id string) (store.Run, error) {
	run, err := r.Get(ctx, workspaceID, id)
	if err != nil {
		return store.Run{}, fmt.Errorf("postgres: %s run %s: %w", op, id, store.ErrNotFound)
	}
	return run, fmt.Errorf("postgres: %s run %s: %w: run is %s, leased by %q until %v",
		op, id, store.ErrConflict, run.Status, run.LeaseOwner, run.LeaseUntil)
}

func (r runs) Transition(ctx context.Context, workspaceID, id string, from []store.RunStatus, to store.RunStatus, u store.RunUpdate) (store.Run, error) {
	if err := checkTransition(from, to, u); err != nil {
		return store.Run{}, fmt.Errorf("postgres: transition run %s: %w", id, err)
	}
	t := now()
	var finished *time.Time
	if to.Final() {
		finished = &t
	}
	statuses := make([]string, len(from))
	for i, s := range from {
		statuses[i] = string(s)
	}
	run, err := scanRun(r.s.pool.QueryRow(ctx,
		`UPDATE runs SET status = $1, output = coalesce($2::jsonb, output), error = coalesce($3, error),
			waiting_node = coalesce($4, waiting_node), updated_at = $5, finished_at = $6,
			lease_owner = CASE WHEN $7 THEN '' ELSE lease_owner END,
			lease_until = CASE WHEN $7 THEN NULL ELSE lease_until END
		WHERE workspace_id = $8 AND id = $9 AND status = ANY ($10)
		RETURNING `+runColumns,
		to, []byte(u.Output), u.Error, u.WaitingNode, t, finished, to != store.RunRunning,
		workspaceID, id, statuses))
	if errors.Is(err, pgx.ErrNoRows) {
		return r.refuse(ctx, "transition", workspaceID, id)
	}
	if err != nil {
		return store.Run{}, fmt.Errorf("postgres: transition run %s: %w", id, mapErr(err))
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

// Checkpoint is one statement, so one round trip and its own transaction:
// the checkpoint insert selects from runs (no row when the run is not the
// workspace's: ErrNotFound), a saved key fails it with a unique violation
// (ErrConflict) and takes the event insert down with it, and the event
// insert reads the run id from the checkpoint insert, so it writes only
// when the checkpoint was written.
func (r runs) Checkpoint(ctx context.Context, workspaceID string, cp store.Checkpoint, events []store.RunEvent) error {
	if err := cp.Validate(); err != nil {
		return fmt.Errorf("postgres: save checkpoint: %w", err)
	}
	events = append([]store.RunEvent(nil), events...) // checkEvents fills RunID
	if err := checkEvents(cp.RunID, events); err != nil {
		return fmt.Errorf("postgres: save checkpoint %q: %w", cp.Key, err)
	}
	_, seqs, types, data := eventColumns(events)
	var n int
	err := r.s.pool.QueryRow(ctx,
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
		cp.RunID, workspaceID, cp.Key, cp.NodeID, nullJSON(cp.Output), cp.Handle, now(),
		seqs, types, data).Scan(&n)
	if err == nil && n == 0 {
		err = fmt.Errorf("%w: run does not exist in the workspace", store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("postgres: save checkpoint %q of run %s: %w", cp.Key, cp.RunID, mapRunErr(err))
	}
	return nil
}

// mapRunErr is mapErr for rows that hang off a run: a missing parent is
// the run, not the workspace.
func mapRunErr(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return err
	}
	err = mapErr(err)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: run does not exist in the workspace", store.ErrNotFound)
	}
	return err
}

// AppendEvents inserts only events whose run belongs to the workspace, and
// refuses the whole call when one does not.
func (r runs) AppendEvents(ctx context.Context, workspaceID string, events []store.RunEvent) error {
	if len(events) == 0 {
		return nil
	}
	if err := checkEvents("", events); err != nil {
		return fmt.Errorf("postgres: append run events: %w", err)
	}
	runIDs, seqs, types, data := eventColumns(events)
	var missing *string
	err := pgx.BeginFunc(ctx, r.s.pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx,
			`SELECT u.run_id FROM unnest($1::text[]) AS u (run_id)
			WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = u.run_id AND r.workspace_id = $2) LIMIT 1`,
			runIDs, workspaceID).Scan(&missing)
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
			runIDs, seqs, types, data, now())
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: append run events: %w", mapRunErr(err))
	}
	return nil
}

// runExists returns ErrNotFound unless the workspace holds the run.
func (r runs) runExists(ctx context.Context, workspaceID, id string) error {
	var exists bool
	err := r.s.pool.QueryRow(ctx,
		`SELECT EXISTS (SELECT 1 FROM runs WHERE workspace_id = $1 AND id = $2)`, workspaceID, id).Scan(&exists)
	if err == nil && !exists {
		err = fmt.Errorf("%w: run %s does not exist in the workspace", store.ErrNotFound, id)
	}
	return err
}

func scanCheckpoint(row pgx.Row) (store.Checkpoint, error) {
	var cp store.Checkpoint
	if err := row.Scan(&cp.RunID, &cp.Key, &cp.NodeID, (*[]byte)(&cp.Output), &cp.Handle, &cp.CreatedAt); err != nil {
		return store.Checkpoint{}, err
	}
	cp.CreatedAt = cp.CreatedAt.UTC()
	return cp, nil
}

func (r runs) Checkpoints(ctx context.Context, workspaceID, runID string) ([]store.Checkpoint, error) {
	out, err := queryList(ctx, r.s, scanCheckpoint,
		`SELECT c.run_id, c.key, c.node_id, c.output, c.handle, c.created_at
		FROM run_checkpoints c JOIN runs r ON r.id = c.run_id
		WHERE r.workspace_id = $1 AND c.run_id = $2 ORDER BY c.id`, workspaceID, runID)
	if err == nil && len(out) == 0 {
		err = r.runExists(ctx, workspaceID, runID)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: list checkpoints of run %s: %w", runID, err)
	}
	return out, nil
}

func scanEvent(row pgx.Row) (store.RunEvent, error) {
	var e store.RunEvent
	if err := row.Scan(&e.RunID, &e.Seq, &e.Type, (*[]byte)(&e.Data), &e.CreatedAt); err != nil {
		return store.RunEvent{}, err
	}
	e.CreatedAt = e.CreatedAt.UTC()
	return e, nil
}

func (r runs) Events(ctx context.Context, workspaceID, runID string, after int64, limit int) ([]store.RunEvent, error) {
	if limit <= 0 {
		limit = 1000
	}
	out, err := queryList(ctx, r.s, scanEvent,
		`SELECT e.run_id, e.seq, e.type, e.data, e.created_at
		FROM run_events e JOIN runs r ON r.id = e.run_id
		WHERE r.workspace_id = $1 AND e.run_id = $2 AND e.seq > $3 ORDER BY e.seq LIMIT $4`,
		workspaceID, runID, after, limit)
	if err == nil && len(out) == 0 {
		err = r.runExists(ctx, workspaceID, runID)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: list events of run %s: %w", runID, err)
	}
	return out, nil
}
