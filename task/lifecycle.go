package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool"
)

// Changed maps a run's new status to its task: pass it as
// controlplane.Options.Changed. A run that succeeded makes its task done
// and answers the asker with the run's output; one that failed fails the
// task (expired when its approval expired, and compensated when the
// policy says so); a canceled run cancels the task. Runs of no task are
// left alone. It is idempotent: the reconciler calls it again for a task
// whose run ended while the process died.
func (s *Service) Changed(ctx context.Context, run store.Run) {
	ctx = context.WithoutCancel(ctx)
	if run.TaskID == "" {
		// A workflow run that acted through the ledger has a task of its
		// own (Ledger.taskOf); other runs have none.
		t, err := s.st.Tasks().GetBySource(ctx, run.WorkspaceID, SourceWorkflow, run.ID)
		if err != nil {
			return
		}
		run.TaskID = t.ID
	}
	if run.Status == store.RunWaiting {
		s.decidedWhileParking(ctx, run)
		return
	}
	if !run.Status.Final() {
		return
	}
	switch run.Status {
	case store.RunSucceeded:
		answer := resultText(run.Output)
		if t, err := s.st.Tasks().Get(ctx, run.WorkspaceID, run.TaskID); err == nil && isHeldCall(t) {
			answer = "Approved and done: " + t.Title + "\nResult: " + answer
		}
		s.settle(ctx, run.WorkspaceID, run.TaskID, store.TaskDone, answer, map[string]any{"run_id": run.ID, "output": json.RawMessage(run.Output)})
	case store.RunCanceled:
		s.settle(ctx, run.WorkspaceID, run.TaskID, store.TaskCancelled, "", map[string]any{"run_id": run.ID})
	default:
		status := store.TaskFailed
		if s.approvalExpired(ctx, run) {
			status = store.TaskExpired
		}
		t := s.settle(ctx, run.WorkspaceID, run.TaskID, status, "", map[string]any{"run_id": run.ID, "error": run.Error})
		if t.ID != "" && status == store.TaskFailed && s.policy.of(ctx, run.WorkspaceID).CompensateOnFailure {
			if _, err := s.Compensate(ctx, run.WorkspaceID, run.TaskID, "system:task"); err != nil {
				s.log.Warn("failed task not compensated", "task_id", run.TaskID, "err", err)
			}
		}
	}
}

// isHeldCall reports whether t is a tool call the gate held.
func isHeldCall(t store.Task) bool {
	var in Intent
	return json.Unmarshal(t.Intent, &in) == nil && in.Action == ActionCallTool
}

// decidedWhileParking applies a decision made between the run asking
// for its approval and parking on it (the resume found it not waiting
// yet), so the run goes on now instead of at the next reconcile.
func (s *Service) decidedWhileParking(ctx context.Context, run store.Run) {
	as, err := s.st.Approvals().List(ctx, run.WorkspaceID, store.ApprovalFilter{TaskID: run.TaskID, Limit: 1000})
	if err != nil {
		return
	}
	for _, a := range as {
		if a.RunID == run.ID && (a.Status == store.ApprovalApproved || a.Status == store.ApprovalRejected) && s.waitsOn(ctx, run, a.ID) {
			s.apply(ctx, a)
		}
	}
}

// approvalExpired reports whether the run failed because an approval it
// waited on expired.
func (s *Service) approvalExpired(ctx context.Context, run store.Run) bool {
	as, err := s.st.Approvals().List(ctx, run.WorkspaceID, store.ApprovalFilter{TaskID: run.TaskID, Limit: 1000})
	if err != nil {
		return false
	}
	for _, a := range as {
		if a.RunID == run.ID && (a.Status == store.ApprovalExpired ||
			a.Status == store.ApprovalPending && a.ExpiresAt != nil && !s.now().Before(*a.ExpiresAt)) {
			return true
		}
	}
	return false
}

