package task_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
	"github.com/agentcraftlab/agentcraft/task"
	"github.com/agentcraftlab/agentcraft/tool"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/workflowtest"
)

// effects counts a fake target's side effects by idempotency key, as a
// CalDAV server counts events by UID.
type effects struct {
	mu     sync.Mutex
	done   map[string]int // key → times the effect happened
	calls  int
	undone []string // keys, in undo order
}

func newEffects() *effects { return &effects{done: map[string]int{}} }

func (e *effects) count(key string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.done[key]
}

func (e *effects) total() (calls, distinct int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls, len(e.done)
}

// fakeTool is a tool of a given capability whose effect is keyed by the
// idempotency key the ledger hands it (tool.KeyedArgs) and undone by key
// (tool.Undoable) when undoable.
type fakeTool struct {
	name     string
	cap      tool.Capability
	eff      *effects
	fail     bool
	undoable bool
}

func (f *fakeTool) Name() string                { return f.name }
func (f *fakeTool) Description() string         { return "fake " + f.name }
func (f *fakeTool) Schema() json.RawMessage     { return nil }
func (f *fakeTool) Capability() tool.Capability { return f.cap }

func (f *fakeTool) WithIdempotencyKey(args json.RawMessage, key string) (json.RawMessage, error) {
	var m map[string]any
	if err := json.Unmarshal(args, &m); err != nil {
		return nil, err
	}
	m["key"] = key
	return json.Marshal(m)
}

func (f *fakeTool) Call(_ context.Context, args json.RawMessage) (tool.Result, error) {
	var m map[string]any
	_ = json.Unmarshal(args, &m)
	key, _ := m["key"].(string)
	f.eff.mu.Lock()
	defer f.eff.mu.Unlock()
	f.eff.calls++
	if f.fail {
		return tool.ErrorResult("%s: the target refused", f.name), nil
	}
	if f.eff.done[key] == 0 || key == "" { // the target dedupes by key
		f.eff.done[key]++
	}
	out, _ := json.Marshal(map[string]any{"tool": f.name, "key": key, "args": m})
	return tool.Result{Content: string(out)}, nil
}

func (f *fakeTool) UndoOf(_ json.RawMessage, res tool.Result) (json.RawMessage, error) {
	if !f.undoable {
		return nil, errors.New("not undoable")
	}
	var out map[string]any
	_ = json.Unmarshal([]byte(res.Content), &out)
	return json.Marshal(map[string]any{"key": out["key"]})
}

func (f *fakeTool) Undo(_ context.Context, payload json.RawMessage) error {
	var p struct{ Key string }
	if err := json.Unmarshal(payload, &p); err != nil {
		return err
	}
	f.eff.mu.Lock()
	defer f.eff.mu.Unlock()
	delete(f.eff.done, p.Key)
	f.eff.undone = append(f.eff.undone, f.name+":"+p.Key)
	return nil
}

// plainTool is a tool with neither an idempotency key nor an undo.
type plainTool struct{ fakeTool }

func (p *plainTool) Call(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	return p.fakeTool.Call(ctx, args)
}

type toolSet map[string]tool.Tool

func (s toolSet) Tool(_ context.Context, _, name string) (tool.Tool, error) {
	if t, ok := s[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("%w: %s", tool.ErrUnknownTool, name)
}

// clock is a settable clock for approvals' expiry.
type clock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

type env struct {
	st    store.Store
	ws    string
	svc   *task.Service
	runs  *controlplane.Service
	eff   *effects
	clock *clock
}

type envOptions struct {
	policy task.Policy
	// byWorkspace are per-workspace policies, by workspace name.
	byWorkspace map[string]task.Policy
	agents      []task.Agent
	tools       toolSet
	// store and workspace, when set, are used instead of a fresh SQLite
	// store (a servertest platform's, so that an extractor's inline agent
	// finds the workspace's providers).
	store     store.Store
	workspace string
	extractor task.Extractor
	judge     task.Judge
	// now, when set, is the service's and ledger's clock.
	now func() time.Time
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	st, wsID := o.store, o.workspace
	if st == nil {
		var err error
		if st, err = sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"), nil); err != nil {
			t.Fatal(err)
		}
		if err := st.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		ws, err := st.Workspaces().GetOrCreate(t.Context(), "default")
		if err != nil {
			t.Fatal(err)
		}
		wsID = ws.ID
	}
	e := &env{st: st, ws: wsID, eff: newEffects(), clock: &clock{}}
	now := e.clock.now
	if o.now != nil {
		now = o.now
	}
	tools := toolSet{
		// kb_search is medium as a chat tool; a task reads it as low.
		task.ToolKBSearch:    &fakeTool{name: task.ToolKBSearch, cap: tool.CapabilityMedium, eff: e.eff},
		task.ToolCreateEvent: &fakeTool{name: task.ToolCreateEvent, cap: tool.CapabilityMedium, eff: e.eff, undoable: true},
	}
	for k, v := range o.tools {
		if tt, ok := v.(*fakeTool); ok && tt.eff == nil {
			tt.eff = e.eff
		}
		if tt, ok := v.(*plainTool); ok && tt.eff == nil {
			tt.eff = e.eff
		}
		tools[k] = v
	}
	ledger := task.NewLedger(st, tools, &task.LedgerOptions{Policy: o.policy, WorkspacePolicies: o.byWorkspace, Now: now})
	eng := workflowtest.Engine(t, workflow.Services{Actions: ledger})
	var svc *task.Service
	e.runs = controlplane.New(st, eng, controlplane.Options{Owner: "test", SingleProcess: true,
		Changed: func(ctx context.Context, r store.Run) { svc.Changed(ctx, r) }})
	opts := &task.Options{Policy: o.policy, WorkspacePolicies: o.byWorkspace, Now: now, Extractor: o.extractor, Judge: o.judge}
	if o.agents != nil {
		r, err := task.NewRouter(o.agents...)
		if err != nil {
			t.Fatal(err)
		}
		opts.Router = r
	}
	svc, err := task.New(st, e.runs, ledger, opts)
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	return e
}

