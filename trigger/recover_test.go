package trigger_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/trigger"
)

// faultyStore is a store whose Runs().Create and Triggers().FireDone fail
// with the errors set: a database that is busy, or a process that dies at
// that point (its writes never happen).
type faultyStore struct {
	store.Store
	create, fireDone error
}

func (s faultyStore) Runs() store.Runs { return faultyRuns{s.Store.Runs(), s.create} }

func (s faultyStore) Triggers() store.Triggers { return faultyTriggers{s.Store.Triggers(), s.fireDone} }

type faultyRuns struct {
	store.Runs
	create error
}

func (r faultyRuns) Create(ctx context.Context, run store.Run) (store.Run, error) {
	if r.create != nil {
		return store.Run{}, r.create
	}
	return r.Runs.Create(ctx, run)
}

type faultyTriggers struct {
	store.Triggers
	fireDone error
}

func (t faultyTriggers) FireDone(ctx context.Context, f store.TriggerFire) error {
	if t.fireDone != nil {
		return t.fireDone
	}
	return t.Triggers.FireDone(ctx, f)
}

var errBusy = errors.New("sqlite: create run: database is locked (5) (SQLITE_BUSY)")

// TestWonTickStartsAfterCrash wins a tick in a first process that fails
// (or dies) before it records the tick's run, then starts a healthy
// scheduler, as a restart or another worker: its sweep gives the tick its
// run, exactly one, recorded on the fire; a third scheduler sweeping after
// it starts no other.
func TestWonTickStartsAfterCrash(t *testing.T) {
	yearly, err := trigger.ParseSchedule("0 0 1 1 *", "")
	if err != nil {
		t.Fatal(err)
	}
	tick := yearly.Next(time.Now())
	// The schedulers run just after the tick, so it is due and on time.
	now := func() time.Time { return tick.Add(30 * time.Second) }
	for _, c := range []struct {
		name string
		// first is what the process that wins the tick does: fire with
		// a scheduler over a faulty store, or (nil) only win it, as a
		// process killed right after.
		first *faultyStore
	}{
		{"start fails transiently", &faultyStore{create: errBusy}},
		{"dies after creating the run", &faultyStore{fireDone: errors.New("process killed")}},
		{"dies right after winning", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := openSQLite(t)
			ws, wf := mustWorkflow(t, st)
			r := newRig(t, st, "p2", nil)
			tg, _, err := r.svc.Create(t.Context(), ws, trigger.Spec{Name: ptr("yearly"), Kind: ptr("schedule"), Workflow: ptr(wf.ID), Schedule: ptr("0 0 1 1 *")})
			if err != nil {
				t.Fatal(err)
			}
			if c.first != nil {
				c.first.Store = st
				first := newRig(t, *c.first, "p1", nil)
				// StartRetry: by now's clock the fire (stamped with the
				// real time) is weeks old, and this scheduler's own sweep
				// must not give up on it.
				s := trigger.NewScheduler(first.svc, &trigger.SchedulerOptions{Owner: "p1", Now: now, StartRetry: 365 * 24 * time.Hour})
				if err := s.Start(t.Context()); err != nil {
					t.Fatal(err)
				}
				s.Stop()
				first.runs.Wait()
			} else if _, won, err := st.Triggers().Fire(t.Context(), store.TriggerFire{WorkspaceID: ws, TriggerID: tg.ID, Tick: tick, Owner: "p1"}); err != nil || !won {
				t.Fatalf("Fire = %v, %v", won, err)
			}
			fires, err := st.Triggers().Fires(t.Context(), ws, tg.ID, 0)
			if err != nil || len(fires) != 1 || fires[0].Owner != "p1" || fires[0].RunID != "" || fires[0].Error != "" {
				t.Fatalf("after the first process: fires %+v, %v; want p1's fire of the tick with no run recorded", fires, err)
			}

			for _, owner := range []string{"p2", "p3"} {
				s := trigger.NewScheduler(r.svc, &trigger.SchedulerOptions{Owner: owner, Now: now, Sweep: time.Millisecond})
				if err := s.Start(t.Context()); err != nil {
					t.Fatal(err)
				}
				s.Stop()
				r.runs.Wait()
			}
			fires, err = st.Triggers().Fires(t.Context(), ws, tg.ID, 0)
			if err != nil || len(fires) != 1 {
				t.Fatalf("fires = %+v, %v; want the one tick", fires, err)
			}
			f := fires[0]
			runs, err := st.Runs().List(t.Context(), ws, store.RunFilter{TriggerID: tg.ID})
			if err != nil || len(runs) != 1 {
				t.Fatalf("%d runs of the trigger (%v); want exactly one for the tick", len(runs), err)
			}
			if f.RunID != runs[0].ID || f.Error != "" || !f.Tick.Equal(tick) {
				t.Errorf("fire = %+v; want tick %v with run %s and no error", f, tick, runs[0].ID)
			}
			if got := waitRun(t, st, ws, runs[0].ID); got.Status != store.RunSucceeded {
				t.Errorf("the tick's run is %s (%q), want succeeded", got.Status, got.Error)
			}
		})
	}
}

