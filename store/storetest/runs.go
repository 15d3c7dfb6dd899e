package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/store"
)

// testDefinition is a workflow definition as a run pins it.
var testDefinition = json.RawMessage(`{"nodes": [{"id": "start", "type": "input"}, {"id": "out", "type": "output"}], "edges": [["start", "out"]]}`)

func mustRun(t *testing.T, st store.Store, workspaceID string) store.Run {
	t.Helper()
	r, err := st.Runs().Create(t.Context(), store.Run{WorkspaceID: workspaceID, Definition: testDefinition,
		Input: json.RawMessage(`{"question": "why?"}`)})
	if err != nil {
		t.Fatalf("Create run: %v", err)
	}
	return r
}

// mustClaim claims the run for owner and fails t when refused.
func mustClaim(t *testing.T, st store.Store, r store.Run, owner string, ttl time.Duration) store.Run {
	t.Helper()
	got, err := st.Runs().Claim(t.Context(), r.WorkspaceID, r.ID, owner, ttl, false)
	if err != nil {
		t.Fatalf("Claim(%s) = %v", owner, err)
	}
	return got
}

func testRuns(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateGet", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		runs := st.Runs()
		until := time.Now().Add(time.Hour)
		in := store.Run{
			WorkspaceID:     a.ID,
			WorkflowID:      store.NewID(),
			WorkflowVersion: 3,
			Definition:      testDefinition,
			Input:           json.RawMessage(`{"question": "ça va ?", "n": [1, 2.5, null]}`),
			LeaseOwner:      "ignored", // a lease is only taken with Claim
			LeaseUntil:      &until,
		}
		before := time.Now()
		created, err := runs.Create(ctx, in)
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		after := time.Now()
		want := in
		want.Status = store.RunQueued
		want.LeaseOwner, want.LeaseUntil = "", nil
		if diff := cmp.Diff(want, created, jsonEqual, ignoreRunStamps); diff != "" {
			t.Errorf("Create mismatch (-want +created):\n%s", diff)
		}
		if created.ID == "" {
			t.Error("Create returned no ID")
		}
		checkStamp(t, "CreatedAt", created.CreatedAt, before, after)
		if !created.UpdatedAt.Equal(created.CreatedAt) || created.FinishedAt != nil {
			t.Errorf("new run UpdatedAt %v FinishedAt %v, want CreatedAt and nil", created.UpdatedAt, created.FinishedAt)
		}
		got, err := runs.Get(ctx, a.ID, created.ID)
		if err != nil {
			t.Fatalf("Get = %v", err)
		}
		if diff := cmp.Diff(created, got, jsonEqual); diff != "" {
			t.Errorf("Get differs from Create (-created +got):\n%s", diff)
		}

		// A run of an unstored definition, with no input, blocked at once by
		// an input hook.
		blocked, err := runs.Create(ctx, store.Run{WorkspaceID: a.ID, Definition: testDefinition,
			Status: store.RunBlocked, Error: "input matched block_pattern"})
		if err != nil {
			t.Fatalf("Create(blocked) = %v", err)
		}
		if blocked.FinishedAt == nil || !blocked.FinishedAt.Equal(blocked.CreatedAt) {
			t.Errorf("run created blocked: FinishedAt = %v, want CreatedAt %v", blocked.FinishedAt, blocked.CreatedAt)
		}
		got, err = runs.Get(ctx, a.ID, blocked.ID)
		if err != nil {
			t.Fatalf("Get(blocked) = %v", err)
		}
		if diff := cmp.Diff(blocked, got, jsonEqual); diff != "" {
			t.Errorf("Get(blocked) (-created +got):\n%s", diff)
		}
		if got.WorkflowID != "" || got.WorkflowVersion != 0 || got.Input != nil || got.Output != nil {
			t.Errorf("Get(blocked) workflow %q v%d input %s output %s; want all empty",
				got.WorkflowID, got.WorkflowVersion, got.Input, got.Output)
		}

		_, err = runs.Get(ctx, b.ID, created.ID)
		wantErr(t, "Get(b, run of a)", err, store.ErrNotFound)
		_, err = runs.Get(ctx, a.ID, store.NewID())
		wantErr(t, "Get(unknown)", err, store.ErrNotFound)
	})

	// The trace context a run was started with is what every read and the
	// executor's Claim return, so that whichever
	// process executes the run continues the starting request's trace.
	t.Run("TraceContext", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		runs := st.Runs()
		const (
			tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
			ts = "vendor=opaque,other=1"
		)
		r, err := runs.Create(ctx, store.Run{WorkspaceID: a.ID, Definition: testDefinition, TraceParent: tp, TraceState: ts})
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		plain := mustRun(t, st, a.ID)
		check := func(what string, got store.Run) {
			t.Helper()
			if got.TraceParent != tp || got.TraceState != ts {
				t.Errorf("%s: trace context %q %q, want %q %q", what, got.TraceParent, got.TraceState, tp, ts)
			}
		}
		check("Create", r)
		got, err := runs.Get(ctx, a.ID, r.ID)
		if err != nil {
			t.Fatalf("Get = %v", err)
		}
		check("Get", got)
		list, err := runs.List(ctx, a.ID, store.RunFilter{})
		if err != nil {
			t.Fatalf("List = %v", err)
		}
		for _, l := range list {
			switch l.ID {
			case r.ID:
				check("List", l)
			case plain.ID:
				if l.TraceParent != "" || l.TraceState != "" {
					t.Errorf("List: a run created without a trace context has %q %q", l.TraceParent, l.TraceState)
				}
			}
		}
		live, err := runs.Live(ctx)
		if err != nil {
			t.Fatalf("Live = %v", err)
		}
		found := false
		for _, l := range live {
			if l.ID == r.ID {
				found = true
				check("Live", l)
			}
		}
		if !found {
			t.Errorf("Live lacks the queued run %s", r.ID)
		}
		claimed, err := runs.Claim(ctx, a.ID, r.ID, "exec-1", time.Hour, false)
		if err != nil {
			t.Fatalf("Claim = %v", err)
		}
		check("Claim", claimed)
	})

	t.Run("CreateErrors", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		runs := st.Runs()
		ok := store.Run{WorkspaceID: a.ID, Definition: testDefinition}
		if _, err := runs.Create(ctx, ok); err != nil {
			t.Fatalf("Create = %v", err)
		}
		dup := ok
		dup.ID = store.NewID()
		if _, err := runs.Create(ctx, dup); err != nil {
			t.Fatalf("Create(with id) = %v", err)
		}
		stored, err := runs.Get(ctx, a.ID, dup.ID)
		if err != nil {
			t.Fatal(err)
		}
		// A second create of the id (another process naming the same
		// run) is refused and changes nothing, even from another
		// workspace.
		again := dup
		again.Input, again.Status, again.TriggerID = json.RawMessage(`{"second":true}`), store.RunSucceeded, "t2"
		_, err = runs.Create(ctx, again)
		wantErr(t, "Create(duplicate id)", err, store.ErrConflict)
		elsewhere := again
		elsewhere.WorkspaceID = mustWorkspace(t, st, "elsewhere").ID
		_, err = runs.Create(ctx, elsewhere)
		wantErr(t, "Create(duplicate id, other workspace)", err, store.ErrConflict)
		if got, err := runs.Get(ctx, a.ID, dup.ID); err != nil || !cmp.Equal(stored, got, jsonEqual) {
			t.Errorf("after duplicate creates, Get = %+v, %v; want the first run unchanged: %+v", got, err, stored)
		}
		orphan := ok
		orphan.WorkspaceID = store.NewID()
		_, err = runs.Create(ctx, orphan)
		wantErr(t, "Create(unknown workspace)", err, store.ErrNotFound)
		for name, mutate := range map[string]func(*store.Run){
			"no workspace":     func(r *store.Run) { r.WorkspaceID = "" },
			"bad status":       func(r *store.Run) { r.Status = "paused" },
			"no definition":    func(r *store.Run) { r.Definition = nil },
			"bad definition":   func(r *store.Run) { r.Definition = json.RawMessage(`{`) },
			"bad input":        func(r *store.Run) { r.Input = json.RawMessage(`{"a"}`) },
			"bad output":       func(r *store.Run) { r.Output = json.RawMessage(`nope`) },
			"negative version": func(r *store.Run) { r.WorkflowVersion = -1 },
		} {
			bad := ok
			mutate(&bad)
			_, err := runs.Create(ctx, bad)
			wantErr(t, "Create("+name+")", err, store.ErrInvalid)
		}
	})

	t.Run("ListLive", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		runs := st.Runs()
		wf := store.NewID()
		create := func(ws store.Workspace, workflowID string) store.Run {
			t.Helper()
			r, err := runs.Create(ctx, store.Run{WorkspaceID: ws.ID, WorkflowID: workflowID, Definition: testDefinition})
			if err != nil {
				t.Fatalf("Create = %v", err)
			}
			return r
		}
		transition := func(r store.Run, to store.RunStatus) store.Run {
			t.Helper()
			r, err := runs.Transition(ctx, r.WorkspaceID, r.ID, []store.RunStatus{r.Status}, to, store.RunUpdate{})
			if err != nil {
				t.Fatalf("Transition(%s → %s) = %v", r.Status, to, err)
			}
			return r
		}
		queuedA := create(a, wf)                                         // queued
		runningB := mustClaim(t, st, create(b, ""), "exec-1", time.Hour) // running
		waitingA := transition(mustClaim(t, st, create(a, wf), "exec-1", time.Hour), store.RunWaiting)
		doneA := transition(mustClaim(t, st, create(a, ""), "exec-1", time.Hour), store.RunSucceeded)
		queuedB := create(b, wf)                                         // queued
		runningA := mustClaim(t, st, create(a, ""), "exec-2", time.Hour) // running
		taskID := store.NewID()
		taskA, err := runs.Create(ctx, store.Run{WorkspaceID: a.ID, TaskID: taskID, Executor: "claude-code", Definition: testDefinition})
		if err != nil || taskA.TaskID != taskID || taskA.Executor != "claude-code" {
			t.Fatalf("Create(task run) = %+v, %v; want task_id %s", taskA, err, taskID)
		}
		if got, err := runs.Get(ctx, a.ID, taskA.ID); err != nil || got.TaskID != taskID {
			t.Fatalf("Get(task run) = %+v, %v; want task_id %s", got, err, taskID)
		}

		list, err := runs.List(ctx, a.ID, store.RunFilter{})
		if err != nil {
			t.Fatalf("List(a) = %v", err)
		}
		if diff := cmp.Diff([]store.Run{taskA, runningA, doneA, waitingA, queuedA}, list, jsonEqual); diff != "" {
			t.Errorf("List(a), want newest first (-want +got):\n%s", diff)
		}
		for name, tc := range map[string]struct {
			f    store.RunFilter
			want []store.Run
		}{
			"status":          {store.RunFilter{Status: store.RunWaiting}, []store.Run{waitingA}},
			"workflow":        {store.RunFilter{WorkflowID: wf}, []store.Run{waitingA, queuedA}},
			"workflow+status": {store.RunFilter{WorkflowID: wf, Status: store.RunQueued}, []store.Run{queuedA}},
			"limit":           {store.RunFilter{Limit: 2}, []store.Run{taskA, runningA}},
			"task":            {store.RunFilter{TaskID: taskID}, []store.Run{taskA}},
			"other task":      {store.RunFilter{TaskID: store.NewID()}, nil},
			"executor":        {store.RunFilter{Executor: "claude-code", Status: store.RunQueued}, []store.Run{taskA}},
			"other executor":  {store.RunFilter{Executor: "codex"}, nil},
			"nothing":         {store.RunFilter{Status: store.RunFailed}, nil},
		} {
			got, err := runs.List(ctx, a.ID, tc.f)
			if err != nil {
				t.Errorf("List(a, %s) = %v", name, err)
				continue
			}
			if diff := cmp.Diff(tc.want, got, jsonEqual); diff != "" {
				t.Errorf("List(a, %s) (-want +got):\n%s", name, diff)
			}
		}
		list, err = runs.List(ctx, b.ID, store.RunFilter{})
		if err != nil {
			t.Fatalf("List(b) = %v", err)
		}
		if diff := cmp.Diff([]store.Run{queuedB, runningB}, list, jsonEqual); diff != "" {
			t.Errorf("List(b), want only b's runs (-want +got):\n%s", diff)
		}
		if list, err := runs.List(ctx, mustWorkspace(t, st, "c").ID, store.RunFilter{}); err != nil || len(list) != 0 {
			t.Errorf("List(c) = %+v, %v; want none", list, err)
		}

		live, err := runs.Live(ctx)
		if err != nil {
			t.Fatalf("Live = %v", err)
		}
		if diff := cmp.Diff([]store.Run{queuedA, runningB, queuedB, runningA, taskA}, live, jsonEqual); diff != "" {
			t.Errorf("Live, want queued and running runs of every workspace, oldest first (-want +got):\n%s", diff)
		}
	})

	t.Run("Claim", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		runs := st.Runs()
		r := mustRun(t, st, a.ID)

		before := time.Now()
		claimed, err := runs.Claim(ctx, a.ID, r.ID, "exec-1", time.Hour, false)
		if err != nil {
			t.Fatalf("Claim(fresh) = %v", err)
		}
		after := time.Now()
		if claimed.Status != store.RunRunning || claimed.LeaseOwner != "exec-1" || claimed.LeaseUntil == nil {
			t.Fatalf("Claim(fresh) = %+v, want running, leased to exec-1", claimed)
		}
		checkStamp(t, "LeaseUntil", *claimed.LeaseUntil, before.Add(time.Hour), after.Add(time.Hour))
		checkStamp(t, "UpdatedAt", claimed.UpdatedAt, before, after)
		if got, err := runs.Get(ctx, a.ID, r.ID); err != nil || !cmp.Equal(claimed, got, jsonEqual) {
			t.Errorf("Get after Claim = %+v, %v; want %+v", got, err, claimed)
		}

		// Heartbeat: the owner extends its lease.
		time.Sleep(2 * time.Millisecond)
		beat, err := runs.Claim(ctx, a.ID, r.ID, "exec-1", 2*time.Hour, false)
		if err != nil {
			t.Fatalf("Claim(heartbeat) = %v", err)
		}
		if beat.LeaseOwner != "exec-1" || !beat.LeaseUntil.After(*claimed.LeaseUntil) {
			t.Errorf("Claim(heartbeat) lease %q until %v, want exec-1 until after %v", beat.LeaseOwner, beat.LeaseUntil, claimed.LeaseUntil)
		}

		// Another owner is refused while the lease holds, and sees who holds it.
		refused, err := runs.Claim(ctx, a.ID, r.ID, "exec-2", time.Hour, false)
		wantErr(t, "Claim(another owner, lease valid)", err, store.ErrConflict)
		if diff := cmp.Diff(beat, refused, jsonEqual); diff != "" {
			t.Errorf("refused Claim returned (-stored +returned):\n%s", diff)
		}

		// Force takes it over.
		forced, err := runs.Claim(ctx, a.ID, r.ID, "exec-2", time.Hour, true)
		if err != nil {
			t.Fatalf("Claim(force) = %v", err)
		}
		if forced.LeaseOwner != "exec-2" || forced.Status != store.RunRunning {
			t.Errorf("Claim(force) = %+v, want running, leased to exec-2", forced)
		}
		_, err = runs.Claim(ctx, a.ID, r.ID, "exec-1", time.Hour, false)
		wantErr(t, "Claim(previous owner after takeover)", err, store.ErrConflict)

		// Workspace isolation: b can neither claim nor see it.
		_, err = runs.Claim(ctx, b.ID, r.ID, "exec-3", time.Hour, true)
		wantErr(t, "Claim(b, run of a)", err, store.ErrNotFound)
		if got, err := runs.Get(ctx, a.ID, r.ID); err != nil || got.LeaseOwner != "exec-2" {
			t.Errorf("lease after a claim through b = %q, %v; want exec-2", got.LeaseOwner, err)
		}
		_, err = runs.Claim(ctx, a.ID, store.NewID(), "exec-1", time.Hour, false)
		wantErr(t, "Claim(unknown)", err, store.ErrNotFound)

		_, err = runs.Claim(ctx, a.ID, r.ID, "", time.Hour, false)
		wantErr(t, "Claim(no owner)", err, store.ErrInvalid)
		for _, ttl := range []time.Duration{0, -time.Second} {
			_, err = runs.Claim(ctx, a.ID, r.ID, "exec-2", ttl, false)
			wantErr(t, fmt.Sprintf("Claim(ttl %v)", ttl), err, store.ErrInvalid)
		}
	})

	t.Run("ClaimExpired", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		r := mustRun(t, st, a.ID)
		// A lease of 1ms is over once 1ms has passed: sleeping 10ms leaves a
		// wide margin without slowing the suite.
		short := mustClaim(t, st, r, "crashed", time.Millisecond)
		time.Sleep(10 * time.Millisecond)
		took, err := st.Runs().Claim(ctx, a.ID, r.ID, "survivor", time.Hour, false)
		if err != nil {
			t.Fatalf("Claim(after the lease expired) = %v", err)
		}
		if took.LeaseOwner != "survivor" || !took.LeaseUntil.After(*short.LeaseUntil) {
			t.Errorf("Claim(expired) = lease %q until %v, want survivor", took.LeaseOwner, took.LeaseUntil)
		}
	})

	t.Run("ClaimRace", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		r := mustRun(t, st, a.ID)
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			winners []string
		)
		for i := range 8 {
			owner := fmt.Sprintf("exec-%d", i)
			wg.Go(func() {
				_, err := st.Runs().Claim(ctx, a.ID, r.ID, owner, time.Hour, false)
				switch {
				case err == nil:
					mu.Lock()
					winners = append(winners, owner)
					mu.Unlock()
				case !errors.Is(err, store.ErrConflict):
					t.Errorf("Claim(%s) = %v, want nil or ErrConflict", owner, err)
				}
			})
		}
		wg.Wait()
		if len(winners) != 1 {
			t.Fatalf("8 executors claimed a fresh run at once: winners %v, want exactly one", winners)
		}
		if got, err := st.Runs().Get(ctx, a.ID, r.ID); err != nil || got.LeaseOwner != winners[0] {
			t.Errorf("lease owner = %q, %v; want the winner %s", got.LeaseOwner, err, winners[0])
		}
	})

	t.Run("Release", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		runs := st.Runs()
		r := mustClaim(t, st, mustRun(t, st, a.ID), "exec-1", time.Hour)

		// Only the holder hands a run back, and only in its workspace.
		got, err := runs.Release(ctx, a.ID, r.ID, "exec-2")
		wantErr(t, "Release(by another executor)", err, store.ErrConflict)
		if got.LeaseOwner != "exec-1" || got.Status != store.RunRunning {
			t.Errorf("refused Release returned %+v, want the run as stored (running, exec-1's)", got)
		}
		_, err = runs.Release(ctx, b.ID, r.ID, "exec-1")
		wantErr(t, "Release(other workspace)", err, store.ErrNotFound)
		_, err = runs.Release(ctx, a.ID, r.ID, "")
		wantErr(t, "Release(no owner)", err, store.ErrInvalid)

		released, err := runs.Release(ctx, a.ID, r.ID, "exec-1")
		if err != nil {
			t.Fatalf("Release(by the holder) = %v", err)
		}
		if released.Status != store.RunQueued || released.LeaseOwner != "" || released.LeaseUntil != nil {
			t.Errorf("Release = %+v, want queued without a lease", released)
		}
		// Another executor claims it at once, an hour before the old lease ended.
		if took := mustClaim(t, st, r, "exec-2", time.Hour); took.LeaseOwner != "exec-2" {
			t.Errorf("Claim after Release = lease %q, want exec-2", took.LeaseOwner)
		}
		// A queued run is not running: nothing to hand back.
		q := mustRun(t, st, a.ID)
		_, err = runs.Release(ctx, a.ID, q.ID, "exec-1")
		wantErr(t, "Release(queued run)", err, store.ErrConflict)
	})

	t.Run("ClaimRefusesOtherStatuses", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		runs := st.Runs()
		for _, status := range []store.RunStatus{store.RunWaiting, store.RunSucceeded, store.RunFailed,
			store.RunFailedContract, store.RunCanceled, store.RunBlocked} {
			r, err := runs.Create(ctx, store.Run{WorkspaceID: a.ID, Definition: testDefinition, Status: status})
			if err != nil {
				t.Fatalf("Create(%s) = %v", status, err)
			}
			got, err := runs.Claim(ctx, a.ID, r.ID, "exec-1", time.Hour, true)
			wantErr(t, fmt.Sprintf("Claim(%s run, force)", status), err, store.ErrConflict)
			if got.ID != r.ID || got.Status != status || got.LeaseOwner != "" {
				t.Errorf("refused Claim(%s run) returned %+v, want the run as stored", status, got)
			}
		}
	})

	t.Run("Transition", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		runs := st.Runs()
		r := mustClaim(t, st, mustRun(t, st, a.ID), "exec-1", time.Hour)
		live := []store.RunStatus{store.RunQueued, store.RunRunning}

		// Parking on a human node releases the lease.
		waiting, err := runs.Transition(ctx, a.ID, r.ID, live, store.RunWaiting, store.RunUpdate{WaitingNode: ptr("approve")})
		if err != nil {
			t.Fatalf("Transition(running → waiting) = %v", err)
		}
		if waiting.Status != store.RunWaiting || waiting.WaitingNode != "approve" || waiting.LeaseOwner != "" ||
			waiting.LeaseUntil != nil || waiting.FinishedAt != nil {
			t.Errorf("Transition(running → waiting) = %+v, want waiting on approve, no lease, not finished", waiting)
		}
		if waiting.UpdatedAt.Before(r.UpdatedAt) {
			t.Errorf("UpdatedAt went backwards: %v before %v", waiting.UpdatedAt, r.UpdatedAt)
		}

		// A status outside from: ErrConflict and the row as stored.
		got, err := runs.Transition(ctx, a.ID, r.ID, live, store.RunSucceeded, store.RunUpdate{Output: json.RawMessage(`1`)})
		wantErr(t, "Transition(from live, run waiting)", err, store.ErrConflict)
		if diff := cmp.Diff(waiting, got, jsonEqual); diff != "" {
			t.Errorf("refused Transition returned (-stored +returned):\n%s", diff)
		}

		// Isolation: b cannot move it.
		_, err = runs.Transition(ctx, b.ID, r.ID, []store.RunStatus{store.RunWaiting}, store.RunCanceled, store.RunUpdate{})
		wantErr(t, "Transition(b, run of a)", err, store.ErrNotFound)
		_, err = runs.Transition(ctx, a.ID, store.NewID(), []store.RunStatus{store.RunWaiting}, store.RunCanceled, store.RunUpdate{})
		wantErr(t, "Transition(unknown)", err, store.ErrNotFound)

		resumed, err := runs.Transition(ctx, a.ID, r.ID, []store.RunStatus{store.RunWaiting}, store.RunQueued,
			store.RunUpdate{WaitingNode: ptr("")})
		if err != nil {
			t.Fatalf("Transition(waiting → queued) = %v", err)
		}
		if resumed.WaitingNode != "" || resumed.Status != store.RunQueued {
			t.Errorf("Transition(waiting → queued) = %+v, want queued with no waiting node", resumed)
		}
		running := mustClaim(t, st, resumed, "exec-2", time.Hour)

		output := json.RawMessage(`{"answer": "because", "score": 0.9}`)
		before := time.Now()
		done, err := runs.Transition(ctx, a.ID, r.ID, live, store.RunSucceeded, store.RunUpdate{Output: output})
		if err != nil {
			t.Fatalf("Transition(running → succeeded) = %v", err)
		}
		after := time.Now()
		if done.Status != store.RunSucceeded || done.LeaseOwner != "" || done.LeaseUntil != nil || done.FinishedAt == nil {
			t.Fatalf("Transition(→ succeeded) = %+v, want succeeded, lease cleared, FinishedAt set", done)
		}
		checkStamp(t, "FinishedAt", *done.FinishedAt, before, after)
		if !cmp.Equal(output, done.Output, jsonEqual) || done.Error != "" {
			t.Errorf("Transition(→ succeeded) output %s error %q, want %s and none", done.Output, done.Error, output)
		}
		want := running
		want.Status, want.Output, want.LeaseOwner, want.LeaseUntil = store.RunSucceeded, output, "", nil
		if diff := cmp.Diff(want, done, jsonEqual, cmpIgnore("UpdatedAt", "FinishedAt")); diff != "" {
			t.Errorf("Transition changed more than asked (-want +got):\n%s", diff)
		}
		if got, err := runs.Get(ctx, a.ID, r.ID); err != nil || !cmp.Equal(done, got, jsonEqual) {
			t.Errorf("Get after Transition = %+v, %v; want %+v", got, err, done)
		}
		_, err = runs.Transition(ctx, a.ID, r.ID, live, store.RunFailed, store.RunUpdate{Error: ptr("late")})
		wantErr(t, "Transition(finished run)", err, store.ErrConflict)

		// Nil fields are kept; Error is set.
		f := mustClaim(t, st, mustRun(t, st, a.ID), "exec-1", time.Hour)
		failed, err := runs.Transition(ctx, a.ID, f.ID, live, store.RunFailed, store.RunUpdate{Error: ptr("node llm: provider timeout")})
		if err != nil {
			t.Fatalf("Transition(→ failed) = %v", err)
		}
		if failed.Error != "node llm: provider timeout" || failed.Output != nil || failed.FinishedAt == nil {
			t.Errorf("Transition(→ failed) = %+v, want the error, no output, FinishedAt", failed)
		}
		// Retrying a finished run makes it live again: FinishedAt goes.
		retried, err := runs.Transition(ctx, a.ID, f.ID, []store.RunStatus{store.RunFailed}, store.RunQueued, store.RunUpdate{Error: ptr("")})
		if err != nil {
			t.Fatalf("Transition(failed → queued) = %v", err)
		}
		if retried.FinishedAt != nil || retried.Error != "" {
			t.Errorf("Transition(failed → queued) = %+v, want no FinishedAt and no error", retried)
		}

		for name, call := range map[string]func() error{
			"no from": func() error {
				_, err := runs.Transition(ctx, a.ID, f.ID, nil, store.RunCanceled, store.RunUpdate{})
				return err
			},
			"bad from": func() error {
				_, err := runs.Transition(ctx, a.ID, f.ID, []store.RunStatus{"paused"}, store.RunCanceled, store.RunUpdate{})
				return err
			},
			"bad to": func() error {
				_, err := runs.Transition(ctx, a.ID, f.ID, live, "paused", store.RunUpdate{})
				return err
			},
			"bad output": func() error {
				_, err := runs.Transition(ctx, a.ID, f.ID, live, store.RunSucceeded, store.RunUpdate{Output: json.RawMessage(`{`)})
				return err
			},
		} {
			wantErr(t, "Transition("+name+")", call(), store.ErrInvalid)
		}
	})

	t.Run("Checkpoint", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		runs := st.Runs()
		r := mustRun(t, st, a.ID)

		if cps, err := runs.Checkpoints(ctx, a.ID, r.ID); err != nil || len(cps) != 0 {
			t.Errorf("Checkpoints(new run) = %+v, %v; want none", cps, err)
		}
		// Keys saved in an order that is not alphabetical.
		saved := []store.Checkpoint{
			{RunID: r.ID, Key: "start", NodeID: "start", Output: json.RawMessage(`{"question": "why?"}`)},
			{RunID: r.ID, Key: "branch", NodeID: "branch", Output: json.RawMessage(`true`), Handle: "yes"},
			{RunID: r.ID, Key: "each[0]/fetch", NodeID: "fetch"}, // no output
			{RunID: r.ID, Key: "draft#2", NodeID: "draft", Output: json.RawMessage(`"text"`)},
		}
		before := time.Now()
		for i, cp := range saved {
			events := []store.RunEvent{
				{Seq: int64(2*i + 1), Type: "node_started", Data: json.RawMessage(fmt.Sprintf(`{"node": %q}`, cp.NodeID))},
				{RunID: r.ID, Seq: int64(2*i + 2), Type: "node_finished"}, // no data
			}
			if err := runs.Checkpoint(ctx, a.ID, cp, events); err != nil {
				t.Fatalf("Checkpoint(%s) = %v", cp.Key, err)
			}
		}
		after := time.Now()
		cps, err := runs.Checkpoints(ctx, a.ID, r.ID)
		if err != nil {
			t.Fatalf("Checkpoints = %v", err)
		}
		if diff := cmp.Diff(saved, cps, jsonEqual, cmpIgnore("CreatedAt")); diff != "" {
			t.Errorf("Checkpoints, want in the order saved (-want +got):\n%s", diff)
		}
		for _, cp := range cps {
			checkStamp(t, "checkpoint CreatedAt", cp.CreatedAt, before, after)
		}
		evs, err := runs.Events(ctx, a.ID, r.ID, 0, 0)
		if err != nil {
			t.Fatalf("Events = %v", err)
		}
		if len(evs) != 8 || evs[0].Type != "node_started" || evs[0].RunID != r.ID || evs[1].Data != nil || evs[7].Seq != 8 {
			t.Errorf("Events after 4 checkpoints = %+v, want 8 events, seq 1-8, with the run id filled in", evs)
		}

		// Saving a key again is refused and writes nothing, events included.
		again := saved[0]
		again.Output = json.RawMessage(`"second executor"`)
		err = runs.Checkpoint(ctx, a.ID, again, []store.RunEvent{{Seq: 9, Type: "node_finished"}})
		wantErr(t, "Checkpoint(saved key)", err, store.ErrConflict)
		if cps2, err := runs.Checkpoints(ctx, a.ID, r.ID); err != nil || !cmp.Equal(cps, cps2, jsonEqual) {
			t.Errorf("Checkpoints after a refused save = %+v, %v; want unchanged", cps2, err)
		}
		if evs, err := runs.Events(ctx, a.ID, r.ID, 8, 0); err != nil || len(evs) != 0 {
			t.Errorf("events of a refused checkpoint = %+v, %v; want none written", evs, err)
		}

		// Isolation: b can neither write nor read a's checkpoints.
		err = runs.Checkpoint(ctx, b.ID, store.Checkpoint{RunID: r.ID, Key: "intruder", NodeID: "x"},
			[]store.RunEvent{{Seq: 10, Type: "node_finished"}})
		wantErr(t, "Checkpoint(b, run of a)", err, store.ErrNotFound)
		_, err = runs.Checkpoints(ctx, b.ID, r.ID)
		wantErr(t, "Checkpoints(b, run of a)", err, store.ErrNotFound)
		if cps2, err := runs.Checkpoints(ctx, a.ID, r.ID); err != nil || len(cps2) != len(saved) {
			t.Errorf("Checkpoints after a write through b = %d, %v; want %d", len(cps2), err, len(saved))
		}
		if evs, err := runs.Events(ctx, a.ID, r.ID, 8, 0); err != nil || len(evs) != 0 {
			t.Errorf("events written through b = %+v, %v; want none", evs, err)
		}
		err = runs.Checkpoint(ctx, a.ID, store.Checkpoint{RunID: store.NewID(), Key: "k", NodeID: "n"}, nil)
		wantErr(t, "Checkpoint(unknown run)", err, store.ErrNotFound)
		_, err = runs.Checkpoints(ctx, a.ID, store.NewID())
		wantErr(t, "Checkpoints(unknown run)", err, store.ErrNotFound)

		ok := store.Checkpoint{RunID: r.ID, Key: "k", NodeID: "n"}
		for name, tc := range map[string]struct {
			mutate func(*store.Checkpoint)
			events []store.RunEvent
		}{
			"no run":           {mutate: func(cp *store.Checkpoint) { cp.RunID = "" }},
			"no key":           {mutate: func(cp *store.Checkpoint) { cp.Key = "" }},
			"no node":          {mutate: func(cp *store.Checkpoint) { cp.NodeID = "" }},
			"bad output":       {mutate: func(cp *store.Checkpoint) { cp.Output = json.RawMessage(`[1,`) }},
			"event of another": {events: []store.RunEvent{{RunID: store.NewID(), Seq: 20, Type: "t"}}},
			"event seq 0":      {events: []store.RunEvent{{Seq: 0, Type: "t"}}},
			"event no type":    {events: []store.RunEvent{{Seq: 20}}},
			"event bad data":   {events: []store.RunEvent{{Seq: 20, Type: "t", Data: json.RawMessage(`x`)}}},
		} {
			cp := ok
			if tc.mutate != nil {
				tc.mutate(&cp)
			}
			wantErr(t, "Checkpoint("+name+")", runs.Checkpoint(ctx, a.ID, cp, tc.events), store.ErrInvalid)
		}
		if _, err := runs.Checkpoints(ctx, a.ID, r.ID); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("CheckpointRace", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		r := mustRun(t, st, a.ID)
		const n = 8
		var (
			wg   sync.WaitGroup
			errs [n]error
		)
		for i := range n {
			wg.Go(func() {
				errs[i] = st.Runs().Checkpoint(ctx, a.ID,
					store.Checkpoint{RunID: r.ID, Key: "llm", NodeID: "llm", Output: json.RawMessage(fmt.Sprint(i))},
					[]store.RunEvent{{Seq: int64(100 + i), Type: "node_finished", Data: json.RawMessage(fmt.Sprint(i))}})
			})
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Errorf("executors %d and %d both saved checkpoint llm", winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, store.ErrConflict):
				t.Errorf("Checkpoint #%d = %v, want nil or ErrConflict", i, err)
			}
		}
		if winner < 0 {
			t.Fatal("no executor saved checkpoint llm")
		}
		cps, err := st.Runs().Checkpoints(ctx, a.ID, r.ID)
		if err != nil || len(cps) != 1 || string(cps[0].Output) != fmt.Sprint(winner) {
			t.Errorf("Checkpoints = %+v, %v; want the one of executor %d", cps, err, winner)
		}
		evs, err := st.Runs().Events(ctx, a.ID, r.ID, 0, 0)
		if err != nil || len(evs) != 1 || evs[0].Seq != int64(100+winner) {
			t.Errorf("Events = %+v, %v; want only the event of executor %d", evs, err, winner)
		}
	})

	t.Run("Events", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		runs := st.Runs()
		r, other := mustRun(t, st, a.ID), mustRun(t, st, a.ID)

		if err := runs.AppendEvents(ctx, a.ID, nil); err != nil {
			t.Errorf("AppendEvents(none) = %v", err)
		}
		if evs, err := runs.Events(ctx, a.ID, r.ID, 0, 0); err != nil || len(evs) != 0 {
			t.Errorf("Events(new run) = %+v, %v; want none", evs, err)
		}
		event := func(runID string, seq int64, data string) store.RunEvent {
			e := store.RunEvent{RunID: runID, Seq: seq, Type: "delta"}
			if data != "" {
				e.Data = json.RawMessage(data)
			}
			return e
		}
		var first []store.RunEvent
		for seq := int64(1); seq <= 5; seq++ {
			first = append(first, event(r.ID, seq, fmt.Sprintf(`{"text": "first %d"}`, seq)))
		}
		first = append(first, event(other.ID, 1, ""))
		before := time.Now()
		if err := runs.AppendEvents(ctx, a.ID, first); err != nil {
			t.Fatalf("AppendEvents(1-5) = %v", err)
		}
		// Re-sending after a crash: 3-5 are skipped, 6-7 are new.
		var resend []store.RunEvent
		for seq := int64(3); seq <= 7; seq++ {
			resend = append(resend, event(r.ID, seq, fmt.Sprintf(`{"text": "resent %d"}`, seq)))
		}
		if err := runs.AppendEvents(ctx, a.ID, resend); err != nil {
			t.Fatalf("AppendEvents(3-7) = %v", err)
		}
		after := time.Now()
		want := append(append([]store.RunEvent(nil), first[:5]...), resend[3:]...)
		all, err := runs.Events(ctx, a.ID, r.ID, 0, 0)
		if err != nil {
			t.Fatalf("Events = %v", err)
		}
		if diff := cmp.Diff(want, all, jsonEqual, cmpIgnore("CreatedAt")); diff != "" {
			t.Errorf("Events, want 1-5 as first sent and 6-7 (-want +got):\n%s", diff)
		}
		for _, e := range all {
			checkStamp(t, "event CreatedAt", e.CreatedAt, before, after)
		}
		if evs, err := runs.Events(ctx, a.ID, other.ID, 0, 0); err != nil || len(evs) != 1 || evs[0].Data != nil {
			t.Errorf("Events(other) = %+v, %v; want one event without data", evs, err)
		}

		// Paging.
		for _, tc := range []struct {
			after int64
			limit int
			want  []int64
		}{
			{0, 3, []int64{1, 2, 3}},
			{3, 3, []int64{4, 5, 6}},
			{6, 3, []int64{7}},
			{7, 3, nil},
			{100, 0, nil},
			{-1, 2, []int64{1, 2}},
		} {
			evs, err := runs.Events(ctx, a.ID, r.ID, tc.after, tc.limit)
			if err != nil {
				t.Errorf("Events(after %d, limit %d) = %v", tc.after, tc.limit, err)
				continue
			}
			var seqs []int64
			for _, e := range evs {
				seqs = append(seqs, e.Seq)
			}
			if diff := cmp.Diff(tc.want, seqs); diff != "" {
				t.Errorf("Events(after %d, limit %d) seqs (-want +got):\n%s", tc.after, tc.limit, diff)
			}
		}

		// Isolation, and all or nothing: one foreign run refuses the call.
		err = runs.AppendEvents(ctx, b.ID, []store.RunEvent{event(r.ID, 8, "")})
		wantErr(t, "AppendEvents(b, run of a)", err, store.ErrNotFound)
		err = runs.AppendEvents(ctx, a.ID, []store.RunEvent{event(r.ID, 8, ""), event(store.NewID(), 1, "")})
		wantErr(t, "AppendEvents(one unknown run)", err, store.ErrNotFound)
		if evs, err := runs.Events(ctx, a.ID, r.ID, 7, 0); err != nil || len(evs) != 0 {
			t.Errorf("events after refused appends = %+v, %v; want none written", evs, err)
		}
		_, err = runs.Events(ctx, b.ID, r.ID, 0, 0)
		wantErr(t, "Events(b, run of a)", err, store.ErrNotFound)
		_, err = runs.Events(ctx, a.ID, store.NewID(), 0, 0)
		wantErr(t, "Events(unknown run)", err, store.ErrNotFound)

		for name, e := range map[string]store.RunEvent{
			"no run":   {Seq: 1, Type: "t"},
			"seq 0":    {RunID: r.ID, Type: "t"},
			"no type":  {RunID: r.ID, Seq: 9},
			"bad data": {RunID: r.ID, Seq: 9, Type: "t", Data: json.RawMessage(`{"a":}`)},
		} {
			err := runs.AppendEvents(ctx, a.ID, []store.RunEvent{event(r.ID, 9, ""), e})
			wantErr(t, "AppendEvents("+name+")", err, store.ErrInvalid)
		}
		if evs, err := runs.Events(ctx, a.ID, r.ID, 7, 0); err != nil || len(evs) != 0 {
			t.Errorf("events after invalid appends = %+v, %v; want none written", evs, err)
		}
	})
}

// ignoreRunStamps leaves out what the driver assigns.
var ignoreRunStamps = cmpIgnore("ID", "CreatedAt", "UpdatedAt")