// settle moves a live task to a final status once, with its event, and
// tells the asker; a task already final is left as it is (the zero Task
// is returned).
func (s *Service) settle(ctx context.Context, workspaceID, taskID string, to store.TaskStatus, text string, payload map[string]any) store.Task {
	typ := map[store.TaskStatus]string{store.TaskDone: store.TaskEventCompleted, store.TaskFailed: store.TaskEventFailed,
		store.TaskCancelled: store.TaskEventNote, store.TaskExpired: store.TaskEventNote}[to]
	if payload == nil {
		payload = map[string]any{}
	}
	payload["status"] = to
	b, _ := json.Marshal(payload)
	// The answer is queued in the transition's transaction: whoever sees
	// the task settled finds it queued, and a crash cannot come between.
	// The run that ended has ended whatever ctx says now.
	ctx = context.WithoutCancel(ctx)
	cur, err := s.st.Tasks().Get(ctx, workspaceID, taskID)
	if err != nil {
		s.log.Error("task not settled", "task_id", taskID, "status", to, "err", err)
		return store.Task{}
	}
	if cur.Status.Final() {
		return store.Task{}
	}
	var n *store.Notification
	switch to {
	case store.TaskDone:
		n = answer(s.log, cur, KindResult, Message{Text: text})
	case store.TaskFailed:
		msg := "Sorry, “" + cur.Title + "” failed"
		if e, _ := payload["error"].(string); e != "" {
			msg += ": " + e
		}
		n = answer(s.log, cur, KindError, Message{Text: msg})
	case store.TaskExpired:
		n = answer(s.log, cur, KindError, Message{Text: "“" + cur.Title + "” expired: nobody decided its approval in time."})
	case store.TaskCancelled:
		n = answer(s.log, cur, KindDecisionNoted, Message{Text: "“" + cur.Title + "” was cancelled; nothing more will be done."})
	}
	t, err := s.st.Tasks().Transition(ctx, workspaceID, taskID, liveStatuses, to,
		store.TaskUpdate{Event: &store.TaskEvent{Type: typ, Actor: "system:task", Payload: b}, Notification: n})
	if errors.Is(err, store.ErrConflict) {
		return store.Task{}
	}
	if err != nil {
		s.log.Error("task not settled", "task_id", taskID, "status", to, "err", err)
		return store.Task{}
	}
	return t
}

// resultText is a run's output as a message.
func resultText(out json.RawMessage) string {
	var s string
	if json.Unmarshal(out, &s) == nil {
		return s
	}
	if len(out) == 0 || string(out) == "null" {
		return "Done."
	}
	return string(out)
}

// Compensation is what Compensate did.
type Compensation struct {
	// Undone lists the steps reversed, in the order they were undone
	// (newest first), with the step that recorded each undo.
	Undone []Undone `json:"undone"`
	// NotUndone lists the steps that did something and could not be
	// reversed, and why: they are reported, never skipped silently.
	NotUndone []NotUndone `json:"not_undone"`
}

// Undone is a reversed step.
type Undone struct {
	Seq    int64  `json:"seq"`
	Tool   string `json:"tool"`
	UndoBy int64  `json:"undo_step_seq"`
}

// NotUndone is a step that stays done.
type NotUndone struct {
	Seq    int64  `json:"seq"`
	Tool   string `json:"tool"`
	Reason string `json:"reason"`
}

// Compensate undoes the task's done steps in reverse order: each undo is
// a step of its own in the ledger (tool "undo:<tool>", idempotency key
// "undo/<step id>", so a repeated compensation undoes nothing twice) and
// the undone step is marked compensated. A step with no undo (a read, or
// a tool that declares none) is reported in NotUndone. The task gets a
// compensated event with the report.
func (s *Service) Compensate(ctx context.Context, workspaceID, taskID, actor string) (Compensation, error) {
	if s.ledger == nil {
		return Compensation{}, errNoRuns
	}
	t, err := s.st.Tasks().Get(ctx, workspaceID, taskID)
	if err != nil {
		return Compensation{}, err
	}
	steps, err := s.st.Steps().List(ctx, workspaceID, taskID)
	if err != nil {
		return Compensation{}, err
	}
	rep := Compensation{Undone: []Undone{}, NotUndone: []NotUndone{}}
	for _, st := range slices.Backward(steps) {
		if st.Status != store.StepOK || isUndoStep(st) {
			continue
		}
		if len(st.Undo) == 0 {
			reason := "the tool declares no undo"
			if st.Capability == store.CapabilityLow {
				reason = "a low-capability step (a read) has nothing to undo"
			}
			rep.NotUndone = append(rep.NotUndone, NotUndone{Seq: st.Seq, Tool: st.Tool, Reason: reason})
			continue
		}
		u, err := s.undoer(ctx, t, st.Tool)
		if err != nil {
			rep.NotUndone = append(rep.NotUndone, NotUndone{Seq: st.Seq, Tool: st.Tool, Reason: err.Error()})
			continue
		}
		rec, err := s.st.Steps().Record(ctx, store.TaskStep{WorkspaceID: workspaceID, TaskID: taskID, RunID: st.RunID,
			IdempotencyKey: "undo/" + st.ID, Tool: undoPrefix + st.Tool, Capability: st.Capability, Input: st.Undo})
		if errors.Is(err, store.ErrConflict) && rec.Status == store.StepOK {
			// Undone by an earlier compensation that died before marking.
			_, _ = s.st.Steps().Compensate(ctx, workspaceID, st.ID)
			rep.Undone = append(rep.Undone, Undone{Seq: st.Seq, Tool: st.Tool, UndoBy: rec.Seq})
			continue
		}
		if err != nil && !errors.Is(err, store.ErrConflict) {
			return rep, fmt.Errorf("record undo of step %d: %w", st.Seq, err)
		}
		if rec.Status != store.StepPending {
			rep.NotUndone = append(rep.NotUndone, NotUndone{Seq: st.Seq, Tool: st.Tool, Reason: "its undo failed before: " + rec.Error})
			continue
		}
		if err := u.Undo(ctx, st.Undo); err != nil {
			s.ledger.finish(ctx, t, rec, store.StepResult{Status: store.StepError, Error: err.Error()})
			rep.NotUndone = append(rep.NotUndone, NotUndone{Seq: st.Seq, Tool: st.Tool, Reason: "undo failed: " + err.Error()})
			continue
		}
		out, _ := json.Marshal(map[string]any{"undid_step": st.Seq})
		s.ledger.finish(ctx, t, rec, store.StepResult{Status: store.StepOK, Output: out})
		if _, err := s.st.Steps().Compensate(ctx, workspaceID, st.ID); err != nil {
			return rep, fmt.Errorf("mark step %d compensated: %w", st.Seq, err)
		}
		rep.Undone = append(rep.Undone, Undone{Seq: st.Seq, Tool: st.Tool, UndoBy: rec.Seq})
	}
	payload, _ := json.Marshal(rep)
	if _, err := s.st.Tasks().AppendEvent(ctx, workspaceID, taskID, store.TaskEvent{Type: store.TaskEventCompensated, Actor: actor, Payload: payload}); err != nil {
		return rep, err
	}
	if s.audit != nil {
		s.audit(ctx, store.AuditEvent{WorkspaceID: workspaceID, Actor: actor, Action: "task.compensate", Target: "task:" + taskID, Details: payload})
	}
	return rep, nil
}

