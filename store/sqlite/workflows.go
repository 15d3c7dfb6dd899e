package sqlite

import (
	"context"
	"database/sql"

	"github.com/agentcraftlab/agentcraft/store"
)

// workflowSelect reads a workflow with the definition of its newest
// version; callers append the WHERE clause on w.
const workflowSelect = `SELECT w.id, w.workspace_id, w.name, w.description, w.version, v.definition, w.created_at, w.updated_at
	FROM workflows w JOIN workflow_versions v ON v.workflow_id = w.id AND v.version = w.version`

func scanWorkflow(sc scanner) (store.Workflow, error) {
	var (
		w                store.Workflow
		created, updated int64
	)
	if err := sc.Scan(&w.ID, &w.WorkspaceID, &w.Name, &w.Description, &w.Version,
		(*[]byte)(&w.Definition), &created, &updated); err != nil {
		return store.Workflow{}, err
	}
	w.CreatedAt = fromMicros(created)
	w.UpdatedAt = fromMicros(updated)
	return w, nil
}

func scanWorkflowVersion(sc scanner) (store.WorkflowVersion, error) {
	var (
		v       store.WorkflowVersion
		created int64
	)
	if err := sc.Scan(&v.WorkflowID, &v.Version, (*[]byte)(&v.Definition), &created); err != nil {
		return store.WorkflowVersion{}, err
	}
	v.CreatedAt = fromMicros(created)
	return v, nil
}

const insertWorkflowVersion = `INSERT INTO workflow_versions (workflow_id, version, definition, created_at) VALUES (?, ?, ?, ?)`

// WorkflowInsert returns the row it was given: SQLite stores the
// definition as it is given.
func (d driver) WorkflowInsert(ctx context.Context, p *store.WorkflowWriteParams) (store.Workflow, error) {
	w := p.Workflow
	err := d.s.writeTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO workflows (id, workspace_id, name, description, version, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`,
			w.ID, w.WorkspaceID, w.Name, w.Description, w.Version, micros(w.CreatedAt), micros(w.UpdatedAt)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, insertWorkflowVersion, w.ID, w.Version, string(w.Definition), micros(w.UpdatedAt))
		return err
	})
	if err != nil {
		return store.Workflow{}, mapErr(err)
	}
	return w, nil
}

func (d driver) WorkflowGet(ctx context.Context, workspaceID, id string) (store.Workflow, error) {
	w, err := scanWorkflow(d.s.reader.QueryRowContext(ctx,
		workflowSelect+` WHERE w.workspace_id = ? AND w.id = ?`, workspaceID, id))
	return w, mapErr(err)
}

func (d driver) WorkflowGetByName(ctx context.Context, workspaceID, name string) (store.Workflow, error) {
	w, err := scanWorkflow(d.s.reader.QueryRowContext(ctx,
		workflowSelect+` WHERE w.workspace_id = ? AND w.name = ?`, workspaceID, name))
	return w, mapErr(err)
}

func (d driver) WorkflowList(ctx context.Context, workspaceID string) ([]store.Workflow, error) {
	return queryList(ctx, d.s.reader, scanWorkflow,
		workflowSelect+` WHERE w.workspace_id = ? ORDER BY w.name`, workspaceID)
}

// WorkflowSave runs on the single writer connection, which serializes
// concurrent saves.
func (d driver) WorkflowSave(ctx context.Context, p *store.WorkflowWriteParams) (store.Workflow, error) {
	w := p.Workflow
	err := d.s.writeTx(ctx, func(tx *sql.Tx) error {
		var created int64
		if err := tx.QueryRowContext(ctx,
			`UPDATE workflows SET name = ?, description = ?, version = version + 1, updated_at = ?
			WHERE workspace_id = ? AND id = ? RETURNING version, created_at`,
			w.Name, w.Description, micros(w.UpdatedAt), w.WorkspaceID, w.ID).Scan(&w.Version, &created); err != nil {
			return err
		}
		w.CreatedAt = fromMicros(created)
		_, err := tx.ExecContext(ctx, insertWorkflowVersion, w.ID, w.Version, string(w.Definition), micros(w.UpdatedAt))
		return err
	})
	if err != nil {
		return store.Workflow{}, mapErr(err)
	}
	return w, nil
}

func (d driver) WorkflowVersionList(ctx context.Context, workspaceID, id string) ([]store.WorkflowVersion, error) {
	return queryList(ctx, d.s.reader, scanWorkflowVersion,
		`SELECT v.workflow_id, v.version, v.definition, v.created_at
		FROM workflow_versions v JOIN workflows w ON w.id = v.workflow_id
		WHERE w.workspace_id = ? AND w.id = ? ORDER BY v.version DESC`, workspaceID, id)
}

func (d driver) WorkflowVersionGet(ctx context.Context, p *store.WorkflowVersionGetParams) (store.WorkflowVersion, error) {
	v, err := scanWorkflowVersion(d.s.reader.QueryRowContext(ctx,
		`SELECT v.workflow_id, v.version, v.definition, v.created_at
		FROM workflow_versions v JOIN workflows w ON w.id = v.workflow_id
		WHERE w.workspace_id = ? AND w.id = ? AND v.version = ?`, p.WorkspaceID, p.ID, p.Version))
	return v, mapErr(err)
}

func (d driver) WorkflowDelete(ctx context.Context, workspaceID, id string) error {
	// The versions go with it (ON DELETE CASCADE); runs keep their copy.
	res, err := d.s.writer.ExecContext(ctx, `DELETE FROM workflows WHERE workspace_id = ? AND id = ?`, workspaceID, id)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}
