package store

import (
	"context"
	"encoding/json"
)

// workflows is Workflows on a Driver.
type workflows struct{ c Core }

func (r workflows) Create(ctx context.Context, w Workflow) (Workflow, error) {
	if err := w.Validate(); err != nil {
		return Workflow{}, r.c.errorf("create workflow: %w", err)
	}
	if w.ID == "" {
		w.ID = NewID()
	}
	w.Definition = append(json.RawMessage(nil), w.Definition...)
	w.Version = 1
	t := now()
	w.CreatedAt, w.UpdatedAt = t, t
	got, err := r.c.d.WorkflowInsert(ctx, &WorkflowWriteParams{Workflow: w})
	if err != nil {
		return Workflow{}, r.c.errorf("create workflow %q: %w", w.Name, err)
	}
	return got, nil
}

func (r workflows) Get(ctx context.Context, workspaceID, id string) (Workflow, error) {
	w, err := r.c.d.WorkflowGet(ctx, workspaceID, id)
	if err != nil {
		return Workflow{}, r.c.errorf("get workflow %s: %w", id, err)
	}
	return w, nil
}

func (r workflows) GetByName(ctx context.Context, workspaceID, name string) (Workflow, error) {
	w, err := r.c.d.WorkflowGetByName(ctx, workspaceID, name)
	if err != nil {
		return Workflow{}, r.c.errorf("get workflow %q: %w", name, err)
	}
	return w, nil
}

func (r workflows) List(ctx context.Context, workspaceID string) ([]Workflow, error) {
	out, err := r.c.d.WorkflowList(ctx, workspaceID)
	if err != nil {
		return nil, r.c.errorf("list workflows: %w", err)
	}
	return out, nil
}

func (r workflows) Save(ctx context.Context, w Workflow) (Workflow, error) {
	if err := w.Validate(); err != nil {
		return Workflow{}, r.c.errorf("save workflow: %w", err)
	}
	w.Definition = append(json.RawMessage(nil), w.Definition...)
	w.UpdatedAt = now()
	got, err := r.c.d.WorkflowSave(ctx, &WorkflowWriteParams{Workflow: w})
	if err != nil {
		return Workflow{}, r.c.errorf("save workflow %s: %w", w.ID, err)
	}
	return got, nil
}

func (r workflows) Versions(ctx context.Context, workspaceID, id string) ([]WorkflowVersion, error) {
	out, err := r.c.d.WorkflowVersionList(ctx, workspaceID, id)
	if err == nil && len(out) == 0 {
		err = ErrNotFound // every workflow has a version
	}
	if err != nil {
		return nil, r.c.errorf("list versions of workflow %s: %w", id, err)
	}
	return out, nil
}

func (r workflows) Version(ctx context.Context, workspaceID, id string, version int) (WorkflowVersion, error) {
	v, err := r.c.d.WorkflowVersionGet(ctx, &WorkflowVersionGetParams{WorkspaceID: workspaceID, ID: id, Version: version})
	if err != nil {
		return WorkflowVersion{}, r.c.errorf("get version %d of workflow %s: %w", version, id, err)
	}
	return v, nil
}

func (r workflows) Delete(ctx context.Context, workspaceID, id string) error {
	if err := r.c.d.WorkflowDelete(ctx, workspaceID, id); err != nil {
		return r.c.errorf("delete workflow %s: %w", id, err)
	}
	return nil
}
