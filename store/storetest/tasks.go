package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/store"
)

func mustTask(t *testing.T, st store.Store, workspaceID, title string) store.Task {
	t.Helper()
	task, err := st.Tasks().Create(t.Context(), store.Task{WorkspaceID: workspaceID, Title: title, Source: "api", CreatedBy: "u1"})
	if err != nil {
		t.Fatalf("Create task %q: %v", title, err)
	}
	return task
}

// eventLines renders events as "seq type actor" for comparison.
func eventLines(t *testing.T, st store.Store, workspaceID, taskID string) []string {
	t.Helper()
	evs, err := st.Tasks().Events(t.Context(), workspaceID, taskID, 0, 0)
	if err != nil {
		t.Fatalf("Events(%s) = %v", taskID, err)
	}
	var out []string
	for _, e := range evs {
		if e.TaskID != taskID {
			t.Errorf("event %d has task id %q, want %s", e.Seq, e.TaskID, taskID)
		}
		out = append(out, fmt.Sprintf("%d %s %s", e.Seq, e.Type, e.Actor))
	}
	return out
}

func testTasks(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateGet", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		due := time.Date(2027, 1, 2, 3, 4, 5, 6789, time.FixedZone("JST", 9*3600))
		in := store.Task{
			WorkspaceID:    a.ID,
			Title:          "明日10時に会議を入れて",
			Detail:         "with Sato-san",
			Intent:         json.RawMessage(`{"action": "create", "object": "calendar_event", "target": "sato", "actor": "u1", "raw": "明日10時に会議を入れて"}`),
			AssigneeUserID: "u2",
			Source:         "line",
			SourceRef:      "01HWEBHOOKEVENT",
			DueAt:          &due,
			CreatedBy:      "u1",
			ReplyTo:        json.RawMessage(`{"channel": "line", "target": "U4af4980629"}`),
		}
		before := time.Now()
		created, err := st.Tasks().Create(ctx, in)
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		after := time.Now()
		want := in
		want.Status, want.Capability = store.TaskOpen, store.CapabilityLow
		dueUTC := store.Timestamp(due)
		want.DueAt = &dueUTC
		if diff := cmp.Diff(want, created, jsonEqual, cmpIgnore("ID", "CreatedAt", "UpdatedAt")); diff != "" {
			t.Errorf("Create (-want +created):\n%s", diff)
		}
		if created.ID == "" {
			t.Error("Create assigned no ID")
		}
		checkStamp(t, "CreatedAt", created.CreatedAt, before, after)
		if !created.UpdatedAt.Equal(created.CreatedAt) {
			t.Errorf("UpdatedAt = %v, want CreatedAt %v", created.UpdatedAt, created.CreatedAt)
		}
		got, err := st.Tasks().Get(ctx, a.ID, created.ID)
		if err != nil {
			t.Fatalf("Get = %v", err)
		}
		if diff := cmp.Diff(created, got, jsonEqual); diff != "" {
			t.Errorf("Get (-created +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"1 created u1"}, eventLines(t, st, a.ID, created.ID)); diff != "" {
			t.Errorf("events of a new task (-want +got):\n%s", diff)
		}
		_, err = st.Tasks().Get(ctx, b.ID, created.ID)
		wantErr(t, "Get from another workspace", err, store.ErrNotFound)
		_, err = st.Tasks().Events(ctx, b.ID, created.ID, 0, 0)
		wantErr(t, "Events from another workspace", err, store.ErrNotFound)
		_, err = st.Tasks().Get(ctx, a.ID, store.NewID())
		wantErr(t, "Get unknown", err, store.ErrNotFound)
		_, err = st.Tasks().Create(ctx, store.Task{WorkspaceID: store.NewID(), Title: "x", Source: "api"})
		wantErr(t, "Create in an unknown workspace", err, store.ErrNotFound)

		child, err := st.Tasks().Create(ctx, store.Task{WorkspaceID: a.ID, Title: "sub", Source: "api", ParentTaskID: created.ID})
		if err != nil || child.ParentTaskID != created.ID {
			t.Errorf("Create child = %+v, %v; want parent %s", child, err, created.ID)
		}
		_, err = st.Tasks().Create(ctx, store.Task{WorkspaceID: b.ID, Title: "sub", Source: "api", ParentTaskID: created.ID})
		wantErr(t, "Create with a parent of another workspace", err, store.ErrNotFound)
		_, err = st.Tasks().Create(ctx, store.Task{WorkspaceID: a.ID, Title: "sub", Source: "api", ParentTaskID: store.NewID()})
		wantErr(t, "Create with an unknown parent", err, store.ErrNotFound)
	})

	t.Run("Validation", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		ok := store.Task{WorkspaceID: a.ID, Title: "t", Source: "web"}
		for name, mod := range map[string]func(*store.Task){
			"no workspace":         func(t *store.Task) { t.WorkspaceID = "" },
			"no title":             func(t *store.Task) { t.Title = "" },
			"no source":            func(t *store.Task) { t.Source = "" },
			"unknown status":       func(t *store.Task) { t.Status = "sleeping" },
			"unknown capability":   func(t *store.Task) { t.Capability = "extreme" },
			"intent not JSON":      func(t *store.Task) { t.Intent = json.RawMessage(`{`) },
			"intent not an object": func(t *store.Task) { t.Intent = json.RawMessage(`["create"]`) },
			"intent null":          func(t *store.Task) { t.Intent = json.RawMessage(`null`) },
			"reply_to not JSON":    func(t *store.Task) { t.ReplyTo = json.RawMessage(`{"channel"`) },
		} {
			in := ok
			mod(&in)
			_, err := st.Tasks().Create(ctx, in)
			wantErr(t, "Create with "+name, err, store.ErrInvalid)
		}
		page, err := st.Tasks().List(ctx, a.ID, store.TaskFilter{})
		if err != nil || len(page.Tasks) != 0 {
			t.Errorf("List after invalid creates = %d tasks, %v; want none", len(page.Tasks), err)
		}
		task := mustTask(t, st, a.ID, "t")
		for name, call := range map[string]func() error{
			"no from": func() error {
				_, err := st.Tasks().Transition(ctx, a.ID, task.ID, nil, store.TaskPlanning, store.TaskUpdate{})
				return err
			},
			"unknown to": func() error {
				_, err := st.Tasks().Transition(ctx, a.ID, task.ID, []store.TaskStatus{store.TaskOpen}, "asleep", store.TaskUpdate{})
				return err
			},
			"unknown from": func() error {
				_, err := st.Tasks().Transition(ctx, a.ID, task.ID, []store.TaskStatus{"asleep"}, store.TaskPlanning, store.TaskUpdate{})
				return err
			},
			"event without type": func() error {
				_, err := st.Tasks().Transition(ctx, a.ID, task.ID, []store.TaskStatus{store.TaskOpen}, store.TaskPlanning,
					store.TaskUpdate{Event: &store.TaskEvent{}})
				return err
			},
			"bad capability": func() error {
				_, err := st.Tasks().Transition(ctx, a.ID, task.ID, []store.TaskStatus{store.TaskOpen}, store.TaskPlanning,
					store.TaskUpdate{Capability: "huge"})
				return err
			},
			"append event with bad payload": func() error {
				_, err := st.Tasks().AppendEvent(ctx, a.ID, task.ID, store.TaskEvent{Type: "note", Payload: json.RawMessage(`nope`)})
				return err
			},
			"list bad cursor": func() error {
				_, err := st.Tasks().List(ctx, a.ID, store.TaskFilter{Cursor: "!!"})
				return err
			},
			"list bad status": func() error {
				_, err := st.Tasks().List(ctx, a.ID, store.TaskFilter{Status: "asleep"})
				return err
			},
		} {
			wantErr(t, name, call(), store.ErrInvalid)
		}
		if got, _ := st.Tasks().Get(ctx, a.ID, task.ID); got.Status != store.TaskOpen {
			t.Errorf("status after refused transitions = %s, want open", got.Status)
		}
		if diff := cmp.Diff([]string{"1 created u1"}, eventLines(t, st, a.ID, task.ID)); diff != "" {
			t.Errorf("events after refused writes (-want +got):\n%s", diff)
		}
	})

	t.Run("SourceRefRedelivery", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		msg := store.Task{WorkspaceID: a.ID, Title: "remind me", Source: "line", SourceRef: "evt-1", CreatedBy: "line:U1"}
		first, err := st.Tasks().Create(ctx, msg)
		if err != nil {
			t.Fatal(err)
		}
		// LINE redelivers the webhook: same webhookEventId.
		again := msg
		again.Title = "remind me (redelivered)"
		got, err := st.Tasks().Create(ctx, again)
		wantErr(t, "Create of a redelivered message", err, store.ErrConflict)
		if diff := cmp.Diff(first, got, jsonEqual); diff != "" {
			t.Errorf("Create of a redelivered message returned (-first +got):\n%s", diff)
		}
		if bySrc, err := st.Tasks().GetBySource(ctx, a.ID, "line", "evt-1"); err != nil || bySrc.ID != first.ID {
			t.Errorf("GetBySource = %s, %v; want %s", bySrc.ID, err, first.ID)
		}
		_, err = st.Tasks().GetBySource(ctx, b.ID, "line", "evt-1")
		wantErr(t, "GetBySource from another workspace", err, store.ErrNotFound)
		// The same ref on another channel, or in another workspace, is
		// another message; tasks without a ref never collide.
		for _, in := range []store.Task{
			{WorkspaceID: a.ID, Title: "x", Source: "web", SourceRef: "evt-1"},
			{WorkspaceID: b.ID, Title: "x", Source: "line", SourceRef: "evt-1"},
			{WorkspaceID: a.ID, Title: "y", Source: "line"},
			{WorkspaceID: a.ID, Title: "z", Source: "line"},
		} {
			if _, err := st.Tasks().Create(ctx, in); err != nil {
				t.Errorf("Create %s/%s %q = %v", in.Source, in.SourceRef, in.Title, err)
			}
		}
		page, err := st.Tasks().List(ctx, a.ID, store.TaskFilter{Source: "line"})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Tasks) != 3 {
			t.Errorf("line tasks of a = %d, want 3 (the redelivery made none)", len(page.Tasks))
		}
		if diff := cmp.Diff([]string{"1 created line:U1"}, eventLines(t, st, a.ID, first.ID)); diff != "" {
			t.Errorf("events after the redelivery (-want +got):\n%s", diff)
		}
	})

	t.Run("List", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		var made []store.Task
		for i, src := range []string{"line", "web", "line", "api", "line"} {
			in := store.Task{WorkspaceID: a.ID, Title: fmt.Sprintf("t%d", i), Source: src}
			if i%2 == 0 {
				in.AssigneeUserID = "u7"
			}
			task, err := st.Tasks().Create(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			made = append(made, task)
		}
		mustTask(t, st, b.ID, "other")
		if _, err := st.Tasks().Transition(ctx, a.ID, made[1].ID, []store.TaskStatus{store.TaskOpen}, store.TaskRunning, store.TaskUpdate{}); err != nil {
			t.Fatal(err)
		}
		titles := func(f store.TaskFilter) []string {
			t.Helper()
			var out []string
			for {
				page, err := st.Tasks().List(ctx, a.ID, f)
				if err != nil {
					t.Fatalf("List(%+v) = %v", f, err)
				}
				for _, task := range page.Tasks {
					out = append(out, task.Title)
				}
				if page.Next == "" {
					return out
				}
				f.Cursor = page.Next
			}
		}
		for _, c := range []struct {
			f    store.TaskFilter
			want []string
		}{
			{store.TaskFilter{}, []string{"t4", "t3", "t2", "t1", "t0"}},
			{store.TaskFilter{Limit: 2}, []string{"t4", "t3", "t2", "t1", "t0"}},
			{store.TaskFilter{Source: "line", Limit: 1}, []string{"t4", "t2", "t0"}},
			{store.TaskFilter{Status: store.TaskRunning}, []string{"t1"}},
			{store.TaskFilter{Status: store.TaskOpen, AssigneeUserID: "u7", Limit: 2}, []string{"t4", "t2", "t0"}},
			{store.TaskFilter{Source: "mail"}, nil},
		} {
			if diff := cmp.Diff(c.want, titles(c.f)); diff != "" {
				t.Errorf("List(%+v) (-want +got):\n%s", c.f, diff)
			}
		}
		page, err := st.Tasks().List(ctx, a.ID, store.TaskFilter{Limit: 5})
		if err != nil || page.Next != "" {
			t.Errorf("List of exactly a page: next %q, %v; want none", page.Next, err)
		}
	})

	t.Run("Transition", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		task := mustTask(t, st, a.ID, "book a room")
		assignee := "agent:scheduler"
		planned, err := st.Tasks().Transition(ctx, a.ID, task.ID, []store.TaskStatus{store.TaskOpen}, store.TaskPlanning, store.TaskUpdate{
			Intent:         json.RawMessage(`{"action": "book", "object": "room"}`),
			Capability:     store.CapabilityMedium,
			AssigneeUserID: &assignee,
			Event:          &store.TaskEvent{Type: store.TaskEventClaimed, Actor: "agent:scheduler", Payload: json.RawMessage(`{"score": 0.9}`)},
		})
		if err != nil {
			t.Fatalf("Transition open → planning = %v", err)
		}
		want := task
		want.Status, want.Capability, want.AssigneeUserID = store.TaskPlanning, store.CapabilityMedium, assignee
		want.Intent = json.RawMessage(`{"object": "room", "action": "book"}`)
		if diff := cmp.Diff(want, planned, jsonEqual, cmpIgnore("UpdatedAt")); diff != "" {
			t.Errorf("Transition (-want +got):\n%s", diff)
		}
		if planned.UpdatedAt.Before(task.UpdatedAt) {
			t.Errorf("UpdatedAt = %v, before the creation's %v", planned.UpdatedAt, task.UpdatedAt)
		}
		// A transition with no update keeps the fields.
		running, err := st.Tasks().Transition(ctx, a.ID, task.ID, []store.TaskStatus{store.TaskPlanning, store.TaskAwaitingApproval}, store.TaskRunning, store.TaskUpdate{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(planned, running, jsonEqual, cmpIgnore("UpdatedAt", "Status")); diff != "" {
			t.Errorf("Transition with an empty update changed fields (-before +after):\n%s", diff)
		}

		// Wrong current status: ErrConflict with the task as stored, and
		// its event not stored.
		got, err := st.Tasks().Transition(ctx, a.ID, task.ID, []store.TaskStatus{store.TaskOpen}, store.TaskCancelled,
			store.TaskUpdate{Event: &store.TaskEvent{Type: "note", Actor: "late"}})
		wantErr(t, "Transition from a status the task is not in", err, store.ErrConflict)
		if diff := cmp.Diff(running, got, jsonEqual); diff != "" {
			t.Errorf("conflicting Transition returned (-stored +got):\n%s", diff)
		}
		_, err = st.Tasks().Transition(ctx, b.ID, task.ID, []store.TaskStatus{store.TaskRunning}, store.TaskCancelled, store.TaskUpdate{})
		wantErr(t, "Transition from another workspace", err, store.ErrNotFound)
		_, err = st.Tasks().Transition(ctx, a.ID, store.NewID(), []store.TaskStatus{store.TaskRunning}, store.TaskDone, store.TaskUpdate{})
		wantErr(t, "Transition of an unknown task", err, store.ErrNotFound)

		done, err := st.Tasks().Transition(ctx, a.ID, task.ID, []store.TaskStatus{store.TaskRunning}, store.TaskDone,
			store.TaskUpdate{Event: &store.TaskEvent{Type: store.TaskEventCompleted, Actor: "agent:scheduler"}})
		if err != nil || done.Status != store.TaskDone || !done.Status.Final() {
			t.Fatalf("Transition running → done = %s, %v", done.Status, err)
		}
		if diff := cmp.Diff([]string{"1 created u1", "2 claimed agent:scheduler", "3 completed agent:scheduler"},
			eventLines(t, st, a.ID, task.ID)); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		evs, err := st.Tasks().Events(ctx, a.ID, task.ID, 1, 1)
		if err != nil || len(evs) != 1 || evs[0].Seq != 2 || decodeJSON(evs[0].Payload).(map[string]any)["score"] != 0.9 {
			t.Errorf("Events(after 1, limit 1) = %+v, %v; want the claimed event with its payload", evs, err)
		}
		if got, _ := st.Tasks().Get(ctx, b.ID, task.ID); got.ID != "" {
			t.Errorf("Get from another workspace returned %+v", got)
		}
	})

	t.Run("ConcurrentEvents", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		task := mustTask(t, st, a.ID, "busy")
		const n = 12
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			seqs = map[int64]bool{}
		)
		for i := range n {
			wg.Go(func() {
				var (
					e   store.TaskEvent
					err error
				)
				if i%3 == 0 {
					// A transition onto the same status with an event
					// takes the counter as AppendEvent does.
					_, err = st.Tasks().Transition(ctx, a.ID, task.ID, []store.TaskStatus{store.TaskOpen}, store.TaskOpen,
						store.TaskUpdate{Event: &store.TaskEvent{Type: "note", Actor: fmt.Sprint(i)}})
				} else {
					e, err = st.Tasks().AppendEvent(ctx, a.ID, task.ID, store.TaskEvent{Type: "note", Actor: fmt.Sprint(i)})
				}
				if err != nil {
					t.Errorf("append %d = %v", i, err)
					return
				}
				if e.Seq != 0 {
					mu.Lock()
					if seqs[e.Seq] {
						t.Errorf("seq %d handed out twice", e.Seq)
					}
					seqs[e.Seq] = true
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		evs, err := st.Tasks().Events(ctx, a.ID, task.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != n+1 {
			t.Fatalf("events = %d, want %d", len(evs), n+1)
		}
		for i, e := range evs {
			if e.Seq != int64(i+1) {
				t.Errorf("event %d has seq %d, want %d: seqs are consecutive from 1", i, e.Seq, i+1)
			}
		}
		_, err = st.Tasks().AppendEvent(ctx, a.ID, store.NewID(), store.TaskEvent{Type: "note"})
		wantErr(t, "AppendEvent to an unknown task", err, store.ErrNotFound)
		b := mustWorkspace(t, st, "b")
		_, err = st.Tasks().AppendEvent(ctx, b.ID, task.ID, store.TaskEvent{Type: "note"})
		wantErr(t, "AppendEvent from another workspace", err, store.ErrNotFound)
		if evs, _ := st.Tasks().Events(ctx, a.ID, task.ID, 0, 0); len(evs) != n+1 {
			t.Errorf("events after refused appends = %d, want %d", len(evs), n+1)
		}
	})

	t.Run("WorkspaceDelete", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, keep := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "keep")
		task := mustTask(t, st, a.ID, "doomed")
		if _, err := st.Approvals().Create(ctx, store.Approval{WorkspaceID: a.ID, TaskID: task.ID, Capability: store.CapabilityHigh, Summary: "pay"}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Steps().Record(ctx, store.TaskStep{WorkspaceID: a.ID, TaskID: task.ID, IdempotencyKey: "k"}); err != nil {
			t.Fatal(err)
		}
		kept := mustTask(t, st, keep.ID, "kept")
		if err := st.Workspaces().Delete(ctx, a.ID); err != nil {
			t.Fatalf("Delete a workspace with tasks, events, approvals and steps = %v", err)
		}
		if _, err := st.Tasks().Get(ctx, keep.ID, kept.ID); err != nil {
			t.Errorf("the other workspace's task after the delete: %v", err)
		}
		// The key is free again in a new workspace of the same name.
		a2 := mustWorkspace(t, st, "a")
		t2 := mustTask(t, st, a2.ID, "again")
		if _, err := st.Steps().Record(ctx, store.TaskStep{WorkspaceID: a2.ID, TaskID: t2.ID, IdempotencyKey: "k"}); err != nil {
			t.Errorf("Record in the new workspace = %v", err)
		}
	})
}

func testApprovals(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateGetList", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		task := mustTask(t, st, a.ID, "send the invoice")
		run := mustRun(t, st, a.ID)
		expires := time.Now().Add(time.Hour)
		decided := time.Now()
		in := store.Approval{WorkspaceID: a.ID, TaskID: task.ID, RunID: run.ID, StepKey: "send#1",
			Capability: store.CapabilityHigh, Summary: "佐藤様に請求書を送信します", RequestedBy: "agent:admin",
			ApproverUserID: "ignored", DecidedAt: &decided, ExpiresAt: &expires}
		before := time.Now()
		created, err := st.Approvals().Create(ctx, in)
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		after := time.Now()
		want := in
		want.Status, want.ApproverUserID, want.DecidedAt = store.ApprovalPending, "", nil
		e := store.Timestamp(expires)
		want.ExpiresAt = &e
		if diff := cmp.Diff(want, created, cmpIgnore("ID", "CreatedAt")); diff != "" {
			t.Errorf("Create (-want +got):\n%s", diff)
		}
		checkStamp(t, "CreatedAt", created.CreatedAt, before, after)
		if got, err := st.Approvals().Get(ctx, a.ID, created.ID); err != nil || !cmp.Equal(created, got) {
			t.Errorf("Get = %+v, %v; want %+v", got, err, created)
		}
		_, err = st.Approvals().Get(ctx, b.ID, created.ID)
		wantErr(t, "Get from another workspace", err, store.ErrNotFound)

		// The same step asks once.
		again, err := st.Approvals().Create(ctx, store.Approval{WorkspaceID: a.ID, TaskID: task.ID, StepKey: "send#1",
			Capability: store.CapabilityHigh, Summary: "again"})
		wantErr(t, "Create for a step that asked already", err, store.ErrConflict)
		if again.ID != created.ID {
			t.Errorf("Create for a step that asked already returned %q, want the existing %s", again.ID, created.ID)
		}

		other := mustTask(t, st, b.ID, "other")
		otherRun := mustRun(t, st, b.ID)
		for name, in := range map[string]store.Approval{
			"a task of another workspace": {WorkspaceID: a.ID, TaskID: other.ID, Capability: store.CapabilityLow, Summary: "s"},
			"an unknown task":             {WorkspaceID: a.ID, TaskID: store.NewID(), Capability: store.CapabilityLow, Summary: "s"},
			"a run of another workspace":  {WorkspaceID: a.ID, TaskID: task.ID, RunID: otherRun.ID, Capability: store.CapabilityLow, Summary: "s"},
		} {
			_, err := st.Approvals().Create(ctx, in)
			wantErr(t, "Create with "+name, err, store.ErrNotFound)
		}
		for name, in := range map[string]store.Approval{
			"no task":            {WorkspaceID: a.ID, Capability: store.CapabilityLow, Summary: "s"},
			"no capability":      {WorkspaceID: a.ID, TaskID: task.ID, Summary: "s"},
			"no summary":         {WorkspaceID: a.ID, TaskID: task.ID, Capability: store.CapabilityLow},
			"a decided status":   {WorkspaceID: a.ID, TaskID: task.ID, Capability: store.CapabilityLow, Summary: "s", Status: store.ApprovalApproved},
			"unknown capability": {WorkspaceID: a.ID, TaskID: task.ID, Capability: "4", Summary: "s"},
		} {
			_, err := st.Approvals().Create(ctx, in)
			wantErr(t, "Create with "+name, err, store.ErrInvalid)
		}

		second, err := st.Approvals().Create(ctx, store.Approval{WorkspaceID: a.ID, TaskID: task.ID, Capability: store.CapabilityMedium, Summary: "book"})
		if err != nil {
			t.Fatal(err)
		}
		third, err := st.Approvals().Create(ctx, store.Approval{WorkspaceID: a.ID, TaskID: mustTask(t, st, a.ID, "t2").ID, Capability: store.CapabilityLow, Summary: "remind"})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.Approvals().Decide(ctx, a.ID, second.ID, true, "u-owner", time.Now()); err != nil {
			t.Fatal(err)
		}
		ids := func(f store.ApprovalFilter) []string {
			t.Helper()
			list, err := st.Approvals().List(ctx, a.ID, f)
			if err != nil {
				t.Fatalf("List(%+v) = %v", f, err)
			}
			var out []string
			for _, ap := range list {
				out = append(out, ap.ID)
			}
			return out
		}
		for _, c := range []struct {
			f    store.ApprovalFilter
			want []string
		}{
			{store.ApprovalFilter{}, []string{third.ID, second.ID, created.ID}},
			{store.ApprovalFilter{Limit: 2}, []string{third.ID, second.ID}},
			{store.ApprovalFilter{Status: store.ApprovalPending}, []string{third.ID, created.ID}},
			{store.ApprovalFilter{TaskID: task.ID}, []string{second.ID, created.ID}},
			{store.ApprovalFilter{TaskID: task.ID, Status: store.ApprovalApproved}, []string{second.ID}},
		} {
			if diff := cmp.Diff(c.want, ids(c.f)); diff != "" {
				t.Errorf("List(%+v) (-want +got):\n%s", c.f, diff)
			}
		}
		if list, err := st.Approvals().List(ctx, b.ID, store.ApprovalFilter{}); err != nil || len(list) != 0 {
			t.Errorf("List of b = %d approvals, %v; want none", len(list), err)
		}
		_, err = st.Approvals().List(ctx, a.ID, store.ApprovalFilter{Status: "maybe"})
		wantErr(t, "List with an unknown status", err, store.ErrInvalid)
	})

	t.Run("Decide", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		task := mustTask(t, st, a.ID, "t")
		ap, err := st.Approvals().Create(ctx, store.Approval{WorkspaceID: a.ID, TaskID: task.ID, Capability: store.CapabilityMedium, Summary: "create the event"})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = st.Approvals().Decide(ctx, b.ID, ap.ID, true, "u1", time.Now())
		wantErr(t, "Decide from another workspace", err, store.ErrNotFound)
		_, _, err = st.Approvals().Decide(ctx, a.ID, store.NewID(), true, "u1", time.Now())
		wantErr(t, "Decide an unknown approval", err, store.ErrNotFound)
		_, _, err = st.Approvals().Decide(ctx, a.ID, ap.ID, true, "", time.Now())
		wantErr(t, "Decide with no approver", err, store.ErrInvalid)
		if got, _ := st.Approvals().Get(ctx, a.ID, ap.ID); got.Status != store.ApprovalPending {
			t.Fatalf("status after refused decisions = %s, want pending", got.Status)
		}

		at := time.Now().Add(time.Minute)
		approved, decided, err := st.Approvals().Decide(ctx, a.ID, ap.ID, true, "u1", at)
		if err != nil || !decided {
			t.Fatalf("Decide(approve) = %v, decided %v; want nil, true", err, decided)
		}
		want := ap
		want.Status, want.ApproverUserID = store.ApprovalApproved, "u1"
		atTS := store.Timestamp(at)
		want.DecidedAt = &atTS
		if diff := cmp.Diff(want, approved); diff != "" {
			t.Errorf("Decide(approve) (-want +got):\n%s", diff)
		}
		// A doubled click, or another approver agreeing: idempotent.
		again, decided, err := st.Approvals().Decide(ctx, a.ID, ap.ID, true, "u2", at.Add(time.Second))
		if err != nil || decided {
			t.Errorf("Decide(approve) again = %v, decided %v; want nil, false", err, decided)
		}
		if diff := cmp.Diff(approved, again); diff != "" {
			t.Errorf("Decide(approve) again changed the row (-first +again):\n%s", diff)
		}
		// The other way: a conflict, with the row as stored.
		got, decided, err := st.Approvals().Decide(ctx, a.ID, ap.ID, false, "u2", at.Add(time.Second))
		wantErr(t, "Decide(reject) of an approved approval", err, store.ErrConflict)
		if decided || !cmp.Equal(approved, got) {
			t.Errorf("Decide(reject) of an approved approval = %+v, decided %v; want the stored row, false", got, decided)
		}

		rej, err := st.Approvals().Create(ctx, store.Approval{WorkspaceID: a.ID, TaskID: task.ID, Capability: store.CapabilityHigh, Summary: "pay"})
		if err != nil {
			t.Fatal(err)
		}
		if r, decided, err := st.Approvals().Decide(ctx, a.ID, rej.ID, false, "u1", at); err != nil || !decided || r.Status != store.ApprovalRejected {
			t.Errorf("Decide(reject) = %s, %v, %v; want rejected, true, nil", r.Status, decided, err)
		}
		_, _, err = st.Approvals().Decide(ctx, a.ID, rej.ID, true, "u1", at)
		wantErr(t, "Decide(approve) of a rejected approval", err, store.ErrConflict)

		// Each decision made is in the task's history once, with its
		// approver; the repeated and refused ones are not.
		if diff := cmp.Diff([]string{"1 created u1", "2 approved u1", "3 rejected u1"}, eventLines(t, st, a.ID, task.ID)); diff != "" {
			t.Errorf("task events after the decisions (-want +got):\n%s", diff)
		}
		evs, err := st.Tasks().Events(ctx, a.ID, task.ID, 1, 1)
		if err != nil || len(evs) != 1 || !cmp.Equal(evs[0].Payload, json.RawMessage(`{"approval_id": "`+ap.ID+`"}`), jsonEqual) ||
			!evs[0].CreatedAt.Equal(atTS) {
			t.Errorf("approved event = %+v, %v; want payload naming %s, stamped %v", evs, err, ap.ID, atTS)
		}
	})

	t.Run("Expiry", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		task, taskB := mustTask(t, st, a.ID, "t"), mustTask(t, st, b.ID, "t")
		t0 := store.Timestamp(time.Now().Add(time.Hour))
		create := func(ws, taskID, summary string, expires *time.Time) store.Approval {
			t.Helper()
			ap, err := st.Approvals().Create(ctx, store.Approval{WorkspaceID: ws, TaskID: taskID, Capability: store.CapabilityMedium,
				Summary: summary, ExpiresAt: expires})
			if err != nil {
				t.Fatal(err)
			}
			return ap
		}
		at := func(d time.Duration) *time.Time { x := t0.Add(d); return &x }
		late := create(a.ID, task.ID, "due second", at(0))
		early := create(b.ID, taskB.ID, "due first", at(-time.Minute))
		later := create(a.ID, task.ID, "not due", at(time.Hour))
		never := create(a.ID, task.ID, "never expires", nil)
		decidedEarly := create(a.ID, task.ID, "decided before expiry", at(-time.Hour))
		if _, _, err := st.Approvals().Decide(ctx, a.ID, decidedEarly.ID, true, "u1", t0.Add(-2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		// Deciding at or after the expiry refuses, and the row says why.
		got, decided, err := st.Approvals().Decide(ctx, a.ID, late.ID, true, "u1", t0)
		wantErr(t, "Decide at the expiry", err, store.ErrConflict)
		if decided || got.Status != store.ApprovalExpired || got.ApproverUserID != "" || got.DecidedAt != nil {
			t.Errorf("Decide at the expiry = %+v, decided %v; want the row expired and undecided", got, decided)
		}

		expired, err := st.Approvals().ExpireDue(ctx, t0)
		if err != nil {
			t.Fatalf("ExpireDue = %v", err)
		}
		var names []string
		for _, ap := range expired {
			if ap.Status != store.ApprovalExpired {
				t.Errorf("ExpireDue returned %q as %s, want expired", ap.Summary, ap.Status)
			}
			names = append(names, ap.Summary)
		}
		if diff := cmp.Diff([]string{"due first"}, names); diff != "" {
			t.Errorf("ExpireDue (-want +got):\n%s", diff)
		}
		if again, err := st.Approvals().ExpireDue(ctx, t0); err != nil || len(again) != 0 {
			t.Errorf("ExpireDue again = %d, %v; want none", len(again), err)
		}
		if got, _ := st.Approvals().Get(ctx, b.ID, early.ID); got.Status != store.ApprovalExpired {
			t.Errorf("expired approval reads %s", got.Status)
		}
		_, _, err = st.Approvals().Decide(ctx, b.ID, early.ID, false, "u1", t0.Add(-time.Hour))
		wantErr(t, "Decide an expired approval", err, store.ErrConflict)

		expired, err = st.Approvals().ExpireDue(ctx, t0.Add(2*time.Hour))
		if err != nil || len(expired) != 1 || expired[0].ID != later.ID {
			t.Errorf("ExpireDue two hours on = %+v, %v; want only %q", expired, err, later.Summary)
		}
		for _, ap := range []store.Approval{never, decidedEarly} {
			got, _ := st.Approvals().Get(ctx, a.ID, ap.ID)
			if got.Status == store.ApprovalExpired {
				t.Errorf("%q expired; it has no expiry or was decided", ap.Summary)
			}
		}
		_, err = st.Approvals().ExpireDue(ctx, time.Time{})
		wantErr(t, "ExpireDue at the zero time", err, store.ErrInvalid)
	})

	t.Run("ConcurrentDecide", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		task := mustTask(t, st, a.ID, "t")
		for round := range 4 {
			ap, err := st.Approvals().Create(ctx, store.Approval{WorkspaceID: a.ID, TaskID: task.ID, Capability: store.CapabilityHigh, Summary: "s"})
			if err != nil {
				t.Fatal(err)
			}
			var (
				wg      sync.WaitGroup
				mu      sync.Mutex
				winners []bool
			)
			results := make([]error, 2)
			for i := range 2 {
				approve := i == 0 || round%2 == 0 // rounds alternate: same decision, opposite decisions
				wg.Go(func() {
					_, decided, err := st.Approvals().Decide(ctx, a.ID, ap.ID, approve, fmt.Sprint("u", i), time.Now())
					results[i] = err
					if decided {
						mu.Lock()
						winners = append(winners, approve)
						mu.Unlock()
					}
					if err != nil && !errors.Is(err, store.ErrConflict) {
						t.Errorf("Decide = %v, want nil or ErrConflict", err)
					}
				})
			}
			wg.Wait()
			if len(winners) != 1 {
				t.Fatalf("round %d: %d decisions made, want exactly one", round, len(winners))
			}
			got, err := st.Approvals().Get(ctx, a.ID, ap.ID)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]store.ApprovalStatus{true: store.ApprovalApproved, false: store.ApprovalRejected}[winners[0]]; got.Status != want {
				t.Errorf("round %d: status %s, want the winner's %s", round, got.Status, want)
			}
			if round%2 == 0 && (results[0] != nil || results[1] != nil) {
				t.Errorf("round %d: agreeing decisions gave errors %v", round, results)
			}
			if round%2 == 1 && (results[0] == nil) == (results[1] == nil) {
				t.Errorf("round %d: opposite decisions gave errors %v; want exactly one conflict", round, results)
			}
		}
		if evs, err := st.Tasks().Events(ctx, a.ID, task.ID, 0, 0); err != nil || len(evs) != 1+4 {
			t.Errorf("task events = %d, %v; want the created event and one decision per round, 5", len(evs), err)
		}
	})
}

