package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

type workflows struct{ s *Store }

// workflowSelect reads a workflow with the definition of its newest
// version; callers append the WHERE clause on w.
const workflowSelect = `SELECT w.id, w.workspace_id, w.name, w.description, w.version, v.definition, w.created_at, w.updated_at
	FROM workflows w JOIN workflow_versions v ON v.workflow_id = w.id AND v.version = w.version`

func scanWorkflow(row pgx.Row) (store.Workflow, error) {
	var w store.Workflow
	if err := row.Scan(&w.ID, &w.WorkspaceID, &w.Name, &w.Description, &w.Version,
		(*[]byte)(&w.Definition), &w.CreatedAt, &w.UpdatedAt); err != nil {
		return store.Workflow{}, err
	}
	w.CreatedAt, w.UpdatedAt = w.CreatedAt.UTC(), w.UpdatedAt.UTC()
	return w, nil
}

func scanWorkflowVersion(row pgx.Row) (store.WorkflowVersion, error) {
	var v store.WorkflowVersion
	if err := row.Scan(&v.WorkflowID, &v.Version, (*[]byte)(&v.Definition), &v.CreatedAt); err != nil {
		return store.WorkflowVersion{}, err
	}
	v.CreatedAt = v.CreatedAt.UTC()
	return v, nil
}

// insertWorkflowVersion returns the definition as jsonb formats it, which
// is what a later read returns.
const insertWorkflowVersion = `INSERT INTO workflow_versions (workflow_id, version, definition, created_at)
	VALUES ($1, $2, $3, $4) RETURNING definition`

func (r workflows) Create(ctx context.Context, w store.Workflow) (store.Workflow, error) {
	if err := w.Validate(); err != nil {
		return store.Workflow{}, fmt.Errorf("postgres: create workflow: %w", err)
	}
	if w.ID == "" {
		w.ID = store.NewID()
	}
	w.Version = 1
	t := now()
	w.CreatedAt, w.UpdatedAt = t, t
	err := pgx.BeginFunc(ctx, r.s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx,
			`INSERT INTO workflows (id, workspace_id, name, description, version, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			w.ID, w.WorkspaceID, w.Name, w.Description, w.Version, t, t); err != nil {
			return err
		}
		return tx.QueryRow(ctx, insertWorkflowVersion, w.ID, w.Version, []byte(w.Definition), t).
			Scan((*[]byte)(&w.Definition))
	})
	if err != nil {
		return store.Workflow{}, fmt.Errorf("postgres: create workflow %q: %w", w.Name, mapErr(err))
	}
	return w, nil
}

func (r workflows) Get(ctx context.Context, workspaceID, id string) (store.Workflow, error) {
	w, err := scanWorkflow(r.s.pool.QueryRow(ctx,
		workflowSelect+` WHERE w.workspace_id = $1 AND w.id = $2`, workspaceID, id))
	if err != nil {
		return store.Workflow{}, fmt.Errorf("postgres: get workflow %s: %w", id, mapErr(err))
	}
	return w, nil
}

func (r workflows) GetByName(ctx context.Context, workspaceID, name string) (store.Workflow, error) {
	w, err := scanWorkflow(r.s.pool.QueryRow(ctx,
		workflowSelect+` WHERE w.workspace_id = $1 AND w.name = $2`, workspaceID, name))
	if err != nil {
		return store.Workflow{}, fmt.Errorf("postgres: get workflow %q: %w", name, mapErr(err))
	}
	return w, nil
}

func (r workflows) List(ctx context.Context, workspaceID string) ([]store.Workflow, error) {
	out, err := queryList(ctx, r.s, scanWorkflow,
		workflowSelect+` WHERE w.workspace_id = $1 ORDER BY w.name COLLATE "C"`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("postgres: list workflows: %w", err)
	}
	return out, nil
}

// Save bumps the version and inserts the new version row in one
// transaction; the UPDATE's row lock makes a concurrent Save wait and take
// the next number.
func (r workflows) Save(ctx context.Context, w store.Workflow) (store.Workflow, error) {
	if err := w.Validate(); err != nil {
		return store.Workflow{}, fmt.Errorf("postgres: save workflow: %w", err)
	}
	t := now()
	w.UpdatedAt = t
	err := pgx.BeginFunc(ctx, r.s.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx,
			`UPDATE workflows SET name = $1, description = $2, version = version + 1, updated_at = $3
			WHERE workspace_id = $4 AND id = $5 RETURNING version, created_at`,
			w.Name, w.Description, t, w.WorkspaceID, w.ID).Scan(&w.Version, &w.CreatedAt); err != nil {
			return err
		}
		w.CreatedAt = w.CreatedAt.UTC()
		return tx.QueryRow(ctx, insertWorkflowVersion, w.ID, w.Version, []byte(w.Definition), t).
			Scan((*[]byte)(&w.Definition))
	})
	if err != nil {
		return store.Workflow{}, fmt.Errorf("postgres: save workflow %s: %w", w.ID, mapErr(err))
	}
	return w, nil
}

func (r workflows) Versions(ctx context.Context, workspaceID, id string) ([]store.WorkflowVersion, error) {
	out, err := queryList(ctx, r.s, scanWorkflowVersion,
		`SELECT v.workflow_id, v.version, v.definition, v.created_at
		FROM workflow_versions v JOIN workflows w ON w.id = v.workflow_id
		WHERE w.workspace_id = $1 AND w.id = $2 ORDER BY v.version DESC`, workspaceID, id)
	if err == nil && len(out) == 0 {
		err = store.ErrNotFound // every workflow has a version
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: list versions of workflow %s: %w", id, err)
	}
	return out, nil
}

func (r workflows) Version(ctx context.Context, workspaceID, id string, version int) (store.WorkflowVersion, error) {
	v, err := scanWorkflowVersion(r.s.pool.QueryRow(ctx,
		`SELECT v.workflow_id, v.version, v.definition, v.created_at
		FROM workflow_versions v JOIN workflows w ON w.id = v.workflow_id
		WHERE w.workspace_id = $1 AND w.id = $2 AND v.version = $3`, workspaceID, id, version))
	if err != nil {
		return store.WorkflowVersion{}, fmt.Errorf("postgres: get version %d of workflow %s: %w", version, id, mapErr(err))
	}
	return v, nil
}

func (r workflows) Delete(ctx context.Context, workspaceID, id string) error {
	// The versions go with it (ON DELETE CASCADE); runs keep their copy.
	tag, err := r.s.pool.Exec(ctx, `DELETE FROM workflows WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
	if err == nil {
		err = affected(tag)
	}
	if err != nil {
		return fmt.Errorf("postgres: delete workflow %s: %w", id, mapErr(err))
	}
	return nil
}