var (
	alice = task.Requester{UserID: "alice", Role: identity.RoleMember, Actor: "line:Ualice"}
	admin = task.Requester{UserID: "bob", Role: identity.RoleAdmin}
	owner = task.Requester{UserID: "carol", Role: identity.RoleOwner}
	guest = task.Requester{UserID: "dave", Role: identity.RoleGuest}
)

func (e *env) submit(t *testing.T, in task.Intent, ref string) task.Outcome {
	t.Helper()
	out, err := e.svc.Submit(t.Context(), task.Request{WorkspaceID: e.ws, Intent: &in, Source: "line", SourceRef: ref,
		Requester: alice, ReplyTo: task.Address{Channel: "line", Target: "Ualice"}})
	if err != nil {
		t.Fatalf("Submit(%+v) = %v", in, err)
	}
	return out
}

// waitTask polls until the task is in one of the statuses.
func (e *env) waitTask(t *testing.T, id string, want ...store.TaskStatus) store.Task {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tk, err := e.st.Tasks().Get(t.Context(), e.ws, id)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(want, tk.Status) {
			return tk
		}
		if time.Now().After(deadline) {
			v, _ := e.svc.Get(t.Context(), e.ws, id)
			t.Fatalf("task %s is %s, want %v; view %+v", id, tk.Status, want, v)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (e *env) pending(t *testing.T, taskID string) store.Approval {
	t.Helper()
	as, err := e.svc.Approvals(t.Context(), e.ws, store.ApprovalFilter{TaskID: taskID, Status: store.ApprovalPending})
	if err != nil || len(as) != 1 {
		t.Fatalf("pending approvals of %s = %+v, %v; want one", taskID, as, err)
	}
	return as[0]
}

func eventTypes(t *testing.T, e *env, taskID string) []string {
	t.Helper()
	evs, err := e.st.Tasks().Events(t.Context(), e.ws, taskID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}

func notifications(t *testing.T, e *env, taskID string) []string {
	t.Helper()
	ns, err := e.st.Notifications().List(t.Context(), e.ws, store.NotificationFilter{TaskID: taskID})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range slices.Backward(ns) {
		out = append(out, n.Kind+"→"+n.Target)
	}
	return out
}

func TestLowTaskRunsWithoutApproval(t *testing.T) {
	e := newEnv(t, envOptions{})
	out := e.submit(t, task.Intent{Action: "search", Object: "document", Target: "経費精算の締め日"}, "ev-1")
	if out.Agent != task.AgentResearch || out.RunID == "" || out.Task.Status != store.TaskRunning || out.Task.Capability != store.CapabilityLow {
		t.Fatalf("outcome %+v; want a running low task of the research agent", out)
	}
	tk := e.waitTask(t, out.Task.ID, store.TaskDone)
	if tk.Source != "line" || tk.SourceRef != "ev-1" || tk.CreatedBy != "user:alice" {
		t.Errorf("task %+v", tk)
	}
	v, err := e.svc.Get(t.Context(), e.ws, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Steps) != 1 || v.Steps[0].Tool != task.ToolKBSearch || v.Steps[0].Status != store.StepOK ||
		v.Steps[0].IdempotencyKey != out.RunID+"/step_1" || !strings.Contains(string(v.Steps[0].Input), "経費精算の締め日") {
		t.Errorf("steps %+v; want one ok kb_search keyed by run and node", v.Steps)
	}
	if len(v.Runs) != 1 || v.Runs[0].TaskID != tk.ID || v.Runs[0].Status != store.RunSucceeded || len(v.Approvals) != 0 {
		t.Errorf("runs %+v approvals %+v", v.Runs, v.Approvals)
	}
	if diff := cmp.Diff([]string{"created", "planned", "step", "completed"}, eventTypes(t, e, tk.ID)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"result→Ualice"}, notifications(t, e, tk.ID)); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}
}

func TestRedeliveryMakesNoSecondTask(t *testing.T) {
	e := newEnv(t, envOptions{})
	in := task.Intent{Action: "search", Target: "onboarding"}
	first := e.submit(t, in, "webhook-42")
	again := e.submit(t, in, "webhook-42")
	if !again.Duplicate || again.Task.ID != first.Task.ID || again.RunID != first.RunID {
		t.Fatalf("redelivery: %+v; want the first task (%s) marked duplicate", again, first.Task.ID)
	}
	e.waitTask(t, first.Task.ID, store.TaskDone)
	page, _ := e.st.Tasks().List(t.Context(), e.ws, store.TaskFilter{Source: "line"})
	if len(page.Tasks) != 1 {
		t.Errorf("tasks = %d, want 1", len(page.Tasks))
	}
	if calls, _ := e.eff.total(); calls != 1 {
		t.Errorf("kb_search called %d times, want 1", calls)
	}
}

func TestMediumTaskWaitsForApprovalAndRunsOnce(t *testing.T) {
	e := newEnv(t, envOptions{})
	when := time.Now().Add(48 * time.Hour).Truncate(time.Minute)
	out := e.submit(t, task.Intent{Action: "schedule", Object: "calendar_event", Target: "定例会議", When: when.Format(time.RFC3339), Duration: "30m"}, "ev-2")
	if out.Agent != task.AgentScheduler || out.Task.Capability != store.CapabilityMedium {
		t.Fatalf("outcome %+v; want a medium scheduler task", out)
	}
	tk := e.waitTask(t, out.Task.ID, store.TaskAwaitingApproval)
	ap := e.pending(t, tk.ID)
	if ap.Capability != store.CapabilityMedium || ap.RunID != out.RunID || !strings.Contains(ap.Summary, "定例会議") || ap.ExpiresAt == nil {
		t.Errorf("approval %+v", ap)
	}
	if calls, _ := e.eff.total(); calls != 0 {
		t.Fatalf("the event was created before approval (%d calls)", calls)
	}
	if diff := cmp.Diff([]string{"approval→Ualice"}, notifications(t, e, tk.ID)); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}

	// A member may not approve medium; a guest nothing.
	for _, who := range []task.Requester{alice, guest} {
		if _, err := e.svc.Decide(t.Context(), task.Decision{WorkspaceID: e.ws, ApprovalID: ap.ID, Approve: true, Approver: who}); !errors.Is(err, task.ErrNotAllowed) {
			t.Errorf("Decide by %s = %v, want ErrNotAllowed", who.Role, err)
		}
	}
	got, err := e.svc.Decide(t.Context(), task.Decision{WorkspaceID: e.ws, ApprovalID: ap.ID, Approve: true, Approver: admin})
	if err != nil || got.Status != store.ApprovalApproved || got.ApproverUserID != "user:bob" {
		t.Fatalf("Decide by admin = %+v, %v", got, err)
	}
	e.waitTask(t, tk.ID, store.TaskDone)
	// A doubled click changes nothing.
	if again, err := e.svc.Decide(t.Context(), task.Decision{WorkspaceID: e.ws, ApprovalID: ap.ID, Approve: true, Approver: admin}); err != nil || again.Status != store.ApprovalApproved {
		t.Errorf("second Decide = %+v, %v", again, err)
	}
	if _, err := e.svc.Decide(t.Context(), task.Decision{WorkspaceID: e.ws, ApprovalID: ap.ID, Approve: false, Approver: admin}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("reversing a decision = %v, want ErrConflict", err)
	}
	if err := e.svc.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	key := out.RunID + "/step_1"
	if calls, distinct := e.eff.total(); calls != 1 || distinct != 1 || e.eff.count(key) != 1 {
		t.Errorf("calendar calls %d, events %d (key %s: %d); want exactly one", calls, distinct, key, e.eff.count(key))
	}
	v, _ := e.svc.Get(t.Context(), e.ws, tk.ID)
	if len(v.Steps) != 1 || len(v.Steps[0].Undo) == 0 {
		t.Errorf("steps %+v; want the event's step with its undo", v.Steps)
	}
	if diff := cmp.Diff([]string{"created", "planned", "approval_requested", "approved", "step", "completed"}, eventTypes(t, e, tk.ID)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	// Another workspace sees none of it.
	other, _ := e.st.Workspaces().GetOrCreate(t.Context(), "other")
	if _, err := e.svc.Decide(t.Context(), task.Decision{WorkspaceID: other.ID, ApprovalID: ap.ID, Approve: true, Approver: owner}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Decide from another workspace = %v, want ErrNotFound", err)
	}
	if _, err := e.svc.Get(t.Context(), other.ID, tk.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get from another workspace = %v, want ErrNotFound", err)
	}
}

func TestRejectCreatesNothing(t *testing.T) {
	e := newEnv(t, envOptions{})
	out := e.submit(t, task.Intent{Action: "schedule", Object: "calendar_event", Target: "offsite", When: time.Now().Add(time.Hour).Format(time.RFC3339)}, "")
	tk := e.waitTask(t, out.Task.ID, store.TaskAwaitingApproval)
	ap := e.pending(t, tk.ID)
	if _, err := e.svc.Decide(t.Context(), task.Decision{WorkspaceID: e.ws, ApprovalID: ap.ID, Approve: false, Approver: admin}); err != nil {
		t.Fatal(err)
	}
	e.waitTask(t, tk.ID, store.TaskCancelled)
	run, _ := e.st.Runs().Get(t.Context(), e.ws, out.RunID)
	if run.Status != store.RunCanceled {
		t.Errorf("run %s, want canceled", run.Status)
	}
	if calls, _ := e.eff.total(); calls != 0 {
		t.Errorf("rejected event created (%d calls)", calls)
	}
}

// highAgent plans one high-capability step.
func highAgent() task.Agent {
	return task.Agent{Name: "publisher", Handles: []task.Rule{{When: `action == "publish"`, Score: 1}},
		Plan: func(_ context.Context, r task.PlanRequest) (task.Plan, error) {
			return task.Plan{Agent: "publisher", Steps: []task.Step{{Tool: "publish", Input: map[string]any{"text": r.Intent.Target}, Summary: "publish " + r.Intent.Target}}}, nil
		}}
}

func TestHighNeedsSomebodyElse(t *testing.T) {
	for _, allowSelf := range []bool{false, true} {
		t.Run(fmt.Sprint("allow_self=", allowSelf), func(t *testing.T) {
			e := newEnv(t, envOptions{policy: task.Policy{AllowSelfApproval: allowSelf}, agents: []task.Agent{highAgent()},
				tools: toolSet{"publish": &fakeTool{name: "publish", cap: tool.CapabilityHigh}}})
			out, err := e.svc.Submit(t.Context(), task.Request{WorkspaceID: e.ws, Intent: &task.Intent{Action: "publish", Target: "press release"},
				Source: "web", Requester: owner})
			if err != nil {
				t.Fatal(err)
			}
			tk := e.waitTask(t, out.Task.ID, store.TaskAwaitingApproval)
			ap := e.pending(t, tk.ID)
			if _, err := e.svc.Decide(t.Context(), task.Decision{WorkspaceID: e.ws, ApprovalID: ap.ID, Approve: true, Approver: admin}); !errors.Is(err, task.ErrNotAllowed) {
				t.Errorf("admin approving high = %v, want ErrNotAllowed", err)
			}
			_, err = e.svc.Decide(t.Context(), task.Decision{WorkspaceID: e.ws, ApprovalID: ap.ID, Approve: true, Approver: owner})
			if !allowSelf {
				if !errors.Is(err, task.ErrSelfApproval) {
					t.Fatalf("requester approving own high task = %v, want ErrSelfApproval", err)
				}
				other := task.Requester{UserID: "erin", Role: identity.RoleOwner}
				if _, err = e.svc.Decide(t.Context(), task.Decision{WorkspaceID: e.ws, ApprovalID: ap.ID, Approve: true, Approver: other}); err != nil {
					t.Fatal(err)
				}
			} else if err != nil {
				t.Fatalf("self-approval allowed by policy = %v", err)
			}
			e.waitTask(t, tk.ID, store.TaskDone)
		})
	}
}

func TestClarification(t *testing.T) {
	e := newEnv(t, envOptions{})
	out := e.submit(t, task.Intent{Action: "remind", Object: "reminder", Target: "薬を飲む"}, "")
	if out.Question == "" || out.Task.Status != store.TaskCancelled || out.RunID != "" {
		t.Fatalf("reminder without a time: %+v; want a question and a cancelled task", out)
	}
	out = e.submit(t, task.Intent{NeedsClarification: true, Question: "どの会議ですか？"}, "")
	if out.Question != "どの会議ですか？" || out.Task.Status != store.TaskCancelled {
		t.Fatalf("ambiguous intent: %+v", out)
	}
	evs, _ := e.st.Tasks().Events(t.Context(), e.ws, out.Task.ID, 0, 0)
	if last := evs[len(evs)-1]; !strings.Contains(string(last.Payload), task.NeedsClarification) {
		t.Errorf("last event %s %s; want the needs_clarification note", last.Type, last.Payload)
	}
	out = e.submit(t, task.Intent{Action: "dance", Object: "tango"}, "")
	if out.Question == "" {
		t.Errorf("an intent no agent handles: %+v; want a question", out)
	}
}

func TestReminderIsANotificationAtItsTime(t *testing.T) {
	e := newEnv(t, envOptions{})
	at := time.Now().Add(3 * time.Hour).Truncate(time.Second).UTC()
	out := e.submit(t, task.Intent{Action: "remind", Object: "reminder", Target: "薬を飲む", When: at.Format(time.RFC3339)}, "")
	if out.Task.Capability != store.CapabilityLow {
		t.Fatalf("reminder capability %s, want low", out.Task.Capability)
	}
	e.waitTask(t, out.Task.ID, store.TaskDone)
	ns, _ := e.st.Notifications().List(t.Context(), e.ws, store.NotificationFilter{TaskID: out.Task.ID})
	var reminder *store.Notification
	for i := range ns {
		if ns[i].Kind == task.KindReminder {
			reminder = &ns[i]
		}
	}
	if reminder == nil || reminder.SendAt == nil || !reminder.SendAt.Equal(at) || !strings.Contains(string(reminder.Payload), "薬を飲む") {
		t.Fatalf("notifications %+v; want a reminder due at %s", ns, at)
	}
	// Compensating the task withdraws the unsent reminder.
	rep, err := e.svc.Compensate(t.Context(), e.ws, out.Task.ID, "user:alice")
	if err != nil || len(rep.Undone) != 1 {
		t.Fatalf("Compensate = %+v, %v", rep, err)
	}
	n, _ := e.st.Notifications().Get(t.Context(), e.ws, reminder.ID)
	if n.Status != store.NotificationFailed {
		t.Errorf("reminder %s after compensation, want withdrawn (failed)", n.Status)
	}
}

// stepsAgent plans the given tools in order, all medium unless the tool
// says otherwise.
func stepsAgent(tools ...string) task.Agent {
	return task.Agent{Name: "multi", Handles: []task.Rule{{When: `action == "multi"`, Score: 1}},
		Plan: func(context.Context, task.PlanRequest) (task.Plan, error) {
			p := task.Plan{Agent: "multi"}
			for i, tl := range tools {
				p.Steps = append(p.Steps, task.Step{Tool: tl, Input: map[string]any{"n": i + 1}, Summary: fmt.Sprintf("step %d: %s", i+1, tl)})
			}
			return p, nil
		}}
}

// approveUntilFinal approves every approval the task asks for until it
// ends.
func (e *env) approveUntilFinal(t *testing.T, taskID string) store.Task {
	t.Helper()
	for range 20 {
		tk := e.waitTask(t, taskID, store.TaskAwaitingApproval, store.TaskDone, store.TaskFailed, store.TaskCancelled, store.TaskExpired)
		if tk.Status.Final() {
			return tk
		}
		ap := e.pending(t, taskID)
		if _, err := e.svc.Decide(t.Context(), task.Decision{WorkspaceID: e.ws, ApprovalID: ap.ID, Approve: true, Approver: admin}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) { // until the run moves past this approval
			if got, _ := e.st.Approvals().Get(t.Context(), e.ws, ap.ID); got.Status == store.ApprovalApproved {
				break
			}
		}
		e.waitNot(t, taskID, ap.ID)
	}
	t.Fatal("task never ended")
	return store.Task{}
}

// waitNot waits until the task no longer waits on approval id.
func (e *env) waitNot(t *testing.T, taskID, approvalID string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		as, _ := e.svc.Approvals(t.Context(), e.ws, store.ApprovalFilter{TaskID: taskID, Status: store.ApprovalPending})
		tk, _ := e.st.Tasks().Get(t.Context(), e.ws, taskID)
		if tk.Status.Final() || len(as) == 1 && as[0].ID != approvalID {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestFailedTaskCompensatesInReverse(t *testing.T) {
	e := newEnv(t, envOptions{policy: task.Policy{CompensateOnFailure: true}, agents: []task.Agent{stepsAgent("book_room", "send_invite", "charge_card")},
		tools: toolSet{
			"book_room":   &fakeTool{name: "book_room", cap: tool.CapabilityMedium, undoable: true},
			"send_invite": &fakeTool{name: "send_invite", cap: tool.CapabilityMedium, undoable: true},
			"charge_card": &fakeTool{name: "charge_card", cap: tool.CapabilityMedium, fail: true},
		}})
	out := e.submit(t, task.Intent{Action: "multi"}, "")
	tk := e.approveUntilFinal(t, out.Task.ID)
	if tk.Status != store.TaskFailed {
		t.Fatalf("task %s, want failed", tk.Status)
	}
	// Automatic compensation runs after the failure is recorded.
	deadline := time.Now().Add(5 * time.Second)
	for !slices.Contains(eventTypes(t, e, tk.ID), store.TaskEventCompensated) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	want := []string{"send_invite:" + out.RunID + "/step_2", "book_room:" + out.RunID + "/step_1"}
	if diff := cmp.Diff(want, e.eff.undone); diff != "" {
		t.Errorf("undo order (-want +got):\n%s", diff)
	}
	v, _ := e.svc.Get(t.Context(), e.ws, tk.ID)
	var got []string
	for _, s := range v.Steps {
		got = append(got, fmt.Sprintf("%d %s %s", s.Seq, s.Tool, s.Status))
	}
	wantSteps := []string{"1 book_room compensated", "2 send_invite compensated", "3 charge_card error",
		"4 undo:send_invite ok", "5 undo:book_room ok"}
	if diff := cmp.Diff(wantSteps, got); diff != "" {
		t.Errorf("ledger (-want +got):\n%s", diff)
	}
	// A second compensation undoes nothing twice.
	rep, err := e.svc.Compensate(t.Context(), e.ws, tk.ID, "user:bob")
	if err != nil || len(rep.Undone) != 0 || len(e.eff.undone) != 2 {
		t.Errorf("second Compensate = %+v, %v; undone %v", rep, err, e.eff.undone)
	}
}

func TestCompensationReportsStepsWithoutUndo(t *testing.T) {
	e := newEnv(t, envOptions{agents: []task.Agent{stepsAgent("kb_search", "post_message", "book_room")},
		tools: toolSet{
			"post_message": &plainTool{fakeTool{name: "post_message", cap: tool.CapabilityMedium}},
			"book_room":    &fakeTool{name: "book_room", cap: tool.CapabilityMedium, undoable: true},
		}})
	out := e.submit(t, task.Intent{Action: "multi"}, "")
	if tk := e.approveUntilFinal(t, out.Task.ID); tk.Status != store.TaskDone {
		t.Fatalf("task %s, want done", tk.Status)
	}
	rep, err := e.svc.Compensate(t.Context(), e.ws, out.Task.ID, "user:bob")
	if err != nil {
		t.Fatal(err)
	}
	want := task.Compensation{
		Undone: []task.Undone{{Seq: 3, Tool: "book_room", UndoBy: 4}},
		NotUndone: []task.NotUndone{
			{Seq: 2, Tool: "post_message", Reason: "the tool declares no undo"},
			{Seq: 1, Tool: "kb_search", Reason: "a low-capability step (a read) has nothing to undo"},
		},
	}
	if diff := cmp.Diff(want, rep); diff != "" {
		t.Errorf("compensation (-want +got):\n%s", diff)
	}
}

func TestApprovalExpires(t *testing.T) {
	e := newEnv(t, envOptions{policy: task.Policy{ApprovalTTL: time.Hour}})
	out := e.submit(t, task.Intent{Action: "schedule", Object: "calendar_event", Target: "retro", When: time.Now().Add(2 * time.Hour).Format(time.RFC3339)}, "")
	tk := e.waitTask(t, out.Task.ID, store.TaskAwaitingApproval)
	ap := e.pending(t, tk.ID)
	e.clock.advance(2 * time.Hour)
	if _, err := e.svc.Decide(t.Context(), task.Decision{WorkspaceID: e.ws, ApprovalID: ap.ID, Approve: true, Approver: admin}); !errors.Is(err, task.ErrExpired) {
		t.Errorf("Decide after expiry = %v, want ErrExpired", err)
	}
	if err := e.svc.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.waitTask(t, tk.ID, store.TaskExpired)
	if calls, _ := e.eff.total(); calls != 0 {
		t.Errorf("expired approval ran the step (%d calls)", calls)
	}
}

// A service without runs (the CLI's) deciding an approval it finds
// expired expires the task, leaving the run to end at its own deadline
// check, instead of dereferencing the run service it lacks.
func TestServiceWithoutRunsExpires(t *testing.T) {
	e := newEnv(t, envOptions{policy: task.Policy{ApprovalTTL: time.Hour}})
	out := e.submit(t, task.Intent{Action: "schedule", Object: "calendar_event", Target: "retro", When: time.Now().Add(2 * time.Hour).Format(time.RFC3339)}, "")
	tk := e.waitTask(t, out.Task.ID, store.TaskAwaitingApproval)
	ap := e.pending(t, tk.ID)
	e.clock.advance(2 * time.Hour)
	cli, err := task.New(e.st, nil, nil, &task.Options{Now: e.clock.now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Decide(t.Context(), task.Decision{WorkspaceID: e.ws, ApprovalID: ap.ID, Approve: true, Approver: owner}); !errors.Is(err, task.ErrExpired) {
		t.Errorf("Decide after expiry = %v, want ErrExpired", err)
	}
	e.waitTask(t, tk.ID, store.TaskExpired)
	if calls, _ := e.eff.total(); calls != 0 {
		t.Errorf("expired approval ran the step (%d calls)", calls)
	}
}

// A decision stored while nobody applied it (the process died between
// Approvals.Decide and the resume) is applied by the reconciler, once.
func TestReconcileResumesDecidedRun(t *testing.T) {
	e := newEnv(t, envOptions{})
	out := e.submit(t, task.Intent{Action: "schedule", Object: "calendar_event", Target: "1on1", When: time.Now().Add(5 * time.Hour).Format(time.RFC3339)}, "")
	tk := e.waitTask(t, out.Task.ID, store.TaskAwaitingApproval)
	ap := e.pending(t, tk.ID)
	deadline := time.Now().Add(5 * time.Second)
	for { // until the run is parked
		if r, _ := e.st.Runs().Get(t.Context(), e.ws, out.RunID); r.Status == store.RunWaiting || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, _, err := e.st.Approvals().Decide(t.Context(), e.ws, ap.ID, true, "user:bob", time.Now()); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := e.svc.Reconcile(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	e.waitTask(t, tk.ID, store.TaskDone)
	if calls, _ := e.eff.total(); calls != 1 {
		t.Errorf("calendar calls %d, want 1", calls)
	}
}

// A workflow a person wrote gets the same gate: its tool node of medium
// capability runs only after the approval node's approval, and the run
// gets a task of its own so the inbox lists it.
func TestWorkflowRunGetsATask(t *testing.T) {
	e := newEnv(t, envOptions{})
	def := `{"name":"w","nodes":[{"id":"start","type":"start"},
	{"id":"ok","type":"approval","config":{"step":"ev","summary":"create {{input}}"}},
	{"id":"ev","type":"tool","config":{"tool":"calendar_create_event","input":{"summary":"{{nodes.start.output}}"}}},
	{"id":"bare","type":"tool","config":{"tool":"calendar_create_event","input":{}}},
	{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"ok"},{"id":"e2","source":"ok","target":"ev"},{"id":"e3","source":"ev","target":"bare"},{"id":"e4","source":"bare","target":"end"}]}`
	run, err := e.runs.Start(t.Context(), controlplane.StartRequest{WorkspaceID: e.ws, Definition: json.RawMessage(def), Input: controlplane.RunInput{Input: "standup"}})
	if err != nil {
		t.Fatal(err)
	}
	var tk store.Task
	deadline := time.Now().Add(10 * time.Second)
	for {
		tk, err = e.st.Tasks().GetBySource(t.Context(), e.ws, task.SourceWorkflow, run.ID)
		if err == nil && tk.Status == store.TaskAwaitingApproval || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if tk.Status != store.TaskAwaitingApproval {
		t.Fatalf("task of the run: %+v, %v", tk, err)
	}
	ap := e.pending(t, tk.ID)
	if ap.StepKey != run.ID+"/ev" {
		t.Errorf("approval step key %q", ap.StepKey)
	}
	if _, err := e.svc.Decide(t.Context(), task.Decision{WorkspaceID: e.ws, ApprovalID: ap.ID, Approve: true, Approver: admin}); err != nil {
		t.Fatal(err)
	}
	// "ev" runs; "bare" has no approval of its own and is refused.
	got := waitRun(t, e, run.ID, store.RunFailed, store.RunSucceeded)
	if got.Status != store.RunFailed || !strings.Contains(got.Error, "needs an approved approval") {
		t.Errorf("run %s %q; want failed at the ungated tool node", got.Status, got.Error)
	}
	if calls, _ := e.eff.total(); calls != 1 {
		t.Errorf("calls %d, want 1 (only the approved node)", calls)
	}
	// The run's own task ends with it.
	e.waitTask(t, tk.ID, store.TaskFailed)
}

func waitRun(t *testing.T, e *env, id string, want ...store.RunStatus) store.Run {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := e.st.Runs().Get(t.Context(), e.ws, id)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(want, r.Status) || time.Now().After(deadline) {
			return r
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSubmitRefusesBadRequests(t *testing.T) {
	e := newEnv(t, envOptions{})
	for name, r := range map[string]task.Request{
		"no source":       {WorkspaceID: e.ws, Text: "hi"},
		"no text":         {WorkspaceID: e.ws, Source: "api"},
		"no action":       {WorkspaceID: e.ws, Source: "api", Intent: &task.Intent{Object: "x"}},
		"text huge":       {WorkspaceID: e.ws, Source: "api", Text: strings.Repeat("あ", 8001)},
		"plain, no model": {WorkspaceID: e.ws, Source: "api", Text: "find the budget"},
	} {
		_, err := e.svc.Submit(t.Context(), r)
		if err == nil {
			t.Errorf("%s: Submit accepted it", name)
		}
	}
	page, _ := e.st.Tasks().List(t.Context(), e.ws, store.TaskFilter{})
	if len(page.Tasks) != 0 {
		t.Errorf("refused requests made %d tasks", len(page.Tasks))
	}
}

// A trusted executor's medium steps run without an approval; its high
// steps, and a workflow that merely names it, still need one.
func TestTrustedExecutors(t *testing.T) {
	e := newEnv(t, envOptions{policy: task.Policy{TrustedExecutors: []string{task.AgentScheduler, "publisher", "claude-code"}},
		agents: append(task.BuiltinAgents(), highAgent()),
		tools:  toolSet{"publish": &fakeTool{name: "publish", cap: tool.CapabilityHigh}}})
	ctx := t.Context()
	out := e.submit(t, task.Intent{Action: "schedule", Object: "calendar_event", Target: "sync", When: time.Now().Add(time.Hour).Format(time.RFC3339)}, "")
	e.waitTask(t, out.Task.ID, store.TaskDone)
	if as, _ := e.svc.Approvals(ctx, e.ws, store.ApprovalFilter{TaskID: out.Task.ID}); len(as) != 0 {
		t.Errorf("a trusted executor's medium step asked %d approvals", len(as))
	}
	if calls, _ := e.eff.total(); calls != 1 {
		t.Errorf("calendar calls %d, want 1", calls)
	}
	high := e.submit(t, task.Intent{Action: "publish", Target: "post"}, "")
	e.waitTask(t, high.Task.ID, store.TaskAwaitingApproval)

	// A workflow started by hand that names the trusted agent in its vars
	// proves nothing: its medium tool node is refused without approval.
	def := `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"ev","type":"tool","config":{"tool":"calendar_create_event","input":{}}},{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"ev"},{"id":"e2","source":"ev","target":"end"}]}`
	run, err := e.runs.Start(ctx, controlplane.StartRequest{WorkspaceID: e.ws, Definition: json.RawMessage(def),
		Input: controlplane.RunInput{Vars: map[string]any{"_agent": task.AgentScheduler}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := waitRun(t, e, run.ID, store.RunFailed, store.RunSucceeded); got.Status != store.RunFailed || !strings.Contains(got.Error, "needs an approved approval") {
		t.Errorf("hand-made run %s %q; want refused", got.Status, got.Error)
	}

	// A trusted external executor records a medium step at once.
	ext, err := e.svc.Submit(ctx, task.Request{WorkspaceID: e.ws, Intent: &task.Intent{Action: "search", Target: "x"}, Source: "api", Requester: alice, Executor: "claude-code"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.svc.Claim(ctx, e.ws, "claude-code", "", time.Minute)
	if err != nil || c.Run.ID != ext.RunID {
		t.Fatalf("claim = %+v, %v", c, err)
	}
	if st, err := e.svc.RecordStep(ctx, e.ws, c.Run.ID, "claude-code", task.ExternalStep{Key: "post", Tool: "post", Capability: "medium"}); err != nil || st.Status != store.StepPending {
		t.Errorf("trusted medium step = %+v, %v", st, err)
	}
	if _, err := e.svc.RecordStep(ctx, e.ws, c.Run.ID, "claude-code", task.ExternalStep{Key: "wipe", Tool: "wipe", Capability: "high"}); !errors.Is(err, task.ErrNeedsApproval) {
		t.Errorf("trusted high step = %v, want it held for approval", err)
	}
}

// A workspace's own policy (workspaces[].tasks) replaces the default for
// it alone.
func TestWorkspacePolicy(t *testing.T) {
	e := newEnv(t, envOptions{byWorkspace: map[string]task.Policy{"ops": {TrustedExecutors: []string{task.AgentScheduler}}}})
	ctx := t.Context()
	ops, err := e.st.Workspaces().GetOrCreate(ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	when := time.Now().Add(time.Hour).Format(time.RFC3339)
	in := task.Intent{Action: "schedule", Object: "calendar_event", Target: "deploy", When: when}
	opsOut, err := e.svc.Submit(ctx, task.Request{WorkspaceID: ops.ID, Intent: &in, Source: "api", Requester: alice})
	if err != nil {
		t.Fatal(err)
	}
	defOut := e.submit(t, in, "")
	e.waitTask(t, defOut.Task.ID, store.TaskAwaitingApproval)
	deadline := time.Now().Add(10 * time.Second)
	for {
		tk, _ := e.st.Tasks().Get(ctx, ops.ID, opsOut.Task.ID)
		if tk.Status == store.TaskDone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ops task %s; want done without approval (scheduler is trusted there)", tk.Status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
