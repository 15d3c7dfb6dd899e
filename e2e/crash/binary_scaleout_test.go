package crash

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/internal/database"
	"github.com/agentcraftlab/agentcraft/queue"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/nodes"
)

// The scale-out tests run `agentcraft worker` processes on PostgreSQL:
// TestBinaryWorkersNoRunTwice (CI: 2 workers, 20 runs, none executed
// twice), TestBinaryWorkerDrain (SIGTERM mid-run: the run is handed back
// at a checkpoint and finished by the other worker, no node twice) and
// TestBinaryScaleoutBench (on demand: runs/s with 1, 2 and 4 workers, the
// SQLite serve, River's own ceiling, and dispatch latency).

// scaleoutFlow is a chain of n nodes after start: http-request nodes at
// the indexes in http (their effect is a request to hook, counted under
// "<run>/<node>"), code nodes (a template) elsewhere.
func scaleoutFlow(n int, http ...int) json.RawMessage {
	ns := []map[string]any{{"id": "start", "type": "start"}}
	var es []map[string]any
	prev := "start"
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("n%02d", i)
		node := map[string]any{"id": id, "type": "code", "config": map[string]any{"mode": "template", "template": "{{input}}>" + id}}
		if slices.Contains(http, i) {
			node = map[string]any{"id": id, "type": "http-request", "config": map[string]any{
				"method": "POST", "url": "{{vars.hook}}/" + id, "body": "{{input}}", "response_mapping": map[string]any{"trail": "$.trail"}}}
		}
		ns = append(ns, node)
		es = append(es, map[string]any{"id": fmt.Sprintf("e%d", i), "source": prev, "target": id})
		prev = id
	}
	ns = append(ns, map[string]any{"id": "end", "type": "end"})
	es = append(es, map[string]any{"id": "e_end", "source": prev, "target": "end"})
	b, err := json.Marshal(map[string]any{"name": "scaleout", "nodes": ns, "edges": es})
	if err != nil {
		panic(err)
	}
	return b
}

// fleet is a database with runs enqueued from the test process (as an
// API process in queue mode does) and executed by agentcraft processes.
type fleet struct {
	cfg  binConfig
	db   *database.DB
	st   store.Store
	q    *queue.Queue
	cp   *controlplane.Service
	ws   string
	hook *counter
	url  string // the counter's root
}

