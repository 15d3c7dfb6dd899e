package trigger_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/trigger"
)

// TestThreeSchedulersFireEachTickOnce runs three schedulers, each over its
// own PostgreSQL pool as three worker processes would, on a per-second
// schedule for 60 ticks: every tick fires exactly once (no gap, no
// double), and each fire started exactly one run carrying the trigger.
func TestThreeSchedulersFireEachTickOnce(t *testing.T) {
	const ticks = 60
	stores := postgresStores(t, 3)
	ws, wf := mustWorkflow(t, stores[0])
	var rigs []*rig
	for i, st := range stores {
		rigs = append(rigs, newRig(t, st, fmt.Sprintf("worker-%d", i), nil))
	}
	tg, _, err := rigs[0].svc.Create(t.Context(), ws, trigger.Spec{Name: ptr("every-second"), Kind: ptr("schedule"), Workflow: ptr(wf.ID),
		Schedule: ptr("* * * * * *"), Input: json.RawMessage(`{"from":"cron"}`)})
	if err != nil {
		t.Fatal(err)
	}
	var schedulers []*trigger.Scheduler
	for i, r := range rigs {
		s := trigger.NewScheduler(r.svc, &trigger.SchedulerOptions{Owner: fmt.Sprintf("worker-%d", i), Recheck: time.Second})
		if err := s.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		schedulers = append(schedulers, s)
	}
	stopAll := sync.OnceFunc(func() {
		for _, s := range schedulers {
			s.Stop()
		}
	})
	defer stopAll()

	deadline := time.Now().Add(ticks*time.Second + 10*time.Second)
	for {
		fires, err := stores[0].Triggers().Fires(t.Context(), ws, tg.ID, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(fires) >= ticks {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d fires after %d s; want %d", len(fires), ticks+10, ticks)
		}
		time.Sleep(200 * time.Millisecond)
	}
	stopAll()
	for _, r := range rigs {
		r.runs.Wait()
	}

	fires, err := stores[0].Triggers().Fires(t.Context(), ws, tg.ID, 1000)
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(fires) // oldest first
	owners := map[string]int{}
	runIDs := map[string]bool{}
	for i, f := range fires {
		owners[f.Owner]++
		if f.Tick.Nanosecond() != 0 {
			t.Errorf("fire %d tick %v is not on a second", i, f.Tick)
		}
		if i > 0 && !f.Tick.Equal(fires[i-1].Tick.Add(time.Second)) {
			t.Errorf("fire %d tick %v follows %v: a tick was missed", i, f.Tick, fires[i-1].Tick)
		}
		if f.RunID == "" || f.Error != "" || f.Missed != 0 {
			t.Errorf("fire %d = %+v; want a run and no error", i, f)
		}
		if runIDs[f.RunID] {
			t.Errorf("run %s recorded by two fires", f.RunID)
		}
		runIDs[f.RunID] = true
	}
	runs, err := stores[0].Runs().List(t.Context(), ws, store.RunFilter{TriggerID: tg.ID, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != len(fires) {
		t.Errorf("%d runs for %d fired ticks; want one run per tick", len(runs), len(fires))
	}
	for _, r := range runs {
		var in struct {
			Input struct {
				From string `json:"from"`
			} `json:"input"`
		}
		if err := json.Unmarshal(r.Input, &in); err != nil || !runIDs[r.ID] || r.WorkflowID != wf.ID || in.Input.From != "cron" {
			t.Errorf("run %s (input %s) is not one of the fires' or lacks the trigger's input", r.ID, r.Input)
		}
	}
	t.Logf("%d ticks fired once each from %s to %s; won per scheduler: %v", len(fires), fires[0].Tick.Format(time.TimeOnly),
		fires[len(fires)-1].Tick.Format(time.TimeOnly), owners)
	if len(owners) < 2 {
		t.Logf("only %v won ticks: the schedulers did not race (load?)", slices.Collect(maps.Keys(owners)))
	}
}

// TestMisfirePolicies simulates downtime: the schedulers start five hours
// after the triggers were last changed. skip fires nothing for the missed
// ticks; catch_up_once fires one run standing for all of them.
func TestMisfirePolicies(t *testing.T) {
	st := openSQLite(t)
	ws, wf := mustWorkflow(t, st)
	r := newRig(t, st, "p1", nil)
	skip, _, err := r.svc.Create(t.Context(), ws, trigger.Spec{Name: ptr("skip"), Kind: ptr("schedule"), Workflow: ptr("noop"),
		Schedule: ptr("0 * * * *")})
	if err != nil {
		t.Fatal(err)
	}
	catch, _, err := r.svc.Create(t.Context(), ws, trigger.Spec{Name: ptr("catch"), Kind: ptr("schedule"), Workflow: ptr(wf.ID),
		Schedule: ptr("0 * * * *"), Misfire: ptr("catch_up_once")})
	if err != nil {
		t.Fatal(err)
	}
	if skip.Misfire != store.MisfireSkip {
		t.Errorf("default misfire = %q, want skip", skip.Misfire)
	}
	later := func() time.Time { return time.Now().Add(5 * time.Hour) }
	s := trigger.NewScheduler(r.svc, &trigger.SchedulerOptions{Now: later, MisfireAfter: time.Second})
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	r.runs.Wait()

	if fires, err := st.Triggers().Fires(t.Context(), ws, skip.ID, 0); err != nil || len(fires) != 0 {
		t.Errorf("skip fired %v, %v; want nothing for missed ticks", fires, err)
	}
	fires, err := st.Triggers().Fires(t.Context(), ws, catch.ID, 0)
	if err != nil || len(fires) != 1 {
		t.Fatalf("catch_up_once fired %v, %v; want exactly one fire", fires, err)
	}
	if f := fires[0]; f.Missed < 4 || f.Missed > 5 || f.RunID == "" || f.Tick.Minute() != 0 || f.Tick.After(later()) {
		t.Errorf("catch-up fire = %+v; want the latest missed hour, standing for 4-5 ticks, with a run", f)
	}
	runs, err := st.Runs().List(t.Context(), ws, store.RunFilter{TriggerID: catch.ID})
	if err != nil || len(runs) != 1 || runs[0].ID != fires[0].RunID {
		t.Errorf("runs of catch_up_once = %v, %v; want the fire's one run", runs, err)
	}

	// A second scheduler starting after the same downtime (another worker)
	// finds the catch-up done: the latest missed tick is recorded.
	s2 := trigger.NewScheduler(r.svc, &trigger.SchedulerOptions{Now: later, MisfireAfter: time.Second})
	if err := s2.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	s2.Stop()
	if fires, _ := st.Triggers().Fires(t.Context(), ws, catch.ID, 0); len(fires) != 1 {
		t.Errorf("after a second scheduler: %d fires, want still 1", len(fires))
	}
}

// TestSchedulerSeesNewTriggers checks the loop reloads on a change: a
// trigger created while it runs fires within the recheck interval.
func TestSchedulerSeesNewTriggers(t *testing.T) {
	st := openSQLite(t)
	ws, wf := mustWorkflow(t, st)
	r := newRig(t, st, "p1", nil)
	s := trigger.NewScheduler(r.svc, &trigger.SchedulerOptions{Recheck: 200 * time.Millisecond})
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if err := s.Start(t.Context()); err == nil {
		t.Error("a second Start succeeded")
	}
	tg, _, err := r.svc.Create(t.Context(), ws, trigger.Spec{Name: ptr("s"), Kind: ptr("schedule"), Workflow: ptr(wf.ID), Schedule: ptr("* * * * * *")})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		fires, err := st.Triggers().Fires(t.Context(), ws, tg.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(fires) > 0 && fires[0].RunID != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a trigger created while the scheduler ran never fired")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Disabled, it stops firing.
	if _, err := r.svc.Update(t.Context(), ws, tg.ID, trigger.Spec{Enabled: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // a recheck passes
	before, _ := st.Triggers().Fires(t.Context(), ws, tg.ID, 0)
	time.Sleep(1500 * time.Millisecond)
	after, _ := st.Triggers().Fires(t.Context(), ws, tg.ID, 0)
	if len(after) != len(before) {
		t.Errorf("a disabled trigger fired %d more times", len(after)-len(before))
	}
}

func TestCreateRefusesBadInput(t *testing.T) {
	st := openSQLite(t)
	ws, _ := mustWorkflow(t, st)
	r := newRig(t, st, "p1", nil)
	for _, c := range []struct {
		name  string
		spec  trigger.Spec
		field string
	}{
		{"bad cron", trigger.Spec{Name: ptr("a"), Kind: ptr("schedule"), Workflow: ptr("noop"), Schedule: ptr("every monday")}, "schedule"},
		{"bad zone", trigger.Spec{Name: ptr("a"), Kind: ptr("schedule"), Workflow: ptr("noop"), Schedule: ptr("0 9 * * *"), Timezone: ptr("Tokyo")}, "timezone"},
		{"unknown workflow", trigger.Spec{Name: ptr("a"), Kind: ptr("schedule"), Workflow: ptr("nope"), Schedule: ptr("0 9 * * *")}, "workflow"},
		{"no target", trigger.Spec{Name: ptr("a"), Kind: ptr("schedule"), Schedule: ptr("0 9 * * *")}, "workflow"},
		{"agent without resolver", trigger.Spec{Name: ptr("a"), Kind: ptr("webhook"), Agent: ptr("helper")}, "agent"},
		{"bad kind", trigger.Spec{Name: ptr("a"), Kind: ptr("cron"), Workflow: ptr("noop")}, "kind"},
		{"no name", trigger.Spec{Kind: ptr("webhook"), Workflow: ptr("noop")}, "name"},
		{"bad misfire", trigger.Spec{Name: ptr("a"), Kind: ptr("schedule"), Workflow: ptr("noop"), Schedule: ptr("@daily"), Misfire: ptr("all")}, "misfire"},
		{"webhook schedule", trigger.Spec{Name: ptr("a"), Kind: ptr("webhook"), Workflow: ptr("noop"), Schedule: ptr("@daily")}, "schedule"},
	} {
		_, _, err := r.svc.Create(t.Context(), ws, c.spec)
		var fe *trigger.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: Create = %v; want a FieldError on %s", c.name, err, c.field)
		}
	}
	if list, _ := r.svc.List(t.Context(), ws); len(list) != 0 {
		t.Errorf("refused creates stored %d triggers", len(list))
	}
}