func testSteps(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("RecordFinish", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		task := mustTask(t, st, a.ID, "schedule")
		run := mustRun(t, st, a.ID)
		in := store.TaskStep{WorkspaceID: a.ID, TaskID: task.ID, RunID: run.ID, IdempotencyKey: task.ID + "/caldav.create#1",
			Tool: "caldav_create_event", Capability: store.CapabilityMedium,
			Input: json.RawMessage(`{"title": "会議", "start": "2027-01-02T10:00:00+09:00"}`)}
		before := time.Now()
		rec, err := st.Steps().Record(ctx, in)
		if err != nil {
			t.Fatalf("Record = %v", err)
		}
		after := time.Now()
		want := in
		want.Seq, want.Status = 1, store.StepPending
		if diff := cmp.Diff(want, rec, jsonEqual, cmpIgnore("ID", "CreatedAt")); diff != "" {
			t.Errorf("Record (-want +got):\n%s", diff)
		}
		checkStamp(t, "CreatedAt", rec.CreatedAt, before, after)
		if got, err := st.Steps().Get(ctx, a.ID, rec.ID); err != nil || !cmp.Equal(rec, got, jsonEqual) {
			t.Errorf("Get = %+v, %v; want %+v", got, err, rec)
		}
		if got, err := st.Steps().GetByKey(ctx, a.ID, in.IdempotencyKey); err != nil || got.ID != rec.ID {
			t.Errorf("GetByKey = %s, %v; want %s", got.ID, err, rec.ID)
		}
		_, err = st.Steps().Get(ctx, b.ID, rec.ID)
		wantErr(t, "Get from another workspace", err, store.ErrNotFound)
		_, err = st.Steps().GetByKey(ctx, b.ID, in.IdempotencyKey)
		wantErr(t, "GetByKey from another workspace", err, store.ErrNotFound)
		_, err = st.Steps().Finish(ctx, b.ID, rec.ID, store.StepResult{Status: store.StepOK})
		wantErr(t, "Finish from another workspace", err, store.ErrNotFound)

		fin, err := st.Steps().Finish(ctx, a.ID, rec.ID, store.StepResult{Status: store.StepOK,
			Output: json.RawMessage(`{"href": "/cal/1.ics"}`), Undo: json.RawMessage(`{"delete": "/cal/1.ics"}`)})
		if err != nil {
			t.Fatalf("Finish = %v", err)
		}
		if fin.Status != store.StepOK || fin.FinishedAt == nil || fin.FinishedAt.Before(rec.CreatedAt) ||
			!cmp.Equal(fin.Output, json.RawMessage(`{"href":"/cal/1.ics"}`), jsonEqual) ||
			!cmp.Equal(fin.Undo, json.RawMessage(`{"delete":"/cal/1.ics"}`), jsonEqual) {
			t.Errorf("Finish = %+v; want ok with output, undo and FinishedAt", fin)
		}
		// Evidence is written once.
		got, err := st.Steps().Finish(ctx, a.ID, rec.ID, store.StepResult{Status: store.StepError, Error: "rewritten", Output: json.RawMessage(`{}`)})
		wantErr(t, "Finish of a finished step", err, store.ErrConflict)
		if diff := cmp.Diff(fin, got, jsonEqual); diff != "" {
			t.Errorf("Finish of a finished step returned (-stored +got):\n%s", diff)
		}
		if stored, _ := st.Steps().Get(ctx, a.ID, rec.ID); !cmp.Equal(fin, stored, jsonEqual) {
			t.Errorf("finished step changed by a second Finish: %+v", stored)
		}

		// An undo recorded up front is kept over the one Finish brings.
		withUndo, err := st.Steps().Record(ctx, store.TaskStep{WorkspaceID: a.ID, TaskID: task.ID, IdempotencyKey: "post#1",
			Undo: json.RawMessage(`{"remove": "post-1"}`)})
		if err != nil || withUndo.Seq != 2 || withUndo.Capability != store.CapabilityLow {
			t.Fatalf("Record #2 = seq %d, capability %s, %v; want 2, low", withUndo.Seq, withUndo.Capability, err)
		}
		fin2, err := st.Steps().Finish(ctx, a.ID, withUndo.ID, store.StepResult{Status: store.StepError, Error: "timeout", Undo: json.RawMessage(`{"other": 1}`)})
		if err != nil || fin2.Error != "timeout" || fin2.Output != nil || !cmp.Equal(fin2.Undo, json.RawMessage(`{"remove":"post-1"}`), jsonEqual) {
			t.Errorf("Finish #2 = %+v, %v; want error timeout, no output, the recorded undo", fin2, err)
		}
		// A step recorded finished (a step skipped for want of an undo).
		skipped, err := st.Steps().Record(ctx, store.TaskStep{WorkspaceID: a.ID, TaskID: task.ID, IdempotencyKey: "undo-post#1",
			Status: store.StepSkipped, Error: "no undo declared"})
		if err != nil || skipped.Seq != 3 || skipped.FinishedAt == nil {
			t.Errorf("Record skipped = seq %d, finished %v, %v; want 3, stamped", skipped.Seq, skipped.FinishedAt, err)
		}
		_, err = st.Steps().Finish(ctx, a.ID, skipped.ID, store.StepResult{Status: store.StepOK})
		wantErr(t, "Finish of a step recorded skipped", err, store.ErrConflict)

		// Compensation marks the ok step and keeps its evidence.
		_, err = st.Steps().Compensate(ctx, b.ID, rec.ID)
		wantErr(t, "Compensate from another workspace", err, store.ErrNotFound)
		comp, err := st.Steps().Compensate(ctx, a.ID, rec.ID)
		if err != nil {
			t.Fatalf("Compensate = %v", err)
		}
		wantComp := fin
		wantComp.Status = store.StepCompensated
		if diff := cmp.Diff(wantComp, comp, jsonEqual); diff != "" {
			t.Errorf("Compensate (-want +got):\n%s", diff)
		}
		for _, id := range []string{rec.ID, withUndo.ID, skipped.ID} {
			got, err := st.Steps().Compensate(ctx, a.ID, id)
			wantErr(t, "Compensate of a step not ok", err, store.ErrConflict)
			if got.ID != id {
				t.Errorf("Compensate of a step not ok returned %q, want the stored %s", got.ID, id)
			}
		}
		_, err = st.Steps().Finish(ctx, a.ID, rec.ID, store.StepResult{Status: store.StepOK})
		wantErr(t, "Finish of a compensated step", err, store.ErrConflict)

		list, err := st.Steps().List(ctx, a.ID, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, s := range list {
			keys = append(keys, fmt.Sprintf("%d %s %s", s.Seq, s.IdempotencyKey, s.Status))
		}
		if diff := cmp.Diff([]string{"1 " + in.IdempotencyKey + " compensated", "2 post#1 error", "3 undo-post#1 skipped"}, keys); diff != "" {
			t.Errorf("List (-want +got):\n%s", diff)
		}
		_, err = st.Steps().List(ctx, b.ID, task.ID)
		wantErr(t, "List from another workspace", err, store.ErrNotFound)
		if empty, err := st.Steps().List(ctx, a.ID, mustTask(t, st, a.ID, "idle").ID); err != nil || len(empty) != 0 {
			t.Errorf("List of a task without steps = %v, %v; want none", empty, err)
		}
	})

	t.Run("IdempotencyKey", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		task := mustTask(t, st, a.ID, "t")
		first, err := st.Steps().Record(ctx, store.TaskStep{WorkspaceID: a.ID, TaskID: task.ID, IdempotencyKey: "effect-1", Tool: "send"})
		if err != nil {
			t.Fatal(err)
		}
		done, err := st.Steps().Finish(ctx, a.ID, first.ID, store.StepResult{Status: store.StepOK, Output: json.RawMessage(`{"sent": true}`)})
		if err != nil {
			t.Fatal(err)
		}
		// A resumed executor records the same effect again: it gets the
		// stored step, which says the effect was done.
		got, err := st.Steps().Record(ctx, store.TaskStep{WorkspaceID: a.ID, TaskID: task.ID, IdempotencyKey: "effect-1", Tool: "send"})
		wantErr(t, "Record of a key recorded already", err, store.ErrConflict)
		if diff := cmp.Diff(done, got, jsonEqual); diff != "" {
			t.Errorf("Record of a key recorded already returned (-stored +got):\n%s", diff)
		}
		// Per workspace, whichever task: another task of a conflicts, b
		// does not.
		_, err = st.Steps().Record(ctx, store.TaskStep{WorkspaceID: a.ID, TaskID: mustTask(t, st, a.ID, "t2").ID, IdempotencyKey: "effect-1"})
		wantErr(t, "Record of the key for another task", err, store.ErrConflict)
		if _, err := st.Steps().Record(ctx, store.TaskStep{WorkspaceID: b.ID, TaskID: mustTask(t, st, b.ID, "t").ID, IdempotencyKey: "effect-1"}); err != nil {
			t.Errorf("Record of the key in another workspace = %v", err)
		}
		// The refused records took no seq.
		next, err := st.Steps().Record(ctx, store.TaskStep{WorkspaceID: a.ID, TaskID: task.ID, IdempotencyKey: "effect-2"})
		if err != nil || next.Seq != 2 {
			t.Errorf("Record after conflicts = seq %d, %v; want 2", next.Seq, err)
		}

		other, otherRun := mustTask(t, st, b.ID, "o"), mustRun(t, st, b.ID)
		for name, s := range map[string]store.TaskStep{
			"a task of another workspace": {WorkspaceID: a.ID, TaskID: other.ID, IdempotencyKey: "x"},
			"an unknown task":             {WorkspaceID: a.ID, TaskID: store.NewID(), IdempotencyKey: "x"},
			"a run of another workspace":  {WorkspaceID: a.ID, TaskID: task.ID, RunID: otherRun.ID, IdempotencyKey: "x"},
		} {
			_, err := st.Steps().Record(ctx, s)
			wantErr(t, "Record with "+name, err, store.ErrNotFound)
		}
		for name, s := range map[string]store.TaskStep{
			"no key":              {WorkspaceID: a.ID, TaskID: task.ID},
			"no task":             {WorkspaceID: a.ID, IdempotencyKey: "x"},
			"pending with output": {WorkspaceID: a.ID, TaskID: task.ID, IdempotencyKey: "x", Output: json.RawMessage(`1`)},
			"bad input":           {WorkspaceID: a.ID, TaskID: task.ID, IdempotencyKey: "x", Input: json.RawMessage(`{`)},
			"unknown status":      {WorkspaceID: a.ID, TaskID: task.ID, IdempotencyKey: "x", Status: "done"},
			"unknown capability":  {WorkspaceID: a.ID, TaskID: task.ID, IdempotencyKey: "x", Capability: "max"},
		} {
			_, err := st.Steps().Record(ctx, s)
			wantErr(t, "Record with "+name, err, store.ErrInvalid)
		}
		for _, status := range []store.StepStatus{"", store.StepPending, store.StepCompensated, "done"} {
			_, err := st.Steps().Finish(ctx, a.ID, next.ID, store.StepResult{Status: status})
			wantErr(t, fmt.Sprintf("Finish %q", status), err, store.ErrInvalid)
		}
		if list, _ := st.Steps().List(ctx, a.ID, task.ID); len(list) != 2 || list[1].Status != store.StepPending {
			t.Errorf("steps after refused writes = %+v; want two, the second pending", list)
		}
	})

	t.Run("ConcurrentRecord", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		task := mustTask(t, st, a.ID, "t")
		const n = 8
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			inserted []string
			returned []string
		)
		for i := range n {
			wg.Go(func() {
				s, err := st.Steps().Record(ctx, store.TaskStep{WorkspaceID: a.ID, TaskID: task.ID, IdempotencyKey: "charge-card",
					Tool: fmt.Sprint("executor-", i)})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					inserted = append(inserted, s.ID)
				case errors.Is(err, store.ErrConflict):
					returned = append(returned, s.ID)
				default:
					t.Errorf("Record = %v, want nil or ErrConflict", err)
				}
			})
		}
		wg.Wait()
		if len(inserted) != 1 {
			t.Fatalf("%d executors recorded one key at once: %d inserted, want exactly one", n, len(inserted))
		}
		for _, id := range returned {
			if id != inserted[0] {
				t.Errorf("a refused Record returned step %q, want the stored %s", id, inserted[0])
			}
		}
		list, err := st.Steps().List(ctx, a.ID, task.ID)
		if err != nil || len(list) != 1 || list[0].Seq != 1 {
			t.Errorf("steps = %+v, %v; want one, seq 1", list, err)
		}
		// Concurrent finishes of the one step: exactly one writes.
		var wins int
		for i := range n {
			wg.Go(func() {
				_, err := st.Steps().Finish(ctx, a.ID, inserted[0], store.StepResult{Status: store.StepOK, Output: json.RawMessage(fmt.Sprint(i))})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case !errors.Is(err, store.ErrConflict):
					t.Errorf("Finish = %v, want nil or ErrConflict", err)
				}
			})
		}
		wg.Wait()
		if wins != 1 {
			t.Errorf("%d concurrent finishes wrote %d times, want once", n, wins)
		}
	})
}

