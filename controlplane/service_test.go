package controlplane_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/workflowtest"
)

func openStore(t *testing.T, path string) store.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func workspace(t *testing.T, st store.Store) string {
	t.Helper()
	ws, err := st.Workspaces().GetOrCreate(t.Context(), "default")
	if err != nil {
		t.Fatal(err)
	}
	return ws.ID
}

// waitStatus polls until the run reaches one of the statuses.
func waitStatus(t *testing.T, st store.Store, ws, id string, want ...store.RunStatus) store.Run {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		run, err := st.Runs().Get(t.Context(), ws, id)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(want, run.Status) {
			return run
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %s (error %q), want %v", id, run.Status, run.Error, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const humanFlow = `{"name":"approve","nodes":[{"id":"start","type":"start"},
{"id":"draft","type":"agent","config":{"model":"m","prompt":"Draft: {{input}}"}},
{"id":"ok","type":"human","config":{"prompt":"Approve {{input}}?"}},
{"id":"final","type":"code","config":{"mode":"template","template":"{{nodes.draft.output}} [{{input}}]"}},
{"id":"end","type":"end"}],
"edges":[{"id":"e1","source":"start","target":"draft"},{"id":"e2","source":"draft","target":"ok"},{"id":"e3","source":"ok","target":"final"},{"id":"e4","source":"final","target":"end"}]}`

func TestHumanParkRestartResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	res := workflowtest.NewResolver(t, llmtest.Turn{Text: "A memo."})
	eng := workflowtest.Engine(t, workflow.Services{Agents: res})

	// First process: runs until the human node parks the run.
	st1 := openStore(t, path)
	ws := workspace(t, st1)
	svc1 := controlplane.New(st1, eng, controlplane.Options{Owner: "p1", SingleProcess: true})
	run, err := svc1.Start(t.Context(), controlplane.StartRequest{WorkspaceID: ws, Definition: json.RawMessage(humanFlow), Input: controlplane.RunInput{Input: "budget"}})
	if err != nil {
		t.Fatal(err)
	}
	svc1.Wait()
	parked := waitStatus(t, st1, ws, run.ID, store.RunWaiting)
	if parked.WaitingNode != "ok" || parked.LeaseOwner != "" {
		t.Fatalf("parked run %+v", parked)
	}
	st1.Close()

	// "Restart": a new store and service on the same file.
	st2 := openStore(t, path)
	svc2 := controlplane.New(st2, eng, controlplane.Options{Owner: "p2", SingleProcess: true})
	if n, err := svc2.ResumeOwned(t.Context()); err != nil || n != 0 {
		t.Fatalf("ResumeOwned = %d, %v; a waiting run is not live", n, err)
	}
	if _, err := svc2.Resume(t.Context(), ws, run.ID, "approved"); err != nil {
		t.Fatal(err)
	}
	// A second resume is harmless.
	if _, err := svc2.Resume(t.Context(), ws, run.ID, "rejected"); !errors.Is(err, controlplane.ErrNotWaiting) {
		t.Fatalf("second Resume error = %v, want ErrNotWaiting", err)
	}
	svc2.Wait()
	done := waitStatus(t, st2, ws, run.ID, store.RunSucceeded, store.RunFailed)
	if done.Status != store.RunSucceeded || string(done.Output) != `"A memo. [approved]"` {
		t.Fatalf("run %+v output %s", done, done.Output)
	}
	if got := len(res.LLM.Requests()); got != 1 {
		t.Errorf("model called %d times; the draft must not run again", got)
	}
	// The event stream is complete and ordered.
	var types []workflow.EventType
	var last int64
	err = svc2.Events(t.Context(), ws, run.ID, 0, func(ev workflow.Event) bool {
		if ev.Seq != last+1 {
			t.Errorf("event seq %d after %d", ev.Seq, last)
		}
		last = ev.Seq
		types = append(types, ev.Type)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(types, workflow.EventWaiting) || types[len(types)-1] != workflow.EventRunFinished {
		t.Errorf("events %v", types)
	}
	// Resuming from a Last-Event-ID gives only what follows.
	var tail []int64
	_ = svc2.Events(t.Context(), ws, run.ID, last-2, func(ev workflow.Event) bool { tail = append(tail, ev.Seq); return true })
	if !slices.Equal(tail, []int64{last - 1, last}) {
		t.Errorf("events after %d: %v", last-2, tail)
	}
}

func TestCancelAndRerun(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "db"))
	ws := workspace(t, st)
	res := workflowtest.NewResolver(t, llmtest.Turn{Text: "A memo."})
	eng := workflowtest.Engine(t, workflow.Services{Agents: res})
	svc := controlplane.New(st, eng, controlplane.Options{Owner: "p"})
	run, err := svc.Start(t.Context(), controlplane.StartRequest{WorkspaceID: ws, Definition: json.RawMessage(humanFlow), Input: controlplane.RunInput{Input: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	svc.Wait()
	waitStatus(t, st, ws, run.ID, store.RunWaiting)

	// Re-run from the human node: the draft is reused, not regenerated.
	re, err := svc.Rerun(t.Context(), ws, run.ID, "ok")
	if err != nil {
		t.Fatal(err)
	}
	svc.Wait()
	waitStatus(t, st, ws, re.ID, store.RunWaiting)
	if got := len(res.LLM.Requests()); got != 1 {
		t.Errorf("model called %d times; rerun from ok must reuse draft", got)
	}
	canceled, err := svc.Cancel(t.Context(), ws, run.ID)
	if err != nil || canceled.Status != store.RunCanceled {
		t.Fatalf("Cancel = %+v, %v", canceled, err)
	}
	if _, err := svc.Resume(t.Context(), ws, run.ID, "late"); !errors.Is(err, controlplane.ErrNotWaiting) {
		t.Errorf("Resume of a canceled run = %v", err)
	}
	if _, err := svc.Rerun(t.Context(), ws, run.ID, "nope"); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Rerun from unknown node = %v", err)
	}
}

func TestInvalidDefinitionRecordsNothing(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "db"))
	ws := workspace(t, st)
	svc := controlplane.New(st, workflowtest.Engine(t, workflow.Services{}), controlplane.Options{})
	_, err := svc.Start(t.Context(), controlplane.StartRequest{WorkspaceID: ws, Definition: json.RawMessage(`{"name":"x","nodes":[{"id":"a","type":"nope"}]}`)})
	var inv *workflow.InvalidError
	if !errors.As(err, &inv) || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("Start = %v", err)
	}
	runs, _ := st.Runs().List(t.Context(), ws, store.RunFilter{})
	if len(runs) != 0 {
		t.Errorf("%d runs recorded for an invalid definition", len(runs))
	}
}

// TestStartWithID checks a caller-named run: it gets that id, a second
// Start of the id is ErrConflict and enqueues nothing, and an id that is
// not a canonical UUID is refused before anything is recorded.
func TestStartWithID(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "db"))
	ws := workspace(t, st)
	var enqueued []string
	svc := controlplane.New(st, workflowtest.Engine(t, workflow.Services{}), controlplane.Options{
		Enqueue: func(_ context.Context, _, runID string, _ bool) error {
			enqueued = append(enqueued, runID)
			return nil
		}})
	const def = `{"name":"noop","nodes":[{"id":"start","type":"start"},{"id":"end","type":"end"}],"edges":[{"id":"e1","source":"start","target":"end"}]}`
	id := store.IDFor(time.Now(), "test/one")
	run, err := svc.Start(t.Context(), controlplane.StartRequest{ID: id, WorkspaceID: ws, Definition: json.RawMessage(def), Input: controlplane.RunInput{Input: "first"}})
	if err != nil || run.ID != id {
		t.Fatalf("Start(ID) = %s, %v; want run %s", run.ID, err, id)
	}
	_, err = svc.Start(t.Context(), controlplane.StartRequest{ID: id, WorkspaceID: ws, Definition: json.RawMessage(def), Input: controlplane.RunInput{Input: "second"}})
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("Start(same ID) = %v; want ErrConflict", err)
	}
	for _, bad := range []string{"run-1", strings.ToUpper(id), "{" + id + "}"} {
		_, err := svc.Start(t.Context(), controlplane.StartRequest{ID: bad, WorkspaceID: ws, Definition: json.RawMessage(def)})
		if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "StartRequest.ID") {
			t.Errorf("Start(ID %q) = %v; want ErrInvalid naming StartRequest.ID", bad, err)
		}
	}
	runs, err := st.Runs().List(t.Context(), ws, store.RunFilter{})
	if err != nil || len(runs) != 1 || !strings.Contains(string(runs[0].Input), "first") {
		t.Errorf("runs = %+v, %v; want the first run alone, its input kept", runs, err)
	}
	if !slices.Equal(enqueued, []string{id}) {
		t.Errorf("enqueued %v; want only the first start of %s", enqueued, id)
	}
}

func TestCancelRunningRun(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "db"))
	ws := workspace(t, st)
	res := workflowtest.NewResolver(t, llmtest.Turn{Text: strings.Repeat("slow ", 200), Pace: 10 * time.Millisecond})
	svc := controlplane.New(st, workflowtest.Engine(t, workflow.Services{Agents: res}), controlplane.Options{})
	run, err := svc.Start(t.Context(), controlplane.StartRequest{WorkspaceID: ws, Definition: json.RawMessage(humanFlow), Input: controlplane.RunInput{Input: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, st, ws, run.ID, store.RunRunning)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, err := svc.Cancel(ctx, ws, run.ID); err != nil {
		t.Fatal(err)
	}
	svc.Wait()
	got := waitStatus(t, st, ws, run.ID, store.RunCanceled)
	if got.FinishedAt == nil {
		t.Errorf("canceled run has no finished_at")
	}
}

func TestHumanDeadline(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "db"))
	ws := workspace(t, st)
	svc := controlplane.New(st, workflowtest.Engine(t, workflow.Services{}), controlplane.Options{})
	def := `{"name":"d","nodes":[{"id":"start","type":"start"},{"id":"ask","type":"human","config":{"prompt":"ok?","timeout":"300ms"}},{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"ask"},{"id":"e2","source":"ask","target":"end"}]}`
	start := func() string {
		run, err := svc.Start(t.Context(), controlplane.StartRequest{WorkspaceID: ws, Definition: json.RawMessage(def), Input: controlplane.RunInput{Input: "x"}})
		if err != nil {
			t.Fatal(err)
		}
		waitStatus(t, st, ws, run.ID, store.RunWaiting)
		return run.ID
	}
	// Unanswered: the run fails at its deadline by itself.
	id := start()
	failed := waitStatus(t, st, ws, id, store.RunFailed)
	if !strings.Contains(failed.Error, "deadline") {
		t.Errorf("error %q", failed.Error)
	}
	// Answered in time: it succeeds, and the deadline check leaves it alone.
	id = start()
	if _, err := svc.Resume(t.Context(), ws, id, "yes"); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, st, ws, id, store.RunSucceeded)
	time.Sleep(400 * time.Millisecond)
	svc.Wait()
	if got := waitStatus(t, st, ws, id, store.RunSucceeded, store.RunFailed); got.Status != store.RunSucceeded {
		t.Errorf("answered run became %s", got.Status)
	}
}

// TestEventsUnsubscribeAfterRunEnds: a follower that stops after the run's
// feed closed must not close its channel twice.
func TestEventsUnsubscribeAfterRunEnds(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "db"))
	ws := workspace(t, st)
	svc := controlplane.New(st, workflowtest.Engine(t, workflow.Services{}), controlplane.Options{})
	def := `{"name":"q","nodes":[{"id":"start","type":"start"},{"id":"c","type":"code","config":{"mode":"javascript","script":"var t=Date.now(); while(Date.now()-t<30){}; 'x'"}},{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"c"},{"id":"e2","source":"c","target":"end"}]}`
	for range 20 {
		run, err := svc.Start(t.Context(), controlplane.StartRequest{WorkspaceID: ws, Definition: json.RawMessage(def), Input: controlplane.RunInput{Input: "x"}})
		if err != nil {
			t.Fatal(err)
		}
		var last workflow.EventType
		if err := svc.Events(t.Context(), ws, run.ID, 0, func(ev workflow.Event) bool { last = ev.Type; return true }); err != nil {
			t.Fatal(err)
		}
		if last != workflow.EventRunFinished {
			t.Fatalf("stream ended with %s", last)
		}
	}
	svc.Wait()
}

// TestRunRowSettledAtRunFinished: a follower that sees run_finished finds
// the run's row already saying how it ended, for runs that succeed and
// runs that park (a /v1 answer says "waiting for input" from that event,
// and a client reads the run next).
func TestRunRowSettledAtRunFinished(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "db"))
	ws := workspace(t, st)
	// A slow status write widens the window in which a follower could
	// see the run end before its row does.
	svc := controlplane.New(slowTransitions{st}, workflowtest.Engine(t, workflow.Services{}), controlplane.Options{})
	// Each run works 50 ms first, so the follower joins it live.
	const work = `{"id":"c","type":"code","config":{"mode":"javascript","script":"var t=Date.now(); while(Date.now()-t<50){}; 'x'"}}`
	quick := `{"name":"q","nodes":[{"id":"start","type":"start"},` + work + `,{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"c"},{"id":"e2","source":"c","target":"end"}]}`
	park := `{"name":"p","nodes":[{"id":"start","type":"start"},` + work + `,{"id":"ok","type":"human","config":{"prompt":"Approve?"}},{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"c"},{"id":"e2","source":"c","target":"ok"},{"id":"e3","source":"ok","target":"end"}]}`
	for i := range 20 {
		def, want := quick, store.RunSucceeded
		if i%2 == 1 {
			def, want = park, store.RunWaiting
		}
		run, err := svc.Start(t.Context(), controlplane.StartRequest{WorkspaceID: ws, Definition: json.RawMessage(def), Input: controlplane.RunInput{Input: "x"}})
		if err != nil {
			t.Fatal(err)
		}
		waitStatus(t, st, ws, run.ID, store.RunRunning)
		var seen bool
		err = svc.Events(t.Context(), ws, run.ID, 0, func(ev workflow.Event) bool {
			if ev.Type != workflow.EventRunFinished {
				return true
			}
			seen = true
			row, err := st.Runs().Get(t.Context(), ws, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			if row.Status != want {
				t.Errorf("run %d: at run_finished the row is %s, want %s", i, row.Status, want)
			}
			return false
		})
		if err != nil || !seen {
			t.Fatalf("run %d: events ended without run_finished (%v)", i, err)
		}
	}
	svc.Wait()
}

// slowTransitions is a store whose run status changes take 20 ms longer.
type slowTransitions struct{ store.Store }

func (s slowTransitions) Runs() store.Runs { return slowRuns{s.Store.Runs()} }

type slowRuns struct{ store.Runs }

func (r slowRuns) Transition(ctx context.Context, workspaceID, id string, from []store.RunStatus, to store.RunStatus, u store.RunUpdate) (store.Run, error) {
	time.Sleep(20 * time.Millisecond)
	return r.Runs.Transition(ctx, workspaceID, id, from, to, u)
}

// TestSweepTakesOverExpiredLease: a run whose worker died mid-run (lease
// left behind) is woken by another worker's sweep once the lease expires,
// and finishes there without re-running its saved node.
func TestSweepTakesOverExpiredLease(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "db"))
	ws := workspace(t, st)
	res := workflowtest.NewResolver(t, llmtest.Turn{Text: "A memo."})
	eng := workflowtest.Engine(t, workflow.Services{Agents: res})
	def := `{"name":"s","nodes":[{"id":"start","type":"start"},{"id":"a","type":"agent","config":{"model":"m"}},
	{"id":"b","type":"code","config":{"mode":"template","template":"{{input}}!"}},{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"a"},{"id":"e2","source":"a","target":"b"},{"id":"e3","source":"b","target":"end"}]}`
	// The dead worker: it claimed the run and saved node a, then vanished.
	run, err := st.Runs().Create(t.Context(), store.Run{WorkspaceID: ws, Definition: json.RawMessage(def), Status: store.RunQueued, Input: json.RawMessage(`{"input":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Runs().Claim(t.Context(), ws, run.ID, "dead", 150*time.Millisecond, false); err != nil {
		t.Fatal(err)
	}
	if err := st.Runs().Checkpoint(t.Context(), ws, store.Checkpoint{RunID: run.ID, Key: "a", NodeID: "a", Output: json.RawMessage(`"saved memo"`)}, nil); err != nil {
		t.Fatal(err)
	}
	svc := controlplane.New(st, eng, controlplane.Options{Owner: "alive", LeaseTTL: 150 * time.Millisecond})
	if n, err := svc.Sweep(t.Context()); err != nil || n != 0 {
		t.Fatalf("Sweep with a live lease = %d, %v", n, err)
	}
	time.Sleep(200 * time.Millisecond)
	if n, err := svc.Sweep(t.Context()); err != nil || n != 1 {
		t.Fatalf("Sweep after expiry = %d, %v", n, err)
	}
	svc.Wait()
	done := waitStatus(t, st, ws, run.ID, store.RunSucceeded, store.RunFailed)
	if string(done.Output) != `"saved memo!"` {
		t.Fatalf("run %s output %s (%s)", done.Status, done.Output, done.Error)
	}
	if n := len(res.LLM.Requests()); n != 0 {
		t.Errorf("model called %d times; node a was saved", n)
	}
}