const undoPrefix = "undo:"

func isUndoStep(st store.TaskStep) bool {
	return len(st.Tool) > len(undoPrefix) && st.Tool[:len(undoPrefix)] == undoPrefix
}

// undoer finds the tool that undoes a step of tool name.
func (s *Service) undoer(ctx context.Context, t store.Task, name string) (tool.Undoable, error) {
	tl, err := s.ledger.tool(ctx, t, name)
	if err != nil {
		return nil, fmt.Errorf("its tool is not available: %w", err)
	}
	u, ok := tl.(tool.Undoable)
	if !ok {
		return nil, errors.New("the tool declares no undo")
	}
	return u, nil
}

// View is a task with everything about it: GET /api/tasks/{id}.
type View struct {
	Task      store.Task        `json:"task"`
	Runs      []store.Run       `json:"runs"`
	Steps     []store.TaskStep  `json:"steps"`
	Events    []store.TaskEvent `json:"events"`
	Approvals []store.Approval  `json:"approvals"`
}

// Get returns the task's view; another workspace's task is
// store.ErrNotFound.
func (s *Service) Get(ctx context.Context, workspaceID, id string) (View, error) {
	t, err := s.st.Tasks().Get(ctx, workspaceID, id)
	if err != nil {
		return View{}, err
	}
	v := View{Task: t}
	if v.Runs, err = s.st.Runs().List(ctx, workspaceID, store.RunFilter{TaskID: id}); err != nil {
		return View{}, err
	}
	if v.Steps, err = s.st.Steps().List(ctx, workspaceID, id); err != nil {
		return View{}, err
	}
	if v.Events, err = s.st.Tasks().Events(ctx, workspaceID, id, 0, 0); err != nil {
		return View{}, err
	}
	if v.Approvals, err = s.st.Approvals().List(ctx, workspaceID, store.ApprovalFilter{TaskID: id}); err != nil {
		return View{}, err
	}
	if v.Runs == nil {
		v.Runs = []store.Run{}
	}
	if v.Steps == nil {
		v.Steps = []store.TaskStep{}
	}
	if v.Approvals == nil {
		v.Approvals = []store.Approval{}
	}
	return v, nil
}

// Task returns the workspace's task; another workspace's is
// store.ErrNotFound.
func (s *Service) Task(ctx context.Context, workspaceID, id string) (store.Task, error) {
	return s.st.Tasks().Get(ctx, workspaceID, id)
}

// Evidence returns the task's steps, its evidence ledger; another
// workspace's task is store.ErrNotFound.
func (s *Service) Evidence(ctx context.Context, workspaceID, id string) ([]store.TaskStep, error) {
	steps, err := s.st.Steps().List(ctx, workspaceID, id)
	if steps == nil && err == nil {
		steps = []store.TaskStep{}
	}
	return steps, err
}

