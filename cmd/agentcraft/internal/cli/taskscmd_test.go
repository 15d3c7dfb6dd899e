package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
	"github.com/agentcraftlab/agentcraft/task"
)

// openTaskDB opens ./data/agentcraft.db, migrated by `agentcraft
// migrate`, for a test to seed and check what the tasks commands do.
func openTaskDB(t *testing.T) store.Store {
	t.Helper()
	if code, _, errOut := run(t, "migrate"); code != 0 {
		t.Fatalf("migrate: %s", errOut)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join("data", "agentcraft.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// seedTask stores a task of the default workspace in status, from source.
func seedTask(t *testing.T, st store.Store, title, source string, status store.TaskStatus) store.Task {
	t.Helper()
	ws, err := st.Workspaces().GetOrCreate(t.Context(), "default")
	if err != nil {
		t.Fatal(err)
	}
	k, err := st.Tasks().Create(t.Context(), store.Task{WorkspaceID: ws.ID, Title: title, Source: source, Status: status,
		Capability: store.CapabilityMedium, CreatedBy: "line:U1"})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// seedApproval asks for a pending approval of k.
func seedApproval(t *testing.T, st store.Store, k store.Task, a store.Approval) store.Approval {
	t.Helper()
	a.WorkspaceID, a.TaskID, a.RequestedBy = k.WorkspaceID, k.ID, "line:U1"
	a.Capability = store.CapabilityMedium
	got, err := st.Approvals().Create(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func eventTypes(t *testing.T, st store.Store, k store.Task) []string {
	t.Helper()
	evs, err := st.Tasks().Events(t.Context(), k.WorkspaceID, k.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Type+":"+e.Actor)
	}
	return out
}

// TestTasksApproveRecordsDecision: approving from the command line
// decides the pending approval as "cli", appends the task's approved
// event and an audit row; approving again says so and changes nothing;
// rejecting it then fails.
func TestTasksApproveRecordsDecision(t *testing.T) {
	t.Chdir(t.TempDir())
	st := openTaskDB(t)
	k := seedTask(t, st, "Book room 3 on Friday", "line", store.TaskAwaitingApproval)
	a := seedApproval(t, st, k, store.Approval{Summary: "create the event Room 3, Fri 10:00"})

	code, out, errOut := run(t, "tasks", "approve", k.ID, "--comment", "go ahead")
	if code != 0 || out != "approved "+a.ID+": create the event Room 3, Fri 10:00\n" {
		t.Fatalf("approve: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "a running server resumes its run") {
		t.Errorf("approve does not say who resumes the run: %q", errOut)
	}
	got, err := st.Approvals().Get(t.Context(), k.WorkspaceID, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.ApprovalApproved || got.ApproverUserID != "cli" || got.DecidedAt == nil {
		t.Errorf("stored approval = %s by %q at %v, want approved by cli", got.Status, got.ApproverUserID, got.DecidedAt)
	}
	if evs := eventTypes(t, st, k); !slices.Equal(evs, []string{"created:line:U1", "approved:cli"}) {
		t.Errorf("task events = %v, want created then approved by cli", evs)
	}
	page, err := st.AuditLog().List(t.Context(), store.AuditFilter{WorkspaceID: k.WorkspaceID, Action: "approval."})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 1 || page.Events[0].Action != "approval.approve" || page.Events[0].Actor != "cli" ||
		page.Events[0].Target != "approval:"+a.ID || !strings.Contains(string(page.Events[0].Details), `"comment":"go ahead"`) {
		t.Errorf("audit rows = %+v, want one approval.approve of approval:%s by cli with the comment", page.Events, a.ID)
	}

	// The same decision again: no error, no second event or audit row.
	code, out, errOut = run(t, "tasks", "approve", k.ID)
	if code != 0 || out != "already approved "+a.ID+": create the event Room 3, Fri 10:00\n" {
		t.Errorf("approve again: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// The other decision: refused, naming what was decided.
	code, _, errOut = run(t, "tasks", "reject", k.ID, "--approval", a.ID)
	if code == 0 || !strings.Contains(errOut, "was approved already by cli") || !strings.Contains(errOut, "cannot be rejected") {
		t.Errorf("reject after approve: exit %d, stderr %q", code, errOut)
	}
	if evs := eventTypes(t, st, k); len(evs) != 2 {
		t.Errorf("repeated decisions appended events: %v", evs)
	}
	page, _ = st.AuditLog().List(t.Context(), store.AuditFilter{WorkspaceID: k.WorkspaceID, Action: "approval."})
	if len(page.Events) != 1 {
		t.Errorf("repeated decisions were audited again: %d rows", len(page.Events))
	}
}

func TestTasksRejectRecordsDecision(t *testing.T) {
	t.Chdir(t.TempDir())
	st := openTaskDB(t)
	k := seedTask(t, st, "Delete the shared folder", "web", store.TaskAwaitingApproval)
	a := seedApproval(t, st, k, store.Approval{Summary: "delete /shared"})
	code, out, errOut := run(t, "tasks", "reject", k.ID)
	if code != 0 || out != "rejected "+a.ID+": delete /shared\n" {
		t.Fatalf("reject: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	got, _ := st.Approvals().Get(t.Context(), k.WorkspaceID, a.ID)
	if got.Status != store.ApprovalRejected || got.ApproverUserID != "cli" {
		t.Errorf("stored approval = %s by %q, want rejected by cli", got.Status, got.ApproverUserID)
	}
	if evs := eventTypes(t, st, k); !slices.Contains(evs, "rejected:cli") {
		t.Errorf("task events = %v, want rejected by cli", evs)
	}
	page, _ := st.AuditLog().List(t.Context(), store.AuditFilter{WorkspaceID: k.WorkspaceID, Action: "approval.reject", Actor: "cli"})
	if len(page.Events) != 1 {
		t.Errorf("approval.reject audit rows by cli = %d, want 1", len(page.Events))
	}
	if code, _, errOut := run(t, "tasks", "approve", k.ID); code == 0 || !strings.Contains(errOut, "was rejected already") {
		t.Errorf("approve after reject: exit %d, stderr %q", code, errOut)
	}
}

// TestTasksApproveChoosesTheApproval: with several pending approvals the
// command asks for --approval; an approval of another task is refused;
// a task without approvals says so.
func TestTasksApproveChoosesTheApproval(t *testing.T) {
	t.Chdir(t.TempDir())
	st := openTaskDB(t)
	k := seedTask(t, st, "Two events", "api", store.TaskAwaitingApproval)
	a1 := seedApproval(t, st, k, store.Approval{StepKey: "s1", Summary: "first event"})
	a2 := seedApproval(t, st, k, store.Approval{StepKey: "s2", Summary: "second event"})
	other := seedTask(t, st, "Other", "api", store.TaskAwaitingApproval)
	a3 := seedApproval(t, st, other, store.Approval{Summary: "other's"})
	bare := seedTask(t, st, "Nothing to approve", "api", store.TaskRunning)

	code, _, errOut := run(t, "tasks", "approve", k.ID)
	if code == 0 || !strings.Contains(errOut, "has 2 pending approvals") || !strings.Contains(errOut, "--approval") ||
		!strings.Contains(errOut, a1.ID) || !strings.Contains(errOut, a2.ID) {
		t.Errorf("approve with two pending: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := run(t, "tasks", "approve", k.ID, "--approval", a3.ID); code == 0 || !strings.Contains(errOut, "does not exist") {
		t.Errorf("approve another task's approval: exit %d, stderr %q", code, errOut)
	}
	if got, _ := st.Approvals().Get(t.Context(), other.WorkspaceID, a3.ID); got.Status != store.ApprovalPending {
		t.Errorf("the other task's approval was decided: %s", got.Status)
	}
	if code, out, errOut := run(t, "tasks", "approve", k.ID, "--approval", a2.ID); code != 0 || out != "approved "+a2.ID+": second event\n" {
		t.Errorf("approve --approval: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// One pending left: it is chosen.
	if code, out, errOut := run(t, "tasks", "reject", k.ID); code != 0 || out != "rejected "+a1.ID+": first event\n" {
		t.Errorf("reject the last pending: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, errOut := run(t, "tasks", "approve", k.ID); code == 0 || !strings.Contains(errOut, "no pending approval") {
		t.Errorf("approve with none pending: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := run(t, "tasks", "approve", bare.ID); code == 0 || !strings.Contains(errOut, "has no approval") {
		t.Errorf("approve a task without approvals: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := run(t, "tasks", "approve", "no-such-task"); code == 0 || !strings.Contains(errOut, `task "no-such-task" does not exist in workspace "default"`) {
		t.Errorf("approve an unknown task: exit %d, stderr %q", code, errOut)
	}
}

// TestTasksApproveExpired: an approval past its expiry cannot be
// approved; the error names the expiry and the task ends expired.
func TestTasksApproveExpired(t *testing.T) {
	t.Chdir(t.TempDir())
	st := openTaskDB(t)
	k := seedTask(t, st, "Late", "line", store.TaskAwaitingApproval)
	run1, err := st.Runs().Create(t.Context(), store.Run{WorkspaceID: k.WorkspaceID, TaskID: k.ID, Status: store.RunWaiting,
		Definition: json.RawMessage(`{"nodes": [{"id": "start", "type": "input"}, {"id": "out", "type": "output"}], "edges": [["start", "out"]]}`),
		Input:      json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Now().Add(-time.Minute)
	a := seedApproval(t, st, k, store.Approval{RunID: run1.ID, Summary: "too late", ExpiresAt: &exp})

	code, _, errOut := run(t, "tasks", "approve", k.ID)
	if code == 0 || !strings.Contains(errOut, "approval "+a.ID+" of task "+k.ID+" expired at "+exp.Local().Format("2006-01-02 15:04")) {
		t.Fatalf("approve expired: exit %d, stderr %q", code, errOut)
	}
	got, _ := st.Approvals().Get(t.Context(), k.WorkspaceID, a.ID)
	if got.Status != store.ApprovalExpired {
		t.Errorf("approval status = %s, want expired", got.Status)
	}
	if k2, _ := st.Tasks().Get(t.Context(), k.WorkspaceID, k.ID); k2.Status != store.TaskExpired {
		t.Errorf("task status = %s, want expired", k2.Status)
	}
	if code, _, errOut := run(t, "tasks", "reject", k.ID); code == 0 || !strings.Contains(errOut, "expired") {
		t.Errorf("reject expired: exit %d, stderr %q", code, errOut)
	}
}

func TestTasksListFilters(t *testing.T) {
	t.Chdir(t.TempDir())
	st := openTaskDB(t)
	fromLine := seedTask(t, st, "From LINE", "line", store.TaskAwaitingApproval)
	fromWeb := seedTask(t, st, "From the web", "web", store.TaskDone)
	fromLine2 := seedTask(t, st, "From LINE, later\nsecond line", "line", store.TaskDone)

	code, out, errOut := run(t, "tasks", "list")
	if code != 0 {
		t.Fatalf("list: %d %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[0], "CAPABILITY") {
		t.Fatalf("list: want a header and 3 rows:\n%s", out)
	}
	var ids []string
	for _, l := range lines[1:] {
		ids = append(ids, strings.Fields(l)[0])
	}
	if want := []string{fromLine2.ID, fromWeb.ID, fromLine.ID}; !slices.Equal(ids, want) {
		t.Errorf("list order = %v, want newest first %v", ids, want)
	}
	if !strings.Contains(lines[1], "From LINE, later second line") || !strings.Contains(lines[3], "awaiting_approval") {
		t.Errorf("list rows:\n%s", out)
	}

	listIDs := func(args ...string) []string {
		t.Helper()
		code, out, errOut := run(t, append([]string{"tasks", "list", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("list %v: %d %s", args, code, errOut)
		}
		var page store.TaskPage
		if err := json.Unmarshal([]byte(out), &page); err != nil {
			t.Fatalf("list --json %v does not decode: %v\n%s", args, err, out)
		}
		ids := []string{}
		for _, k := range page.Tasks {
			ids = append(ids, k.ID)
		}
		return ids
	}
	if got := listIDs("--source", "line"); !slices.Equal(got, []string{fromLine2.ID, fromLine.ID}) {
		t.Errorf("--source line = %v", got)
	}
	if got := listIDs("--status", "done"); !slices.Equal(got, []string{fromLine2.ID, fromWeb.ID}) {
		t.Errorf("--status done = %v", got)
	}
	if got := listIDs("--status", "done", "--source", "web"); !slices.Equal(got, []string{fromWeb.ID}) {
		t.Errorf("--status done --source web = %v", got)
	}
	if got := listIDs("--source", "workflow"); len(got) != 0 {
		t.Errorf("--source workflow = %v, want none", got)
	}
	code, out, _ = run(t, "tasks", "list", "--json", "--limit", "1")
	var page store.TaskPage
	if code != 0 || json.Unmarshal([]byte(out), &page) != nil || len(page.Tasks) != 1 || page.Next == "" {
		t.Fatalf("--limit 1: %d %s", code, out)
	}
	if got := listIDs("--limit", "1", "--cursor", page.Next); !slices.Equal(got, []string{fromWeb.ID}) {
		t.Errorf("second page = %v, want %s", got, fromWeb.ID)
	}

	if code, _, errOut := run(t, "tasks", "list", "--status", "waiting"); code == 0 || !strings.Contains(errOut, "--status \"waiting\" is not a task status") {
		t.Errorf("bad status: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := run(t, "tasks", "list", "--limit", "0"); code == 0 || !strings.Contains(errOut, "--limit") {
		t.Errorf("bad limit: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := run(t, "tasks", "list", "--workspace", "nope"); code == 0 || !strings.Contains(errOut, `workspace "nope" does not exist`) {
		t.Errorf("unknown workspace: exit %d, stderr %q", code, errOut)
	}
}

func TestTasksShow(t *testing.T) {
	t.Chdir(t.TempDir())
	st := openTaskDB(t)
	k := seedTask(t, st, "Book room 3", "line", store.TaskAwaitingApproval)
	a := seedApproval(t, st, k, store.Approval{Summary: "create the event"})
	if _, err := st.Steps().Record(t.Context(), store.TaskStep{WorkspaceID: k.WorkspaceID, TaskID: k.ID, IdempotencyKey: "k1",
		Tool: "calendar_list_events"}); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := run(t, "tasks", "show", k.ID)
	if code != 0 {
		t.Fatalf("show: %d %s", code, errOut)
	}
	for _, want := range []string{k.ID, "Book room 3", "awaiting_approval", "APPROVALS", a.ID, "create the event", "pending",
		"STEPS", "calendar_list_events", "EVENTS", "created", "line:U1", "RUNS", "(none)"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}

	code, out, errOut = run(t, "tasks", "show", k.ID, "--json")
	var v task.View
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil {
		t.Fatalf("show --json: %d %s %s", code, out, errOut)
	}
	if v.Task.ID != k.ID || len(v.Approvals) != 1 || v.Approvals[0].ID != a.ID || len(v.Steps) != 1 || len(v.Events) != 1 {
		t.Errorf("show --json = %+v", v)
	}

	code, _, errOut = run(t, "tasks", "show", "no-such-task")
	if code == 0 || !strings.Contains(errOut, `task "no-such-task" does not exist in workspace "default"`) {
		t.Errorf("show unknown: exit %d, stderr %q", code, errOut)
	}
}
