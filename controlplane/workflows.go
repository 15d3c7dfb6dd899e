package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/audit"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// Workflow definitions: the API's workflow CRUD goes through these, and
// each change records its audit event here (workflow.create,
// workflow.update, workflow.restore, workflow.delete, target
// workflow:<id>), as platform does for agents.

// Workflows lists the workspace's workflows.
func (s *Service) Workflows(ctx context.Context, workspaceID string) ([]store.Workflow, error) {
	return s.st.Workflows().List(ctx, workspaceID)
}

// Workflow returns the workflow with id.
func (s *Service) Workflow(ctx context.Context, workspaceID, id string) (store.Workflow, error) {
	return s.st.Workflows().Get(ctx, workspaceID, id)
}

// WorkflowByName returns the workflow named name.
func (s *Service) WorkflowByName(ctx context.Context, workspaceID, name string) (store.Workflow, error) {
	return s.st.Workflows().GetByName(ctx, workspaceID, name)
}

// FindWorkflow returns the workflow whose id, else whose name, is idOrName.
func (s *Service) FindWorkflow(ctx context.Context, workspaceID, idOrName string) (store.Workflow, error) {
	wf, err := s.Workflow(ctx, workspaceID, idOrName)
	if errors.Is(err, store.ErrNotFound) {
		wf, err = s.WorkflowByName(ctx, workspaceID, idOrName)
	}
	return wf, err
}

// WorkflowVersions lists the saved versions of workflow id.
func (s *Service) WorkflowVersions(ctx context.Context, workspaceID, id string) ([]store.WorkflowVersion, error) {
	return s.st.Workflows().Versions(ctx, workspaceID, id)
}

// WorkflowVersion returns version v of workflow id.
func (s *Service) WorkflowVersion(ctx context.Context, workspaceID, id string, v int) (store.WorkflowVersion, error) {
	return s.st.Workflows().Version(ctx, workspaceID, id, v)
}

// definitionRow turns a definition into the workflow row that stores it.
func definitionRow(workspaceID, id string, def *workflow.Definition) (store.Workflow, error) {
	b, err := json.Marshal(def)
	if err != nil {
		return store.Workflow{}, fmt.Errorf("encode definition: %w", err)
	}
	return store.Workflow{ID: id, WorkspaceID: workspaceID, Name: strings.TrimSpace(def.Name), Description: def.Description, Definition: b}, nil
}

// CreateWorkflow stores def, validated by the caller, as a new workflow
// and records workflow.create.
func (s *Service) CreateWorkflow(ctx context.Context, workspaceID string, def *workflow.Definition) (store.Workflow, error) {
	row, err := definitionRow(workspaceID, "", def)
	if err != nil {
		return store.Workflow{}, err
	}
	wf, err := s.st.Workflows().Create(ctx, row)
	if err != nil {
		return store.Workflow{}, err
	}
	s.auditWorkflow(ctx, "workflow.create", wf, nil)
	return wf, nil
}

// SaveWorkflow saves def, validated by the caller, as the newest version
// of workflow id and records workflow.update.
func (s *Service) SaveWorkflow(ctx context.Context, workspaceID, id string, def *workflow.Definition) (store.Workflow, error) {
	return s.saveWorkflow(ctx, workspaceID, id, def, "workflow.update", nil)
}

// RestoreWorkflow saves version v of workflow id as its newest version
// (the old versions stay as they are) and records workflow.restore. The
// definition is prepared again: node kinds may have changed since it was
// saved. When saving conflicts (store.ErrConflict), the workflow returned
// carries the name the restored definition wanted.
func (s *Service) RestoreWorkflow(ctx context.Context, workspaceID, id string, v int) (store.Workflow, error) {
	wv, err := s.WorkflowVersion(ctx, workspaceID, id, v)
	if err != nil {
		return store.Workflow{}, err
	}
	def, err := workflow.Parse(wv.Definition)
	if err != nil {
		return store.Workflow{}, err
	}
	if _, err := s.engine.Prepare(def); err != nil {
		return store.Workflow{}, err
	}
	wf, err := s.saveWorkflow(ctx, workspaceID, id, def, "workflow.restore", map[string]any{"restored_version": v})
	if errors.Is(err, store.ErrConflict) {
		wf.Name = strings.TrimSpace(def.Name)
	}
	return wf, err
}