// List returns a page of the workspace's tasks.
func (s *Service) List(ctx context.Context, workspaceID string, f store.TaskFilter) (store.TaskPage, error) {
	return s.st.Tasks().List(ctx, workspaceID, f)
}

// Approvals lists the workspace's approvals (the inbox: status pending).
func (s *Service) Approvals(ctx context.Context, workspaceID string, f store.ApprovalFilter) ([]store.Approval, error) {
	return s.st.Approvals().List(ctx, workspaceID, f)
}

// Approval returns one approval of the workspace.
func (s *Service) Approval(ctx context.Context, workspaceID, id string) (store.Approval, error) {
	return s.st.Approvals().Get(ctx, workspaceID, id)
}

// Reconcile makes one pass over what a crash or a missed call may have
// left: it expires approvals past their time, finishes the resume of
// runs whose approval was decided while they were not parked yet (or the
// process died between the decision and the resume), settles live tasks
// whose run ended, and delivers due notifications.
func (s *Service) Reconcile(ctx context.Context) error {
	expired, err := s.st.Approvals().ExpireDue(ctx, s.now())
	if err != nil {
		return fmt.Errorf("expire approvals: %w", err)
	}
	for _, a := range expired {
		s.expire(ctx, a)
	}
	wss, err := s.st.Workspaces().List(ctx)
	if err != nil {
		return err
	}
	for _, ws := range wss {
		s.reconcileWorkspace(ctx, ws.ID)
	}
	_, err = s.Deliver(ctx)
	return err
}

// expire ends the task and run of an expired approval. The task expires
// first, so the run's cancellation (which reaches Changed) finds it
// final; the run's wait has the same deadline, and ending it here frees
// it now rather than at its own check. Repeating it changes nothing.
// A service without runs (the CLI's, deciding an approval found expired)
// expires the task only; the run ends at its own check of the deadline.
func (s *Service) expire(ctx context.Context, a store.Approval) {
	ctx = context.WithoutCancel(ctx)
	if t := s.settle(ctx, a.WorkspaceID, a.TaskID, store.TaskExpired, "", map[string]any{"approval_id": a.ID}); t.ID == "" {
		return
	}
	if a.RunID != "" && s.runs != nil {
		if _, err := s.runs.Cancel(ctx, a.WorkspaceID, a.RunID); err != nil {
			s.log.Warn("expired run not ended", "run_id", a.RunID, "err", err)
		}
	}
}

// reconcileWorkspace looks at the workspace's live tasks only (so a
// pass costs what is in flight, not what is stored): a task whose run
// ended is settled; one whose run waits on an approval that was decided
// or expired meanwhile gets the decision applied.
func (s *Service) reconcileWorkspace(ctx context.Context, workspaceID string) {
	for _, st := range []store.TaskStatus{store.TaskRunning, store.TaskAwaitingApproval} {
		page, err := s.st.Tasks().List(ctx, workspaceID, store.TaskFilter{Status: st, Limit: store.MaxListLimit})
		if err != nil {
			s.log.Warn("task reconcile: list tasks", "workspace_id", workspaceID, "err", err)
			continue
		}
		for _, t := range page.Tasks {
			runs, err := s.st.Runs().List(ctx, workspaceID, store.RunFilter{TaskID: t.ID, Limit: 1})
			if err != nil || len(runs) == 0 {
				continue
			}
			run := runs[0]
			if run.Status.Final() {
				s.Changed(ctx, run)
				continue
			}
			if run.Status != store.RunWaiting {
				continue
			}
			as, err := s.st.Approvals().List(ctx, workspaceID, store.ApprovalFilter{TaskID: t.ID})
			if err != nil {
				continue
			}
			for _, a := range as {
				switch {
				case a.RunID != run.ID:
				case a.Status == store.ApprovalExpired:
					s.expire(ctx, a)
				case a.Status == store.ApprovalApproved && s.waitsOn(ctx, run, a.ID),
					a.Status == store.ApprovalRejected:
					s.apply(ctx, a)
				}
			}
		}
	}
}

// waitsOn reports whether the waiting run is parked on approval id.
func (s *Service) waitsOn(ctx context.Context, run store.Run, approvalID string) bool {
	if s.runs == nil {
		return false
	}
	w, err := s.runs.WaitOf(ctx, run)
	return err == nil && w != nil && w.ApprovalID == approvalID
}

// Start reconciles every Options.Every until ctx ends or Stop.
func (s *Service) Start(ctx context.Context) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		tick := s.every
		for {
			if err := s.Reconcile(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("task reconcile failed", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-s.stop:
				return
			case <-time.After(tick):
			}
		}
	}()
}

// Stop ends Start's loop and waits for it; it is idempotent.
func (s *Service) Stop() {
	s.stopOnce.Do(func() { close(s.stop) })
	s.wg.Wait()
}
