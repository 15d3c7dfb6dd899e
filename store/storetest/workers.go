package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/store"
)

func testWorkers(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("BeatListLeavePrune", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		workers := st.Workers()
		started := time.Now().Add(-time.Minute)

		if list, err := workers.List(ctx); err != nil || len(list) != 0 {
			t.Fatalf("List(empty registry) = %+v, %v; want no rows", list, err)
		}
		_, err := workers.Get(ctx, "w-1")
		wantErr(t, "Get(unknown)", err, store.ErrNotFound)

		before := time.Now()
		b, err := workers.Beat(ctx, store.Worker{ID: "w-b", Kind: "worker", Host: "h1", PID: 42, Version: "v1", StartedAt: started,
			Runs: []store.HeldRun{{WorkspaceID: "ws", RunID: "r1", Node: "c3"}, {WorkspaceID: "ws", RunID: "r2"}}})
		if err != nil {
			t.Fatalf("Beat(w-b) = %v", err)
		}
		checkStamp(t, "SeenAt", b.SeenAt, before, time.Now())
		a, err := workers.Beat(ctx, store.Worker{ID: "w-a", Kind: "serve", Host: "h2", PID: 7, StartedAt: started})
		if err != nil {
			t.Fatalf("Beat(w-a) = %v", err)
		}
		if a.Runs == nil || len(a.Runs) != 0 {
			t.Errorf("Beat without runs stored Runs %#v, want an empty list", a.Runs)
		}
		list, err := workers.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]store.Worker{a, b}, list); diff != "" {
			t.Errorf("List mismatch, want by id (-want +got):\n%s", diff)
		}

		// A second beat replaces the row: runs as now, seen later.
		time.Sleep(2 * time.Millisecond)
		b2, err := workers.Beat(ctx, store.Worker{ID: "w-b", Kind: "worker", Host: "h1", PID: 42, Version: "v1", StartedAt: started})
		if err != nil {
			t.Fatal(err)
		}
		got, err := workers.Get(ctx, "w-b")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(b2, got); diff != "" || !got.SeenAt.After(b.SeenAt) || len(got.Runs) != 0 {
			t.Errorf("Get after a second beat mismatch (-beat +got):\n%s (seen %v after %v, runs %v)", diff, got.SeenAt, b.SeenAt, got.Runs)
		}

		// Leave removes only the process's own row.
		if err := workers.Leave(ctx, "w-b", "h1", 43); err != nil {
			t.Fatal(err)
		}
		if _, err := workers.Get(ctx, "w-b"); err != nil {
			t.Errorf("Leave by another pid removed the row: %v", err)
		}
		if err := workers.Leave(ctx, "w-b", "h1", 42); err != nil {
			t.Fatal(err)
		}
		_, err = workers.Get(ctx, "w-b")
		wantErr(t, "Get(after Leave)", err, store.ErrNotFound)

		// Prune removes the rows seen before the cut.
		n, err := workers.Prune(ctx, a.SeenAt)
		if err != nil || n != 0 {
			t.Errorf("Prune(at a's beat) = %d, %v; want 0 (seen at, not before)", n, err)
		}
		n, err = workers.Prune(ctx, time.Now().Add(time.Second))
		if err != nil || n != 1 {
			t.Errorf("Prune(future) = %d, %v; want 1", n, err)
		}
		if list, err := workers.List(ctx); err != nil || len(list) != 0 {
			t.Errorf("List after Prune = %+v, %v; want none", list, err)
		}
	})

	t.Run("BeatInvalid", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		workers := open(t).Workers()
		now := time.Now()
		for name, w := range map[string]store.Worker{
			"no id":     {Kind: "worker", PID: 1, StartedAt: now},
			"no kind":   {ID: "w", PID: 1, StartedAt: now},
			"no pid":    {ID: "w", Kind: "worker", StartedAt: now},
			"no start":  {ID: "w", Kind: "worker", PID: 1},
			"run no id": {ID: "w", Kind: "worker", PID: 1, StartedAt: now, Runs: []store.HeldRun{{WorkspaceID: "ws"}}},
		} {
			_, err := workers.Beat(ctx, w)
			wantErr(t, "Beat("+name+")", err, store.ErrInvalid)
		}
	})
}