func (s *Service) saveWorkflow(ctx context.Context, workspaceID, id string, def *workflow.Definition, action string, details map[string]any) (store.Workflow, error) {
	row, err := definitionRow(workspaceID, id, def)
	if err != nil {
		return store.Workflow{}, err
	}
	wf, err := s.st.Workflows().Save(ctx, row)
	if err != nil {
		return store.Workflow{}, err
	}
	s.auditWorkflow(ctx, action, wf, details)
	return wf, nil
}

// DeleteWorkflow deletes workflow id and records workflow.delete.
func (s *Service) DeleteWorkflow(ctx context.Context, workspaceID, id string) error {
	if err := s.st.Workflows().Delete(ctx, workspaceID, id); err != nil {
		return err
	}
	s.auditWorkflow(ctx, "workflow.delete", store.Workflow{ID: id}, nil)
	return nil
}

// auditWorkflow records a change to a workflow; its name and version go
// in the details when known.
func (s *Service) auditWorkflow(ctx context.Context, action string, wf store.Workflow, details map[string]any) {
	if wf.Name != "" || wf.Version != 0 {
		if details == nil {
			details = map[string]any{}
		}
		details["name"], details["version"] = wf.Name, wf.Version
	}
	s.opts.Audit(ctx, store.AuditEvent{Action: action, Target: "workflow:" + wf.ID, Details: audit.Details(details)})
}

// Run returns run id.
func (s *Service) Run(ctx context.Context, workspaceID, id string) (store.Run, error) {
	return s.st.Runs().Get(ctx, workspaceID, id)
}

// Runs lists the workspace's runs that f selects.
func (s *Service) Runs(ctx context.Context, workspaceID string, f store.RunFilter) ([]store.Run, error) {
	return s.st.Runs().List(ctx, workspaceID, f)
}

// CheckpointPage returns up to limit of a run's checkpoints after cursor,
// in the order they were saved, and the cursor of the next page (0: none).
func (s *Service) CheckpointPage(ctx context.Context, workspaceID, runID string, cursor int64, limit int) ([]store.Checkpoint, int64, error) {
	return s.st.Runs().CheckpointPage(ctx, workspaceID, runID, cursor, limit)
}

// Block records a run that the input hook refused (plan.Blocked gave
// reason), with the events the engine would have streamed for it:
// run_started, run_blocked and run_finished. Deciding before the run is
// queued lets the caller learn of the block synchronously, whatever the
// latency of the job queue. Events that cannot be saved are logged: the
// run row is what matters.
func (s *Service) Block(ctx context.Context, req StartRequest, plan *workflow.Plan, reason string) (store.Run, []workflow.Event, error) {
	if err := checkRunID(req.ID); err != nil {
		return store.Run{}, nil, err
	}
	in, err := json.Marshal(req.Input)
	if err != nil {
		return store.Run{}, nil, fmt.Errorf("encode input: %w", err)
	}
	runs := s.st.Runs()
	run, err := runs.Create(ctx, store.Run{ID: req.ID, WorkspaceID: req.WorkspaceID, WorkflowID: req.WorkflowID, WorkflowVersion: req.WorkflowVersion,
		Definition: req.Definition, Status: store.RunBlocked, Input: in, Error: reason})
	if err != nil {
		return store.Run{}, nil, err
	}
	now := time.Now()
	evs := []workflow.Event{
		{Seq: 1, Type: workflow.EventRunStarted, RunID: run.ID, Time: now, Data: map[string]any{"strategy": string(plan.Strategy)}},
		{Seq: 2, Type: workflow.EventRunBlocked, RunID: run.ID, Time: now, Error: reason},
		{Seq: 3, Type: workflow.EventRunFinished, RunID: run.ID, Time: now, Status: workflow.StatusBlocked, Error: reason},
	}
	stored := make([]store.RunEvent, 0, len(evs))
	for _, ev := range evs {
		data, err := json.Marshal(ev)
		if err != nil {
			return store.Run{}, nil, err
		}
		stored = append(stored, store.RunEvent{RunID: run.ID, Seq: ev.Seq, Type: string(ev.Type), Data: data, CreatedAt: now})
	}
	if err := runs.AppendEvents(ctx, req.WorkspaceID, stored); err != nil {
		s.opts.Logger.WarnContext(ctx, "run_events_not_saved", "run_id", run.ID, "workspace_id", req.WorkspaceID, "error", err)
	}
	return run, evs, nil
}