func testNotifications(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateGetList", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		task := mustTask(t, st, a.ID, "t")
		sent := time.Now()
		in := store.Notification{WorkspaceID: a.ID, TaskID: task.ID, Target: "U4af4980629", Kind: "approval",
			Payload: json.RawMessage(`{"approval_id": "ap1", "altText": "承認してください"}`), Error: "ignored", SentAt: &sent}
		before := time.Now()
		n, err := st.Notifications().Create(ctx, in)
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		after := time.Now()
		want := in
		want.Channel, want.Status, want.Error, want.SentAt = "line", store.NotificationPending, "", nil
		if diff := cmp.Diff(want, n, jsonEqual, cmpIgnore("ID", "CreatedAt")); diff != "" {
			t.Errorf("Create (-want +got):\n%s", diff)
		}
		checkStamp(t, "CreatedAt", n.CreatedAt, before, after)
		if got, err := st.Notifications().Get(ctx, a.ID, n.ID); err != nil || !cmp.Equal(n, got, jsonEqual) {
			t.Errorf("Get = %+v, %v; want %+v", got, err, n)
		}
		_, err = st.Notifications().Get(ctx, b.ID, n.ID)
		wantErr(t, "Get from another workspace", err, store.ErrNotFound)
		_, err = st.Notifications().Create(ctx, store.Notification{WorkspaceID: b.ID, TaskID: task.ID, Target: "U", Kind: "result"})
		wantErr(t, "Create about a task of another workspace", err, store.ErrNotFound)
		_, err = st.Notifications().Create(ctx, store.Notification{WorkspaceID: store.NewID(), Target: "U", Kind: "result"})
		wantErr(t, "Create in an unknown workspace", err, store.ErrNotFound)
		for name, bad := range map[string]store.Notification{
			"no target":   {WorkspaceID: a.ID, Kind: "result"},
			"no kind":     {WorkspaceID: a.ID, Target: "U"},
			"sent status": {WorkspaceID: a.ID, Target: "U", Kind: "result", Status: store.NotificationSent},
			"bad payload": {WorkspaceID: a.ID, Target: "U", Kind: "result", Payload: json.RawMessage(`{`)},
		} {
			_, err := st.Notifications().Create(ctx, bad)
			wantErr(t, "Create with "+name, err, store.ErrInvalid)
		}
		free, err := st.Notifications().Create(ctx, store.Notification{WorkspaceID: a.ID, Channel: "mail", Target: "sato@example.com", Kind: "result"})
		if err != nil || free.Channel != "mail" || free.TaskID != "" {
			t.Fatalf("Create without a task = %+v, %v", free, err)
		}
		if _, err := st.Notifications().MarkSent(ctx, a.ID, free.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		ids := func(f store.NotificationFilter) []string {
			t.Helper()
			list, err := st.Notifications().List(ctx, a.ID, f)
			if err != nil {
				t.Fatalf("List(%+v) = %v", f, err)
			}
			var out []string
			for _, n := range list {
				out = append(out, n.ID)
			}
			return out
		}
		for _, c := range []struct {
			f    store.NotificationFilter
			want []string
		}{
			{store.NotificationFilter{}, []string{free.ID, n.ID}},
			{store.NotificationFilter{Limit: 1}, []string{free.ID}},
			{store.NotificationFilter{Status: store.NotificationPending}, []string{n.ID}},
			{store.NotificationFilter{TaskID: task.ID}, []string{n.ID}},
		} {
			if diff := cmp.Diff(c.want, ids(c.f)); diff != "" {
				t.Errorf("List(%+v) (-want +got):\n%s", c.f, diff)
			}
		}
		if list, err := st.Notifications().List(ctx, b.ID, store.NotificationFilter{}); err != nil || len(list) != 0 {
			t.Errorf("List of b = %d, %v; want none", len(list), err)
		}
	})

	t.Run("QueuedByTransition", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		task := mustTask(t, st, a.ID, "answer me")
		queued := func() []store.Notification {
			t.Helper()
			list, err := st.Notifications().List(ctx, a.ID, store.NotificationFilter{TaskID: task.ID})
			if err != nil {
				t.Fatal(err)
			}
			return list
		}
		answer := &store.Notification{Target: "U4af4980629", Kind: "result", Payload: json.RawMessage(`{"text": "済みました"}`)}
		// Refused transitions queue nothing: a status the task is not in,
		// another workspace, a bad notification, one naming another task.
		_, err := st.Tasks().Transition(ctx, a.ID, task.ID, []store.TaskStatus{store.TaskRunning}, store.TaskDone, store.TaskUpdate{Notification: answer})
		wantErr(t, "Transition from a status the task is not in", err, store.ErrConflict)
		_, err = st.Tasks().Transition(ctx, b.ID, task.ID, []store.TaskStatus{store.TaskOpen}, store.TaskDone, store.TaskUpdate{Notification: answer})
		wantErr(t, "Transition from another workspace", err, store.ErrNotFound)
		for name, bad := range map[string]*store.Notification{
			"no target":    {Kind: "result"},
			"bad payload":  {Target: "U", Kind: "result", Payload: json.RawMessage(`{`)},
			"another task": {Target: "U", Kind: "result", TaskID: store.NewID()},
			"another ws":   {Target: "U", Kind: "result", WorkspaceID: b.ID},
		} {
			_, err := st.Tasks().Transition(ctx, a.ID, task.ID, []store.TaskStatus{store.TaskOpen}, store.TaskDone, store.TaskUpdate{Notification: bad})
			wantErr(t, "Transition with a notification with "+name, err, store.ErrInvalid)
		}
		if got, _ := st.Tasks().Get(ctx, a.ID, task.ID); got.Status != store.TaskOpen || len(queued()) != 0 {
			t.Fatalf("refused transitions left the task %s with %d notifications; want open with none", got.Status, len(queued()))
		}

		before := time.Now()
		done, err := st.Tasks().Transition(ctx, a.ID, task.ID, []store.TaskStatus{store.TaskOpen}, store.TaskDone,
			store.TaskUpdate{Event: &store.TaskEvent{Type: store.TaskEventCompleted, Actor: "system:task"}, Notification: answer})
		if err != nil {
			t.Fatalf("Transition with a notification = %v", err)
		}
		list := queued()
		if len(list) != 1 {
			t.Fatalf("%d notifications after the transition, want 1", len(list))
		}
		n := list[0]
		want := store.Notification{ID: n.ID, WorkspaceID: a.ID, TaskID: task.ID, Channel: "line", Target: "U4af4980629", Kind: "result",
			Payload: answer.Payload, Status: store.NotificationPending}
		if diff := cmp.Diff(want, n, jsonEqual, cmpIgnore("CreatedAt")); diff != "" {
			t.Errorf("queued notification (-want +got):\n%s", diff)
		}
		checkStamp(t, "CreatedAt", n.CreatedAt, before, time.Now())
		if n.ID == "" || answer.ID != "" || answer.WorkspaceID != "" {
			t.Errorf("notification id %q; the caller's notification was changed: %+v", n.ID, answer)
		}
		if due, err := st.Notifications().Due(ctx, time.Now(), 100); err != nil || !slices.ContainsFunc(due, func(d store.Notification) bool { return d.ID == n.ID }) {
			t.Errorf("Due = %d, %v; want the queued notification among them", len(due), err)
		}
		if done.Status != store.TaskDone || len(eventLines(t, st, a.ID, task.ID)) != 2 {
			t.Errorf("task %s with events %v; want done with its completed event", done.Status, eventLines(t, st, a.ID, task.ID))
		}
		// A repeated settle conflicts and queues no second answer.
		_, err = st.Tasks().Transition(ctx, a.ID, task.ID, []store.TaskStatus{store.TaskOpen, store.TaskRunning}, store.TaskDone, store.TaskUpdate{Notification: answer})
		wantErr(t, "second settle", err, store.ErrConflict)
		if len(queued()) != 1 {
			t.Errorf("%d notifications after a conflicting settle, want 1", len(queued()))
		}
	})

	t.Run("DueAndDelivery", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		t0 := store.Timestamp(time.Now().Add(time.Hour))
		mk := func(ws, target string, sendAt *time.Time) store.Notification {
			t.Helper()
			n, err := st.Notifications().Create(ctx, store.Notification{WorkspaceID: ws, Target: target, Kind: "reminder", SendAt: sendAt})
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		at := func(d time.Duration) *time.Time { x := t0.Add(d); return &x }
		now1 := mk(a.ID, "now-a", nil)
		now2 := mk(b.ID, "now-b", nil)
		soon := mk(a.ID, "at t0", at(0))
		mk(b.ID, "in a day", at(24*time.Hour))
		targets := func(at time.Time, limit int) []string {
			t.Helper()
			due, err := st.Notifications().Due(ctx, at, limit)
			if err != nil {
				t.Fatalf("Due = %v", err)
			}
			var out []string
			for _, n := range due {
				out = append(out, n.Target)
			}
			return out
		}
		if diff := cmp.Diff([]string{"now-a", "now-b"}, targets(time.Now(), 0)); diff != "" {
			t.Errorf("Due now (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"now-a", "now-b", "at t0"}, targets(t0, 0)); diff != "" {
			t.Errorf("Due at t0 (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"now-a"}, targets(t0, 1)); diff != "" {
			t.Errorf("Due at t0, limit 1 (-want +got):\n%s", diff)
		}

		sentAt := t0.Add(time.Second)
		got, err := st.Notifications().MarkSent(ctx, a.ID, now1.ID, sentAt)
		if err != nil || got.Status != store.NotificationSent || got.SentAt == nil || !got.SentAt.Equal(sentAt) {
			t.Fatalf("MarkSent = %+v, %v; want sent at %v", got, err, sentAt)
		}
		// A second sender reporting the same delivery: no error, unchanged.
		again, err := st.Notifications().MarkSent(ctx, a.ID, now1.ID, sentAt.Add(time.Minute))
		if err != nil || !cmp.Equal(got, again, jsonEqual) {
			t.Errorf("MarkSent again = %+v, %v; want the stored row, no error", again, err)
		}
		_, err = st.Notifications().MarkFailed(ctx, a.ID, now1.ID, "too late")
		wantErr(t, "MarkFailed of a sent notification", err, store.ErrConflict)
		_, err = st.Notifications().MarkSent(ctx, a.ID, now2.ID, sentAt)
		wantErr(t, "MarkSent from another workspace", err, store.ErrNotFound)
		failed, err := st.Notifications().MarkFailed(ctx, b.ID, now2.ID, "LINE: 400 invalid target")
		if err != nil || failed.Status != store.NotificationFailed || failed.Error != "LINE: 400 invalid target" || failed.SentAt != nil {
			t.Errorf("MarkFailed = %+v, %v", failed, err)
		}
		got, err = st.Notifications().MarkSent(ctx, b.ID, now2.ID, sentAt)
		wantErr(t, "MarkSent of a failed notification", err, store.ErrConflict)
		if got.Status != store.NotificationFailed {
			t.Errorf("MarkSent of a failed notification returned %s, want the stored failed row", got.Status)
		}
		_, err = st.Notifications().MarkFailed(ctx, a.ID, soon.ID, "")
		wantErr(t, "MarkFailed without an error", err, store.ErrInvalid)
		if diff := cmp.Diff([]string{"at t0"}, targets(t0, 0)); diff != "" {
			t.Errorf("Due after delivery (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"at t0", "in a day"}, targets(t0.Add(48*time.Hour), 0)); diff != "" {
			t.Errorf("Due two days on (-want +got):\n%s", diff)
		}
		_, err = st.Notifications().Due(ctx, time.Time{}, 0)
		wantErr(t, "Due at the zero time", err, store.ErrInvalid)
	})

	t.Run("ConcurrentMarkSent", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		n, err := st.Notifications().Create(ctx, store.Notification{WorkspaceID: a.ID, Target: "U", Kind: "result"})
		if err != nil {
			t.Fatal(err)
		}
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			stamp = map[time.Time]int{}
		)
		for i := range 6 {
			wg.Go(func() {
				got, err := st.Notifications().MarkSent(ctx, a.ID, n.ID, time.Now().Add(time.Duration(i)*time.Minute))
				if err != nil {
					t.Errorf("MarkSent = %v", err)
					return
				}
				mu.Lock()
				stamp[*got.SentAt]++
				mu.Unlock()
			})
		}
		wg.Wait()
		if len(stamp) != 1 {
			t.Errorf("concurrent MarkSent returned %d different sent times, want the one stored: %v", len(stamp), stamp)
		}
	})
}