// TestLiveEventsInOrderAcrossBranches: a follower of a run whose parallel
// branches emit at once gets every event the run stores, in Seq order. A
// follower skips an event numbered below one it has seen, so events
// published out of order were lost to it (the studio's run view missed a
// contract's result this way).
func TestLiveEventsInOrderAcrossBranches(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "db"))
	ws := workspace(t, st)
	svc := controlplane.New(st, workflowtest.Engine(t, workflow.Services{}), controlplane.Options{})
	nodes := []string{`{"id":"start","type":"start"}`, `{"id":"gate","type":"code","config":{"mode":"javascript","script":"var t=Date.now(); while(Date.now()-t<30){}; 'x'"}}`, `{"id":"end","type":"end"}`}
	edges := []string{`{"id":"g","source":"start","target":"gate"}`}
	for i := range 8 {
		id := fmt.Sprintf("b%d", i)
		nodes = append(nodes, fmt.Sprintf(`{"id":%q,"type":"code","config":{"mode":"template","template":"{{input}}"}}`, id))
		edges = append(edges, fmt.Sprintf(`{"id":"in%d","source":"gate","target":%q}`, i, id), fmt.Sprintf(`{"id":"out%d","source":%q,"target":"end"}`, i, id))
	}
	def := `{"name":"fan","nodes":[` + strings.Join(nodes, ",") + `],"edges":[` + strings.Join(edges, ",") + `]}`
	for i := range 20 {
		run, err := svc.Start(t.Context(), controlplane.StartRequest{WorkspaceID: ws, Definition: json.RawMessage(def), Input: controlplane.RunInput{Input: "x"}})
		if err != nil {
			t.Fatal(err)
		}
		waitStatus(t, st, ws, run.ID, store.RunRunning)
		var got []int64
		if err := svc.Events(t.Context(), ws, run.ID, 0, func(ev workflow.Event) bool { got = append(got, ev.Seq); return true }); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, st, ws, run.ID, store.RunSucceeded)
		stored, err := st.Runs().Events(t.Context(), ws, run.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var want []int64
		for _, ev := range stored {
			want = append(want, ev.Seq)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("run %d: the follower got events %v; the run stored %v", i, got, want)
		}
	}
	svc.Wait()
}