// newFleet migrates the database at dbURL with `agentcraft migrate` and
// opens the enqueuing side on it.
func newFleet(t *testing.T, dbURL, extra string, hookDelay time.Duration) *fleet {
	t.Helper()
	ctx := t.Context()
	hook := &counter{delay: hookDelay, hits: map[string]int{}}
	srv := httptest.NewServer(hook)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	f := &fleet{cfg: binConfig{dir: dir, dbURL: dbURL, extra: extra}, hook: hook, url: srv.URL}
	out, err := exec.Command(agentcraftBinary(t), "--config", f.cfg.write(t, "migrate"), "migrate").CombinedOutput()
	if err != nil {
		t.Fatalf("agentcraft migrate: %v\n%s", err, out)
	}
	db, st, err := openStore(ctx, dbURL, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f.db, f.st = db, st
	if f.q, err = queue.New(queue.Config{DB: db, InsertOnly: true}, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.q.Close() })
	reg := workflow.NewRegistry()
	if err := nodes.RegisterBuiltins(reg); err != nil {
		t.Fatal(err)
	}
	f.cp = controlplane.New(st, workflow.NewEngine(reg, workflow.Services{}, nil), controlplane.Options{Owner: "test-api",
		Enqueue: func(ctx context.Context, ws, id string, wake bool) error {
			return f.q.EnqueueRun(ctx, queue.RunArgs{WorkspaceID: ws, RunID: id})
		}})
	ws, err := st.Workspaces().GetOrCreate(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	f.ws = ws.ID
	return f
}

// worker starts `agentcraft worker` named id and waits until it works.
func (f *fleet) worker(t *testing.T, id string) *proc {
	t.Helper()
	p := startProc(t, id, f.cfg.write(t, id), []string{"AGENTCRAFT_WORKER_ID=" + id}, "worker")
	eventually(t, 60*time.Second, id+" starting", func() bool {
		select {
		case <-p.exited:
			t.Fatalf("%s exited: %v\n%s", id, p.err, p.logs.String())
		default:
		}
		return strings.Contains(p.logs.String(), "worker_started")
	})
	return p
}

// start enqueues a run of def.
func (f *fleet) start(t *testing.T, def json.RawMessage, input string) store.Run {
	t.Helper()
	run, err := f.cp.Start(t.Context(), controlplane.StartRequest{WorkspaceID: f.ws, Definition: def,
		Input: controlplane.RunInput{Input: input, Vars: map[string]any{"hook": f.url}}})
	if err != nil {
		t.Fatalf("start run: %v", err)
	}
	return run
}

// startMany enqueues n runs from 4 goroutines and returns their ids.
func (f *fleet) startMany(t *testing.T, def json.RawMessage, n int) []string {
	t.Helper()
	ids := make([]string, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				run, err := f.cp.Start(context.Background(), controlplane.StartRequest{WorkspaceID: f.ws, Definition: def,
					Input: controlplane.RunInput{Input: fmt.Sprint(i), Vars: map[string]any{"hook": f.url}}})
				if err != nil {
					t.Errorf("start run %d: %v", i, err)
					return
				}
				ids[i] = run.ID
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return ids
}

// finished counts the runs of ids that are final.
func (f *fleet) finished(t *testing.T, ids []string) int {
	t.Helper()
	var n int
	var err error
	if f.db.Kind() == database.Postgres {
		err = f.db.Pool().QueryRow(t.Context(), `SELECT count(*) FROM runs WHERE id = ANY($1) AND status NOT IN ('queued', 'running', 'waiting')`, ids).Scan(&n)
	} else {
		// ids are ours; one statement instead of one read per run.
		err = f.db.Reader().QueryRowContext(t.Context(), `SELECT count(*) FROM runs WHERE status NOT IN ('queued', 'running', 'waiting')
			AND id IN ('`+strings.Join(ids, "','")+`')`).Scan(&n)
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// waitAll waits until every run of ids is final.
func (f *fleet) waitAll(t *testing.T, ids []string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for f.finished(t, ids) < len(ids) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d runs final after %v", f.finished(t, ids), len(ids), within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkOnce fails t unless every run of ids succeeded with one checkpoint
// per node (n nodes) and each of its http nodes' effects happened once.
func (f *fleet) checkOnce(t *testing.T, ids []string, n int, http []int) {
	t.Helper()
	ctx := t.Context()
	for _, id := range ids {
		run, err := f.st.Runs().Get(ctx, f.ws, id)
		if err != nil {
			t.Fatal(err)
		}
		if run.Status != store.RunSucceeded {
			t.Errorf("run %s is %s (%q), want succeeded", id, run.Status, run.Error)
			continue
		}
		cps, err := f.st.Runs().Checkpoints(ctx, f.ws, id)
		if err != nil {
			t.Fatal(err)
		}
		perNode := map[string]int{}
		for _, cp := range cps {
			perNode[cp.NodeID]++
		}
		for i := 1; i <= n; i++ {
			if c := perNode[fmt.Sprintf("n%02d", i)]; c != 1 {
				t.Errorf("run %s: node n%02d has %d checkpoints, want 1", id, i, c)
			}
		}
		hits := f.hook.of(id)
		for _, i := range http {
			if c := hits[fmt.Sprintf("n%02d", i)]; c != 1 {
				t.Errorf("run %s: node n%02d's effect happened %d times, want once", id, i, c)
			}
		}
	}
}

// pgFleet is a fleet on a fresh schema of the test PostgreSQL.
func pgFleet(t *testing.T, extra string, hookDelay time.Duration) *fleet {
	t.Helper()
	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		t.Skipf("set %s to run on PostgreSQL", dsnEnv)
	}
	return newFleet(t, schemaURL(t, dsn), extra, hookDelay)
}

// TestBinaryWorkersNoRunTwice: two worker processes on PostgreSQL execute
// 20 runs of a 10-node workflow: every run succeeds, each node has one
// checkpoint, and each effect (an http-request node's request) happened
// once: no run was executed by both workers.
func TestBinaryWorkersNoRunTwice(t *testing.T) {
	t.Parallel()
	f := pgFleet(t, "workflows: {workers: 10}\n", 0)
	f.worker(t, "w1")
	f.worker(t, "w2")
	http := []int{2, 5, 9}
	ids := f.startMany(t, scaleoutFlow(10, http...), 20)
	f.waitAll(t, ids, 90*time.Second)
	f.checkOnce(t, ids, 10, http)
}

// workersJSON runs `agentcraft workers --json` on the fleet's database.
func (f *fleet) workersJSON(t *testing.T) map[string]controlplane.WorkerStatus {
	t.Helper()
	out, err := exec.Command(agentcraftBinary(t), "--config", f.cfg.write(t, "cli"), "workers", "--json").Output()
	if err != nil {
		t.Fatalf("agentcraft workers: %v", err)
	}
	got := map[string]controlplane.WorkerStatus{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var w controlplane.WorkerStatus
		if err := dec.Decode(&w); err != nil {
			t.Fatalf("agentcraft workers --json: %v\n%s", err, out)
		}
		got[w.ID] = w
	}
	return got
}

// TestBinaryWorkerDrain: worker w1 executes a run of ten http-request
// nodes of a second each and gets SIGTERM halfway, with worker.shutdown_timeout 1s: it
// takes no new job, hands the run back after the node in flight is saved
// (lease released, job enqueued again) and exits 0; w2 resumes the run at
// once, not after the 30s lease, and finishes it. Every node's effect
// happened once. `agentcraft workers` showed w1 holding the run's lease.
func TestBinaryWorkerDrain(t *testing.T) {
	t.Parallel()
	f := pgFleet(t, "workflows: {workers: 4}\nworker: {shutdown_timeout: 1s}\n", time.Second)
	all := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	w1 := f.worker(t, "w1")
	run := f.start(t, scaleoutFlow(10, all...), "go")
	eventually(t, 30*time.Second, "w1 at node 2", func() bool { return len(f.hook.of(run.ID)) >= 2 })

	// The registry shows w1 live with the run's lease; heartbeats are
	// every 5s, so the node it reports may lag.
	eventually(t, 15*time.Second, "w1 listed with the run", func() bool {
		w, ok := f.workersJSON(t)["w1"]
		return ok && w.Status == controlplane.WorkerLive && len(w.Leases) == 1 && w.Leases[0].RunID == run.ID && w.PID == w1.cmd.Process.Pid
	})
	w2 := f.worker(t, "w2")
	if got, err := f.st.Runs().Get(t.Context(), f.ws, run.ID); err != nil || got.LeaseOwner != "w1" || got.Status != store.RunRunning {
		t.Fatalf("before the SIGTERM the run is %s leased to %q (%v), want running on w1", got.Status, got.LeaseOwner, err)
	}

	if n := len(f.hook.of(run.ID)); n > 6 {
		t.Fatalf("the run reached node %d before w2 started: the machine is too slow for this test's timing", n)
	}
	term := time.Now()
	if err := w1.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w1.exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("w1 still running 20s after SIGTERM:\n%s", w1.logs.String())
	}
	if w1.err != nil {
		t.Errorf("w1 exited with %v, want 0 after a drain", w1.err)
	}
	if !strings.Contains(w1.logs.String(), "run_handed_back") {
		t.Errorf("w1 did not hand the run back:\n%s", w1.logs.String())
	}
	stopped := time.Since(term)
	f.waitAll(t, []string{run.ID}, 20*time.Second)
	done := time.Since(term)
	f.checkOnce(t, []string{run.ID}, 10, all)
	got, err := f.st.Runs().Get(t.Context(), f.ws, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Output) == "" {
		t.Errorf("run output empty")
	}
	// The 30s lease was not waited for: w2 finished the rest at once.
	if done > 15*time.Second {
		t.Errorf("the run finished %v after the SIGTERM: w2 waited for the lease", done)
	}
	if !strings.Contains(w2.logs.String(), "worker_started") {
		t.Errorf("w2 log: %s", w2.logs.String())
	}
	if _, ok := f.workersJSON(t)["w1"]; ok {
		t.Errorf("w1 still registered after it exited")
	}
	t.Logf("SIGTERM → w1 exited %v, run finished by w2 %v after the SIGTERM", stopped.Round(time.Millisecond), done.Round(time.Millisecond))
}
