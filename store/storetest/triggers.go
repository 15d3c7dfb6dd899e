package storetest

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/store"
)

func testTriggers(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		tr := st.Triggers()
		v0, err := tr.Version(ctx)
		if err != nil {
			t.Fatalf("Version = %v", err)
		}

		before := time.Now()
		sched, err := tr.Create(ctx, store.Trigger{WorkspaceID: a.ID, Name: "nightly", Kind: store.TriggerSchedule, Agent: "helper",
			Input: json.RawMessage(`{"report":"daily"}`), Schedule: "0 9 * * *", Timezone: "Asia/Tokyo", Enabled: true})
		if err != nil {
			t.Fatalf("Create(schedule) = %v", err)
		}
		checkStamp(t, "CreatedAt", sched.CreatedAt, before, time.Now())
		if sched.ID == "" || sched.Misfire != store.MisfireSkip {
			t.Errorf("Create = %+v; want an id and misfire defaulting to skip", sched)
		}
		hook, err := tr.Create(ctx, store.Trigger{WorkspaceID: a.ID, Name: "github", Kind: store.TriggerWebhook, WorkflowID: "wf1",
			Enabled: true, SecretCiphertext: []byte{1, 2, 3}, KeyID: "k1"})
		if err != nil {
			t.Fatalf("Create(webhook) = %v", err)
		}
		got, err := tr.Get(ctx, a.ID, sched.ID)
		if diff := cmp.Diff(sched, got, jsonEqual); err != nil || diff != "" {
			t.Errorf("Get = %v (-want +got):\n%s", err, diff)
		}
		got, err = tr.Lookup(ctx, hook.ID)
		if diff := cmp.Diff(hook, got); err != nil || diff != "" {
			t.Errorf("Lookup = %v (-want +got):\n%s", err, diff)
		}
		_, err = tr.Get(ctx, b.ID, sched.ID)
		wantErr(t, "Get(b, a's trigger)", err, store.ErrNotFound)
		_, err = tr.Lookup(ctx, "missing")
		wantErr(t, "Lookup(missing)", err, store.ErrNotFound)
		_, err = tr.Create(ctx, store.Trigger{WorkspaceID: a.ID, Name: "nightly", Kind: store.TriggerSchedule, Agent: "x", Schedule: "@daily"})
		wantErr(t, "Create(same name)", err, store.ErrConflict)
		_, err = tr.Create(ctx, store.Trigger{WorkspaceID: b.ID, Name: "nightly", Kind: store.TriggerSchedule, Agent: "x", Schedule: "@daily", Enabled: true})
		if err != nil {
			t.Errorf("Create(same name, other workspace) = %v", err)
		}

		list, err := tr.List(ctx, a.ID)
		if err != nil || len(list) != 2 || list[0].Name != "github" || list[1].Name != "nightly" {
			t.Errorf("List = %v, %v; want github, nightly", list, err)
		}
		scheds, err := tr.Schedules(ctx)
		if err != nil || len(scheds) != 2 {
			t.Errorf("Schedules = %v, %v; want the two enabled schedules of both workspaces", scheds, err)
		}
		v1, _ := tr.Version(ctx)
		if v1 == v0 {
			t.Errorf("Version did not change after creates: %s", v1)
		}

		sched.Enabled = false
		sched.Schedule = "*/5 * * * *"
		upd, err := tr.Update(ctx, sched)
		if err != nil || upd.Schedule != "*/5 * * * *" || upd.Enabled || !upd.CreatedAt.Equal(sched.CreatedAt) {
			t.Errorf("Update = %+v, %v", upd, err)
		}
		v2, _ := tr.Version(ctx)
		if v2 == v1 {
			t.Errorf("Version did not change after update: %s", v2)
		}
		if scheds, _ := tr.Schedules(ctx); len(scheds) != 1 {
			t.Errorf("Schedules after disabling = %d, want 1", len(scheds))
		}
		_, err = tr.Update(ctx, store.Trigger{ID: "missing", WorkspaceID: a.ID, Name: "x", Kind: store.TriggerSchedule, Agent: "x", Schedule: "@daily"})
		wantErr(t, "Update(missing)", err, store.ErrNotFound)

		// Runs started by a trigger are listed by it.
		r1, err := st.Runs().Create(ctx, store.Run{WorkspaceID: a.ID, Definition: json.RawMessage(`{}`), TriggerID: hook.ID})
		if err != nil || r1.TriggerID != hook.ID {
			t.Fatalf("Runs.Create(trigger) = %+v, %v", r1, err)
		}
		if _, err := st.Runs().Create(ctx, store.Run{WorkspaceID: a.ID, Definition: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
		runs, err := st.Runs().List(ctx, a.ID, store.RunFilter{TriggerID: hook.ID})
		if err != nil || len(runs) != 1 || runs[0].ID != r1.ID || runs[0].TriggerID != hook.ID {
			t.Errorf("Runs.List(trigger) = %v, %v; want only the trigger's run", runs, err)
		}

		if err := tr.Delete(ctx, a.ID, hook.ID); err != nil {
			t.Fatalf("Delete = %v", err)
		}
		wantErr(t, "Delete(again)", tr.Delete(ctx, a.ID, hook.ID), store.ErrNotFound)
		v3, _ := tr.Version(ctx)
		if v3 == v2 {
			t.Errorf("Version did not change after delete: %s", v3)
		}
		if _, err := tr.Create(ctx, store.Trigger{WorkspaceID: "nope", Name: "x", Kind: store.TriggerSchedule, Agent: "x", Schedule: "@daily"}); err == nil {
			t.Errorf("Create(unknown workspace) = nil error")
		}
	})

	t.Run("Invalid", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		for name, tg := range map[string]store.Trigger{
			"no name":      {WorkspaceID: a.ID, Kind: store.TriggerSchedule, Agent: "x", Schedule: "@daily"},
			"bad kind":     {WorkspaceID: a.ID, Name: "n", Kind: "cronjob", Agent: "x", Schedule: "@daily"},
			"no target":    {WorkspaceID: a.ID, Name: "n", Kind: store.TriggerSchedule, Schedule: "@daily"},
			"two targets":  {WorkspaceID: a.ID, Name: "n", Kind: store.TriggerSchedule, Agent: "x", WorkflowID: "w", Schedule: "@daily"},
			"no schedule":  {WorkspaceID: a.ID, Name: "n", Kind: store.TriggerSchedule, Agent: "x"},
			"bad misfire":  {WorkspaceID: a.ID, Name: "n", Kind: store.TriggerSchedule, Agent: "x", Schedule: "@daily", Misfire: "all"},
			"no secret":    {WorkspaceID: a.ID, Name: "n", Kind: store.TriggerWebhook, Agent: "x"},
			"bad input":    {WorkspaceID: a.ID, Name: "n", Kind: store.TriggerSchedule, Agent: "x", Schedule: "@daily", Input: json.RawMessage(`{`)},
			"no workspace": {Name: "n", Kind: store.TriggerSchedule, Agent: "x", Schedule: "@daily"},
		} {
			_, err := st.Triggers().Create(t.Context(), tg)
			wantErr(t, "Create("+name+")", err, store.ErrInvalid)
		}
	})

	t.Run("FireOncePerTick", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		tr := st.Triggers()
		tg, err := tr.Create(ctx, store.Trigger{WorkspaceID: a.ID, Name: "s", Kind: store.TriggerSchedule, Agent: "x", Schedule: "* * * * * *", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		tick := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		const n = 8
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			wins []string
		)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				owner := string(rune('a' + i))
				_, won, err := tr.Fire(ctx, store.TriggerFire{WorkspaceID: a.ID, TriggerID: tg.ID, Tick: tick, Owner: owner})
				if err != nil {
					t.Errorf("Fire(%s) = %v", owner, err)
					return
				}
				if won {
					mu.Lock()
					wins = append(wins, owner)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(wins) != 1 {
			t.Fatalf("%d of %d concurrent Fires won the tick (%v); want exactly one", len(wins), n, wins)
		}
		f, won, err := tr.Fire(ctx, store.TriggerFire{WorkspaceID: a.ID, TriggerID: tg.ID, Tick: tick, Owner: "late"})
		if err != nil || won || f.Owner != wins[0] || !f.Tick.Equal(tick) {
			t.Errorf("Fire(again) = %+v, %v, %v; want the winner's fire and false", f, won, err)
		}
		f.RunID = "run1"
		if err := tr.FireDone(ctx, f); err != nil {
			t.Fatalf("FireDone = %v", err)
		}
		if _, _, err := tr.Fire(ctx, store.TriggerFire{WorkspaceID: a.ID, TriggerID: tg.ID, Tick: tick.Add(time.Second), Owner: "a", Missed: 3}); err != nil {
			t.Fatal(err)
		}
		fires, err := tr.Fires(ctx, a.ID, tg.ID, 0)
		if err != nil || len(fires) != 2 || !fires[0].Tick.Equal(tick.Add(time.Second)) || fires[0].Missed != 3 || fires[1].RunID != "run1" {
			t.Errorf("Fires = %+v, %v; want the newest tick first, the run recorded", fires, err)
		}
		_, _, err = tr.Fire(ctx, store.TriggerFire{WorkspaceID: a.ID, TriggerID: "missing", Tick: tick, Owner: "a"})
		wantErr(t, "Fire(unknown trigger)", err, store.ErrNotFound)
		if err := tr.Delete(ctx, a.ID, tg.ID); err != nil {
			t.Fatal(err)
		}
		if fires, _ := tr.Fires(ctx, a.ID, tg.ID, 0); len(fires) != 0 {
			t.Errorf("Fires after Delete = %v; want none", fires)
		}
	})

	t.Run("Unstarted", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		tr := st.Triggers()
		ta, err := tr.Create(ctx, store.Trigger{WorkspaceID: a.ID, Name: "s", Kind: store.TriggerSchedule, Agent: "x", Schedule: "* * * * * *", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		tb, err := tr.Create(ctx, store.Trigger{WorkspaceID: b.ID, Name: "s", Kind: store.TriggerSchedule, Agent: "x", Schedule: "* * * * * *", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		tick := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		fire := func(tg store.Trigger, at time.Time) store.TriggerFire {
			t.Helper()
			f, won, err := tr.Fire(ctx, store.TriggerFire{WorkspaceID: tg.WorkspaceID, TriggerID: tg.ID, Tick: at, Owner: "p1"})
			if err != nil || !won {
				t.Fatalf("Fire(%s at %v) = %v, %v", tg.ID, at, won, err)
			}
			return f
		}
		before := time.Now().Add(-time.Second)
		// Created in this order: a's two ticks, then b's, then a's
		// third; one of a's gets its run and one its error.
		open1 := fire(ta, tick.Add(time.Second))
		done := fire(ta, tick)
		openB := fire(tb, tick)
		failed := fire(ta, tick.Add(2*time.Second))
		done.RunID = "run1"
		if err := tr.FireDone(ctx, done); err != nil {
			t.Fatal(err)
		}
		failed.Error = "workflow is gone"
		if err := tr.FireDone(ctx, failed); err != nil {
			t.Fatal(err)
		}
		after := time.Now().Add(time.Second)

		got, err := tr.Unstarted(ctx, after, 0)
		if err != nil {
			t.Fatalf("Unstarted = %v", err)
		}
		if diff := cmp.Diff([]store.TriggerFire{open1, openB}, got); diff != "" {
			t.Errorf("Unstarted (-want +got): the fires of every workspace with no run and no error, oldest first:\n%s", diff)
		}
		if got, err := tr.Unstarted(ctx, after, 1); err != nil || len(got) != 1 || got[0].TriggerID != ta.ID || !got[0].Tick.Equal(open1.Tick) {
			t.Errorf("Unstarted(limit 1) = %+v, %v; want the oldest open fire", got, err)
		}
		if got, err := tr.Unstarted(ctx, before, 0); err != nil || len(got) != 0 {
			t.Errorf("Unstarted(before they were created) = %+v, %v; want none", got, err)
		}
		// before is exclusive: cut at b's fire, only a's older one is left.
		if got, err := tr.Unstarted(ctx, openB.CreatedAt, 0); err != nil || len(got) != 1 || got[0].TriggerID != ta.ID {
			t.Errorf("Unstarted(before b's fire was created) = %+v, %v; want a's open fire alone", got, err)
		}

		open1.RunID = "run2"
		if err := tr.FireDone(ctx, open1); err != nil {
			t.Fatal(err)
		}
		if err := tr.Delete(ctx, b.ID, tb.ID); err != nil {
			t.Fatal(err)
		}
		if got, err := tr.Unstarted(ctx, after, 0); err != nil || len(got) != 0 {
			t.Errorf("Unstarted after the run was recorded and b's trigger deleted = %+v, %v; want none", got, err)
		}
	})

	t.Run("Deliveries", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		tr := st.Triggers()
		tg, err := tr.Create(ctx, store.Trigger{WorkspaceID: a.ID, Name: "h", Kind: store.TriggerWebhook, Agent: "x", Enabled: true,
			SecretCiphertext: []byte{9}, KeyID: "k"})
		if err != nil {
			t.Fatal(err)
		}
		d := store.TriggerDelivery{WorkspaceID: a.ID, TriggerID: tg.ID, DeliveryID: "d1"}
		if _, first, err := tr.Deliver(ctx, d); err != nil || !first {
			t.Fatalf("Deliver = %v, %v; want first", first, err)
		}
		d.RunID = "run1"
		if err := tr.DeliveryDone(ctx, d); err != nil {
			t.Fatal(err)
		}
		got, first, err := tr.Deliver(ctx, store.TriggerDelivery{WorkspaceID: a.ID, TriggerID: tg.ID, DeliveryID: "d1"})
		if err != nil || first || got.RunID != "run1" {
			t.Errorf("Deliver(again) = %+v, %v, %v; want the first one's run", got, first, err)
		}
		if err := tr.Forget(ctx, a.ID, tg.ID, "d1"); err != nil {
			t.Fatal(err)
		}
		if _, first, err := tr.Deliver(ctx, store.TriggerDelivery{WorkspaceID: a.ID, TriggerID: tg.ID, DeliveryID: "d1"}); err != nil || !first {
			t.Errorf("Deliver(after Forget) = %v, %v; want first again", first, err)
		}
		_, _, err = tr.Deliver(ctx, store.TriggerDelivery{WorkspaceID: a.ID, TriggerID: "missing", DeliveryID: "d1"})
		wantErr(t, "Deliver(unknown trigger)", err, store.ErrNotFound)
	})
}
