package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/agentcraftlab/agentcraft/store"
)

type workflows struct{ s *Store }

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

func (r workflows) Create(ctx context.Context, w store.Workflow) (store.Workflow, error) {
	if err := w.Validate(); err != nil {
		return store.Workflow{}, fmt.Errorf("sqlite: create workflow: %w", err)
	}
	if w.ID == "" {
		w.ID = store.NewID()
	}
	w.Definition = append(json.RawMessage(nil), w.Definition...)
	w.Version = 1
	t := now()
	w.CreatedAt, w.UpdatedAt = t, t
	err := r.s.writeTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO workflows (id, workspace_id, name, description, version, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`,
			w.ID, w.WorkspaceID, w.Name, w.Description, w.Version, micros(t), micros(t)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, insertWorkflowVersion, w.ID, w.Version, string(w.Definition), micros(t))
		return err
	})
	if err != nil {
		return store.Workflow{}, fmt.Errorf("sqlite: create workflow %q: %w", w.Name, mapErr(err))
	}
	return w, nil
}

func (r workflows) Get(ctx context.Context, workspaceID, id string) (store.Workflow, error) {
	w, err := scanWorkflow(r.s.reader.QueryRowContext(ctx,
		workflowSelect+` WHERE w.workspace_id = ? AND w.id = ?`, workspaceID, id))
	if err != nil {
		return store.Workflow{}, fmt.Errorf("sqlite: get workflow %s: %w", id, mapErr(err))
	}
	return w, nil
}

func (r workflows) GetByName(ctx context.Context, workspaceID, name string) (store.Workflow, error) {
	w, err := scanWorkflow(r.s.reader.QueryRowContext(ctx,
		workflowSelect+` WHERE w.workspace_id = ? AND w.name = ?`, workspaceID, name))
	if err != nil {
		return store.Workflow{}, fmt.Errorf("sqlite: get workflow %q: %w", name, mapErr(err))
	}
	return w, nil
}

func (r workflows) List(ctx context.Context, workspaceID string) ([]store.Workflow, error) {
	out, err := queryList(ctx, r.s.reader, scanWorkflow,
		workflowSelect+` WHERE w.workspace_id = ? ORDER BY w.name`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list workflows: %w", err)
	}
	return out, nil
}

// Save bumps the version and inserts the new version row in one
// transaction, so a concurrent Save gets the next number, never the same.
func (r workflows) Save(ctx context.Context, w store.Workflow) (store.Workflow, error) {
	if err := w.Validate(); err != nil {
		return store.Workflow{}, fmt.Errorf("sqlite: save workflow: %w", err)
	}
	w.Definition = append(json.RawMessage(nil), w.Definition...)
	t := now()
	w.UpdatedAt = t
	err := r.s.writeTx(ctx, func(tx *sql.Tx) error {
		var created int64
		if err := tx.QueryRowContext(ctx,
			`UPDATE workflows SET name = ?, description = ?, version = version + 1, updated_at = ?
			WHERE workspace_id = ? AND id = ? RETURNING version, created_at`,
			w.Name, w.Description, micros(t), w.WorkspaceID, w.ID).Scan(&w.Version, &created); err != nil {
			return err
		}
		w.CreatedAt = fromMicros(created)
		_, err := tx.ExecContext(ctx, insertWorkflowVersion, w.ID, w.Version, string(w.Definition), micros(t))
		return err
	})
	if err != nil {
		return store.Workflow{}, fmt.Errorf("sqlite: save workflow %s: %w", w.ID, mapErr(err))
	}
	return w, nil
}

func (r workflows) Versions(ctx context.Context, workspaceID, id string) ([]store.WorkflowVersion, error) {
	out, err := queryList(ctx, r.s.reader, scanWorkflowVersion,
		`SELECT v.workflow_id, v.version, v.definition, v.created_at
		FROM workflow_versions v JOIN workflows w ON w.id = v.workflow_id
		WHERE w.workspace_id = ? AND w.id = ? ORDER BY v.version DESC`, workspaceID, id)
	if err == nil && len(out) == 0 {
		err = store.ErrNotFound // every workflow has a version
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: list versions of workflow %s: %w", id, err)
	}
	return out, nil
}

func (r workflows) Version(ctx context.Context, workspaceID, id string, version int) (store.WorkflowVersion, error) {
	v, err := scanWorkflowVersion(r.s.reader.QueryRowContext(ctx,
		`SELECT v.workflow_id, v.version, v.definition, v.created_at
		FROM workflow_versions v JOIN workflows w ON w.id = v.workflow_id
		WHERE w.workspace_id = ? AND w.id = ? AND v.version = ?`, workspaceID, id, version))
	if err != nil {
		return store.WorkflowVersion{}, fmt.Errorf("sqlite: get version %d of workflow %s: %w", version, id, mapErr(err))
	}
	return v, nil
}

func (r workflows) Delete(ctx context.Context, workspaceID, id string) error {
	// The versions go with it (ON DELETE CASCADE); runs keep their copy.
	res, err := r.s.writer.ExecContext(ctx, `DELETE FROM workflows WHERE workspace_id = ? AND id = ?`, workspaceID, id)
	if err == nil {
		err = rowsAffected(res)
	}
	if err != nil {
		return fmt.Errorf("sqlite: delete workflow %s: %w", id, mapErr(err))
	}
	return nil
}
