package task_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/task"
	"github.com/agentcraftlab/agentcraft/tool"
)

func TestExternalExecutor(t *testing.T) {
	e := newEnv(t, envOptions{agents: []task.Agent{stepsAgent("kb_search", "book_room")},
		tools: toolSet{"book_room": &fakeTool{name: "book_room", cap: tool.CapabilityMedium, undoable: true}}})
	ctx := t.Context()
	out, err := e.svc.Submit(ctx, task.Request{WorkspaceID: e.ws, Intent: &task.Intent{Action: "multi"}, Source: "api",
		Requester: alice, ReplyTo: task.Address{Channel: "line", Target: "Ualice"}, Executor: "claude-code"})
	if err != nil {
		t.Fatal(err)
	}
	// The engine leaves the run alone, even when sweeping for lost ones.
	if _, err := e.runs.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.runs.ResumeOwned(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if r, _ := e.st.Runs().Get(ctx, e.ws, out.RunID); r.Status != store.RunQueued || r.LeaseOwner != "" || r.Executor != "claude-code" {
		t.Fatalf("external run %+v; want queued for claude-code, untouched", r)
	}
	if _, err := e.svc.Claim(ctx, e.ws, "codex", "", time.Minute); !errors.Is(err, task.ErrNoWork) {
		t.Errorf("another executor's claim = %v, want ErrNoWork", err)
	}
	c, err := e.svc.Claim(ctx, e.ws, "claude-code", "", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if c.Run.ID != out.RunID || c.Run.Status != store.RunRunning || len(c.Work.Plan.Steps) != 2 || c.Work.Plan.Steps[1].Capability != "medium" || c.Task.ID != out.Task.ID {
		t.Fatalf("claimed %+v", c)
	}
	if _, err := e.svc.Claim(ctx, e.ws, "claude-code", "", time.Minute); !errors.Is(err, task.ErrNoWork) {
		t.Errorf("second claim = %v, want ErrNoWork (the run is held)", err)
	}

	// A low step: recorded before, finished after; a resumed executor
	// asking again learns it was done.
	st, err := e.svc.RecordStep(ctx, e.ws, c.Run.ID, "claude-code", task.ExternalStep{Key: "search", Tool: "kb_search", Input: json.RawMessage(`{"query":"rooms"}`)})
	if err != nil || st.Status != store.StepPending {
		t.Fatalf("record = %+v, %v", st, err)
	}
	st, err = e.svc.RecordStep(ctx, e.ws, c.Run.ID, "claude-code", task.ExternalStep{Key: "search", Tool: "kb_search", Output: json.RawMessage(`{"hits":2}`)})
	if err != nil || st.Status != store.StepOK || string(st.Output) != `{"hits":2}` {
		t.Fatalf("finish = %+v, %v", st, err)
	}
	if again, err := e.svc.RecordStep(ctx, e.ws, c.Run.ID, "claude-code", task.ExternalStep{Key: "search", Tool: "kb_search"}); err != nil || again.Status != store.StepOK || again.ID != st.ID {
		t.Errorf("re-record = %+v, %v; want the done step", again, err)
	}

	// A medium step waits for a person.
	book := task.ExternalStep{Key: "book", Tool: "book_room", Capability: "medium", Summary: "book room 3 on Friday"}
	_, err = e.svc.RecordStep(ctx, e.ws, c.Run.ID, "claude-code", book)
	var pend *task.ApprovalPendingError
	if !errors.As(err, &pend) || pend.Status != string(store.ApprovalPending) {
		t.Fatalf("medium step = %v, want ApprovalPendingError", err)
	}
	e.waitTask(t, out.Task.ID, store.TaskAwaitingApproval)
	if _, err := e.svc.RecordStep(ctx, e.ws, c.Run.ID, "claude-code", book); !errors.As(err, &pend) {
		t.Fatalf("asked again before the decision = %v", err)
	}
	if as, _ := e.svc.Approvals(ctx, e.ws, store.ApprovalFilter{TaskID: out.Task.ID}); len(as) != 1 {
		t.Errorf("approvals %d, want one however often the executor asks", len(as))
	}
	if _, err := e.svc.Decide(ctx, task.Decision{WorkspaceID: e.ws, ApprovalID: pend.ApprovalID, Approve: true, Approver: admin}); err != nil {
		t.Fatal(err)
	}
	book.Output, book.Undo = json.RawMessage(`{"booking":"b-1"}`), json.RawMessage(`{"booking":"b-1"}`)
	if st, err := e.svc.RecordStep(ctx, e.ws, c.Run.ID, "claude-code", book); err != nil || st.Status != store.StepOK || string(st.Undo) != `{"booking":"b-1"}` {
		t.Fatalf("approved step = %+v, %v", st, err)
	}
	if _, err := e.svc.Heartbeat(ctx, e.ws, c.Run.ID, "claude-code", time.Minute); err != nil {
		t.Errorf("heartbeat = %v", err)
	}
	if _, err := e.svc.Complete(ctx, e.ws, c.Run.ID, "codex", nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("complete by another executor = %v, want ErrNotFound", err)
	}
	if _, err := e.svc.Complete(ctx, e.ws, c.Run.ID, "claude-code", json.RawMessage(`"Booked room 3."`)); err != nil {
		t.Fatal(err)
	}
	tk := e.waitTask(t, out.Task.ID, store.TaskDone)
	v, _ := e.svc.Get(ctx, e.ws, tk.ID)
	if len(v.Steps) != 2 || v.Steps[0].IdempotencyKey != c.Run.ID+"/search" || v.Steps[1].Capability != store.CapabilityMedium {
		t.Errorf("evidence %+v", v.Steps)
	}
	if got := eventTypes(t, e, tk.ID); !containsAll(got, "claimed", "approval_requested", "approved", "completed") {
		t.Errorf("events %v", got)
	}
	ns := notifications(t, e, tk.ID)
	if len(ns) != 2 || ns[0] != "approval→Ualice" || ns[1] != "result→Ualice" {
		t.Errorf("notifications %v; want the card, then the result", ns)
	}
	if _, err := e.svc.RecordStep(ctx, e.ws, c.Run.ID, "claude-code", task.ExternalStep{Key: "late", Tool: "kb_search"}); !errors.Is(err, task.ErrLeaseLost) {
		t.Errorf("step after complete = %v, want ErrLeaseLost", err)
	}
}

func TestExternalExecutorFails(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := t.Context()
	out, err := e.svc.Submit(ctx, task.Request{WorkspaceID: e.ws, Intent: &task.Intent{Action: "search", Target: "x"}, Source: "api", Requester: alice, Executor: "bot"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.svc.Claim(ctx, e.ws, "bot", "", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Retryable: back in the queue, claimable again.
	if r, err := e.svc.Fail(ctx, e.ws, c.Run.ID, "bot", "rate limited", true); err != nil || r.Status != store.RunQueued || r.LeaseOwner != "" {
		t.Fatalf("retryable fail = %+v, %v", r, err)
	}
	c, err = e.svc.Claim(ctx, e.ws, "bot", "", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// A lease that ran out: the executor no longer holds the run, and a
	// claim takes it over.
	time.Sleep(1100 * time.Millisecond)
	if _, err := e.svc.RecordStep(ctx, e.ws, c.Run.ID, "bot", task.ExternalStep{Key: "s", Tool: "kb_search"}); !errors.Is(err, task.ErrLeaseLost) {
		t.Errorf("step after the lease = %v, want ErrLeaseLost", err)
	}
	if c, err = e.svc.Claim(ctx, e.ws, "bot", "", time.Minute); err != nil || c.Run.ID != out.RunID {
		t.Fatalf("claim of an expired lease = %+v, %v", c, err)
	}
	if _, err := e.svc.Fail(ctx, e.ws, c.Run.ID, "bot", "the target is gone", false); err != nil {
		t.Fatal(err)
	}
	e.waitTask(t, out.Task.ID, store.TaskFailed)
	for name, bad := range map[string]func() error{
		"no executor": func() error { _, err := e.svc.Claim(ctx, e.ws, "", "", time.Minute); return err },
		"lease 0":     func() error { _, err := e.svc.Claim(ctx, e.ws, "bot", "", 0); return err },
	} {
		if err := bad(); !errors.Is(err, task.ErrInvalid) {
			t.Errorf("%s = %v, want ErrInvalid", name, err)
		}
	}
}

func containsAll(have []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}
