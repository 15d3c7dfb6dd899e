package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

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

func (d driver) WorkflowInsert(ctx context.Context, p *store.WorkflowWriteParams) (store.Workflow, error) {
	w := p.Workflow
	err := pgx.BeginFunc(ctx, d.s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx,
			`INSERT INTO workflows (id, workspace_id, name, description, version, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			w.ID, w.WorkspaceID, w.Name, w.Description, w.Version, w.CreatedAt, w.UpdatedAt); err != nil {
			return err
		}
		return tx.QueryRow(ctx, insertWorkflowVersion, w.ID, w.Version, []byte(w.Definition), w.UpdatedAt).
			Scan((*[]byte)(&w.Definition))
	})
	if err != nil {
		return store.Workflow{}, mapErr(err)
	}
	return w, nil
}

func (d driver) WorkflowGet(ctx context.Context, workspaceID, id string) (store.Workflow, error) {
	w, err := scanWorkflow(d.s.pool.QueryRow(ctx,
		workflowSelect+` WHERE w.workspace_id = $1 AND w.id = $2`, workspaceID, id))
	return w, mapErr(err)
}

func (d driver) WorkflowGetByName(ctx context.Context, workspaceID, name string) (store.Workflow, error) {
	w, err := scanWorkflow(d.s.pool.QueryRow(ctx,
		workflowSelect+` WHERE w.workspace_id = $1 AND w.name = $2`, workspaceID, name))
	return w, mapErr(err)
}

func (d driver) WorkflowList(ctx context.Context, workspaceID string) ([]store.Workflow, error) {
	return queryList(ctx, d.s, scanWorkflow,
		workflowSelect+` WHERE w.workspace_id = $1 ORDER BY w.name COLLATE "C"`, workspaceID)
}

// WorkflowSave relies on the UPDATE's row lock: a concurrent save waits
// and takes the next number.
func (d driver) WorkflowSave(ctx context.Context, p *store.WorkflowWriteParams) (store.Workflow, error) {
	w := p.Workflow
	err := pgx.BeginFunc(ctx, d.s.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx,
			`UPDATE workflows SET name = $1, description = $2, version = version + 1, updated_at = $3
			WHERE workspace_id = $4 AND id = $5 RETURNING version, created_at`,
			w.Name, w.Description, w.UpdatedAt, w.WorkspaceID, w.ID).Scan(&w.Version, &w.CreatedAt); err != nil {
			return err
		}
		w.CreatedAt = w.CreatedAt.UTC()
		return tx.QueryRow(ctx, insertWorkflowVersion, w.ID, w.Version, []byte(w.Definition), w.UpdatedAt).
			Scan((*[]byte)(&w.Definition))
	})
	if err != nil {
		return store.Workflow{}, mapErr(err)
	}
	return w, nil
}

func (d driver) WorkflowVersionList(ctx context.Context, workspaceID, id string) ([]store.WorkflowVersion, error) {
	return queryList(ctx, d.s, scanWorkflowVersion,
		`SELECT v.workflow_id, v.version, v.definition, v.created_at
		FROM workflow_versions v JOIN workflows w ON w.id = v.workflow_id
		WHERE w.workspace_id = $1 AND w.id = $2 ORDER BY v.version DESC`, workspaceID, id)
}

func (d driver) WorkflowVersionGet(ctx context.Context, p *store.WorkflowVersionGetParams) (store.WorkflowVersion, error) {
	v, err := scanWorkflowVersion(d.s.pool.QueryRow(ctx,
		`SELECT v.workflow_id, v.version, v.definition, v.created_at
		FROM workflow_versions v JOIN workflows w ON w.id = v.workflow_id
		WHERE w.workspace_id = $1 AND w.id = $2 AND v.version = $3`, p.WorkspaceID, p.ID, p.Version))
	return v, mapErr(err)
}

func (d driver) WorkflowDelete(ctx context.Context, workspaceID, id string) error {
	// The versions go with it (ON DELETE CASCADE); runs keep their copy.
	tag, err := d.s.pool.Exec(ctx, `DELETE FROM workflows WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}
