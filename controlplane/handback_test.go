package controlplane_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/nodes"
)

// steps is a node kind that counts its executions per node and holds the
// first execution of one node until released.
type steps struct {
	mu      sync.Mutex
	runs    map[string]int // node id → executions; guarded by mu
	hold    string
	entered chan struct{}
	release chan struct{}
}

func (s *steps) kind() workflow.Kind {
	return workflow.Kind{Type: "step", IsExecutable: true, Execute: func(ctx context.Context, x *workflow.Exec) (workflow.Result, error) {
		s.mu.Lock()
		s.runs[x.Node.ID]++
		first := s.runs[x.Node.ID] == 1
		s.mu.Unlock()
		if first && x.Node.ID == s.hold {
			close(s.entered)
			select {
			case <-s.release:
			case <-ctx.Done():
				return workflow.Result{}, ctx.Err()
			}
		}
		return workflow.Result{Output: x.Node.ID}, nil
	}}
}

func (s *steps) count(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[id]
}

const stepFlow = `{"name":"steps","nodes":[{"id":"start","type":"start"},
{"id":"s1","type":"step"},{"id":"s2","type":"step"},{"id":"s3","type":"step"},{"id":"end","type":"end"}],
"edges":[{"id":"e1","source":"start","target":"s1"},{"id":"e2","source":"s1","target":"s2"},
{"id":"e3","source":"s2","target":"s3"},{"id":"e4","source":"s3","target":"end"}]}`

// TestHandBackAtCheckpoint: a stopping worker's run stops after the node
// in flight is saved, releases its lease and is enqueued again; a second
// worker resumes it at once (no lease to wait out) and no node runs twice.
func TestHandBackAtCheckpoint(t *testing.T) {
	ctx := t.Context()
	st := openStore(t, filepath.Join(t.TempDir(), "db"))
	ws := workspace(t, st)
	kinds := &steps{runs: map[string]int{}, hold: "s2", entered: make(chan struct{}), release: make(chan struct{})}
	reg := workflow.NewRegistry()
	if err := nodes.RegisterBuiltins(reg); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(kinds.kind()); err != nil {
		t.Fatal(err)
	}
	eng := workflow.NewEngine(reg, workflow.Services{}, nil)
	type job struct {
		id   string
		wake bool
	}
	jobs := make(chan job, 4)
	enqueue := func(_ context.Context, _, id string, wake bool) error {
		jobs <- job{id, wake}
		return nil
	}
	w1 := controlplane.New(st, eng, controlplane.Options{Owner: "w1", Enqueue: enqueue})
	w2 := controlplane.New(st, eng, controlplane.Options{Owner: "w2", Enqueue: enqueue})
	run, err := w1.Start(ctx, controlplane.StartRequest{WorkspaceID: ws, Definition: json.RawMessage(stepFlow), Input: controlplane.RunInput{Input: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	<-jobs
	done := make(chan error, 1)
	go func() { done <- w1.Execute(ctx, ws, run.ID) }()
	<-kinds.entered
	if held := w1.Active(); len(held) != 1 || held[0].RunID != run.ID || held[0].Node != "s2" {
		t.Errorf("Active() = %+v, want the run at node s2", held)
	}

	w1.HandBack()
	close(kinds.release)
	if err := <-done; err != nil {
		t.Fatalf("Execute on the stopping worker = %v, want nil (handed back)", err)
	}
	got, err := st.Runs().Get(ctx, ws, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.RunQueued || got.LeaseOwner != "" {
		t.Fatalf("after the hand-back the run is %s leased to %q, want queued without a lease", got.Status, got.LeaseOwner)
	}
	select {
	case j := <-jobs:
		if j.id != run.ID || !j.wake {
			t.Errorf("hand-back enqueued %+v, want a wake of %s", j, run.ID)
		}
	default:
		t.Fatal("the handed-back run was not enqueued again")
	}
	if kinds.count("s3") != 0 {
		t.Errorf("s3 ran on the stopping worker")
	}
	if held := w1.Active(); len(held) != 0 {
		t.Errorf("Active() after the hand-back = %+v, want none", held)
	}

	// A run the stopping worker claims now goes back before any node runs.
	if err := w1.Execute(ctx, ws, run.ID); err != nil {
		t.Fatal(err)
	}
	<-jobs

	start := time.Now()
	if err := w2.Execute(ctx, ws, run.ID); err != nil {
		t.Fatal(err)
	}
	got = waitStatus(t, st, ws, run.ID, store.RunSucceeded, store.RunFailed)
	if got.Status != store.RunSucceeded || string(got.Output) != `"s3"` {
		t.Fatalf("run = %s %s (%q), want succeeded with s3's output", got.Status, got.Output, got.Error)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the second worker took %v: it waited for the lease", d)
	}
	for _, id := range []string{"s1", "s2", "s3"} {
		if n := kinds.count(id); n != 1 {
			t.Errorf("node %s executed %d times, want once", id, n)
		}
	}
	cps, err := st.Runs().Checkpoints(ctx, ws, run.ID)
	if err != nil || len(cps) != 3 {
		t.Errorf("checkpoints = %d (%v), want 3, one per node", len(cps), err)
	}
}