// TestSweepRecordsLastingErrors checks the errors the sweep does not
// retry: a start that cannot succeed records its error at once, and one
// that keeps failing for a reason that may pass records it once
// StartRetry is over.
func TestSweepRecordsLastingErrors(t *testing.T) {
	yearly, _ := trigger.ParseSchedule("0 0 1 1 *", "")
	tick := yearly.Next(time.Now())
	now := func() time.Time { return tick.Add(30 * time.Second) }
	st := openSQLite(t)
	ws, wf := mustWorkflow(t, st)
	r := newRig(t, st, "p1", nil)
	tg, _, err := r.svc.Create(t.Context(), ws, trigger.Spec{Name: ptr("yearly"), Kind: ptr("schedule"), Workflow: ptr(wf.ID), Schedule: ptr("0 0 1 1 *")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Triggers().Fire(t.Context(), store.TriggerFire{WorkspaceID: ws, TriggerID: tg.ID, Tick: tick, Owner: "dead"}); err != nil {
		t.Fatal(err)
	}
	open := func() store.TriggerFire {
		t.Helper()
		fires, err := st.Triggers().Fires(t.Context(), ws, tg.ID, 0)
		if err != nil || len(fires) != 1 {
			t.Fatalf("fires = %+v, %v", fires, err)
		}
		return fires[0]
	}
	busy := newRig(t, faultyStore{Store: st, create: errBusy}, "p2", nil)
	sweep := func(rg *rig, retry time.Duration) {
		s := trigger.NewScheduler(rg.svc, &trigger.SchedulerOptions{Now: now, Sweep: time.Millisecond, StartRetry: retry})
		if err := s.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		s.Stop()
	}
	// Busy within StartRetry (the tick was won "30 s" ago by now's clock,
	// far less than a year): left for the next sweep.
	sweep(busy, 365*24*time.Hour)
	if f := open(); f.RunID != "" || f.Error != "" {
		t.Errorf("after a busy sweep within StartRetry, fire = %+v; want it still open", f)
	}
	sweep(busy, time.Nanosecond)
	if f := open(); f.RunID != "" || f.Error == "" {
		t.Errorf("after a busy sweep past StartRetry, fire = %+v; want the error recorded", f)
	}

	// A workflow that is gone: recorded at once, whatever StartRetry.
	gone, _, err := r.svc.Create(t.Context(), ws, trigger.Spec{Name: ptr("gone"), Kind: ptr("schedule"), Workflow: ptr(wf.ID), Schedule: ptr("0 0 1 1 *")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Triggers().Fire(t.Context(), store.TriggerFire{WorkspaceID: ws, TriggerID: gone.ID, Tick: tick, Owner: "dead"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Workflows().Delete(t.Context(), ws, wf.ID); err != nil {
		t.Fatal(err)
	}
	sweep(r, 365*24*time.Hour)
	fires, err := st.Triggers().Fires(t.Context(), ws, gone.ID, 0)
	if err != nil || len(fires) != 1 || fires[0].RunID != "" || fires[0].Error == "" {
		t.Errorf("fires of a trigger whose workflow is gone = %+v, %v; want the error recorded", fires, err)
	}
	if runs, _ := st.Runs().List(t.Context(), ws, store.RunFilter{}); len(runs) != 0 {
		t.Errorf("%d runs started; want none", len(runs))
	}
}

// TestSchedulersSweepOnce leaves ticks won and never started by a process
// that died, then starts three schedulers at once, each over its own
// PostgreSQL pool: they all sweep the same fires, and each tick still gets
// exactly one run.
func TestSchedulersSweepOnce(t *testing.T) {
	const ticks = 20
	stores := postgresStores(t, 3)
	ws, wf := mustWorkflow(t, stores[0])
	var rigs []*rig
	for i, st := range stores {
		rigs = append(rigs, newRig(t, st, fmt.Sprintf("worker-%d", i), nil))
	}
	tg, _, err := rigs[0].svc.Create(t.Context(), ws, trigger.Spec{Name: ptr("yearly"), Kind: ptr("schedule"), Workflow: ptr(wf.ID),
		Schedule: ptr("0 0 1 1 *")})
	if err != nil {
		t.Fatal(err)
	}
	// The dead process won the ticks of the last 20 years; the schedulers
	// run a second later, their clock ahead of the store's by a second,
	// so every fire is old enough to sweep and no new tick is due.
	yearly, _ := trigger.ParseSchedule("0 0 1 1 *", "")
	last := yearly.Next(time.Now()).AddDate(-1, 0, 0)
	for i := range ticks {
		if _, won, err := stores[0].Triggers().Fire(t.Context(), store.TriggerFire{WorkspaceID: ws, TriggerID: tg.ID, Tick: last.AddDate(-i, 0, 0), Owner: "dead"}); err != nil || !won {
			t.Fatalf("Fire = %v, %v", won, err)
		}
	}
	now := func() time.Time { return time.Now().Add(time.Second) }
	var wg sync.WaitGroup
	for i, r := range rigs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := trigger.NewScheduler(r.svc, &trigger.SchedulerOptions{Owner: fmt.Sprintf("worker-%d", i), Now: now, Sweep: time.Millisecond})
			if err := s.Start(t.Context()); err != nil {
				t.Error(err)
				return
			}
			s.Stop()
		}()
	}
	wg.Wait()
	for _, r := range rigs {
		r.runs.Wait()
	}
	fires, err := stores[0].Triggers().Fires(t.Context(), ws, tg.ID, 1000)
	if err != nil || len(fires) != ticks {
		t.Fatalf("fires = %d, %v; want the %d won ticks", len(fires), err, ticks)
	}
	runs, err := stores[0].Runs().List(t.Context(), ws, store.RunFilter{TriggerID: tg.ID, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, r := range runs {
		ids[r.ID] = true
	}
	if len(runs) != ticks {
		t.Errorf("%d runs for %d ticks; want one run per tick", len(runs), ticks)
	}
	for _, f := range fires {
		if f.Owner != "dead" || f.RunID == "" || f.Error != "" || !ids[f.RunID] {
			t.Errorf("fire %+v; want the dead process's tick with one of the runs and no error", f)
		}
		delete(ids, f.RunID) // a run recorded by two fires is found missing the second time
	}
}

// waitRun polls until the run is final.
func waitRun(t *testing.T, st store.Store, ws, id string) store.Run {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		run, err := st.Runs().Get(t.Context(), ws, id)
		if err != nil {
			t.Fatal(err)
		}
		if run.Status.Final() || time.Now().After(deadline) {
			return run
		}
		time.Sleep(10 * time.Millisecond)
	}
}
