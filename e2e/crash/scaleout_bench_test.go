package crash

import (
	"context"
	"fmt"
	"os"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/database"
	"github.com/agentcraftlab/agentcraft/queue"
)

// benchScaleoutEnv turns TestBinaryScaleoutBench on; benchScaleoutRunsEnv
// sets its runs per configuration (default 300).
const (
	benchScaleoutEnv     = "AGENTCRAFT_BENCH_SCALEOUT"
	benchScaleoutRunsEnv = "AGENTCRAFT_BENCH_SCALEOUT_RUNS"
)

// scaleoutResult is one configuration's measurement.
type scaleoutResult struct {
	name     string
	perSec   float64
	p50, p99 time.Duration
}

// TestBinaryScaleoutBench measures, in one run on the test PostgreSQL,
// the throughput of a 10-node durable workflow (nine code nodes and an
// http-request node whose request is counted; each node checkpointed)
// executed by 1, 2 and 4 `agentcraft worker` processes, and by the one
// SQLite `agentcraft serve`, against River's own throughput of no-op jobs
// on the same database with the same client settings (the queue package,
// 10 workers, the same fetch cooldown and poll interval) as the ceiling;
// and one worker with 40 run slots, to tell process scale-out from more
// runs at once.
// It checks that no run was executed twice (one checkpoint per node per
// run, one counted request per run) and measures dispatch latency (a
// run's creation, just before its job is inserted, to its run_started
// event; a job's insert to its handler for River) of runs enqueued one at
// a time onto idle workers: LISTEN/NOTIFY on PostgreSQL; on SQLite the
// runs come from the test process, another process than serve, so they
// wait for serve's 1 s poll (what serve enqueues itself is handed over in
// process).
//
//	AGENTCRAFT_BENCH_SCALEOUT=1 AGENTCRAFT_TEST_POSTGRES_DSN=... go test -count=1 -v -run TestBinaryScaleoutBench -timeout 30m ./e2e/crash
func TestBinaryScaleoutBench(t *testing.T) {
	if os.Getenv(benchScaleoutEnv) == "" {
		t.Skipf("set %s=1 (and %s) to measure scale-out", benchScaleoutEnv, dsnEnv)
	}
	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		t.Skipf("set %s to run on PostgreSQL", dsnEnv)
	}
	n := 300
	if v := os.Getenv(benchScaleoutRunsEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 10 {
			t.Fatalf("%s=%q is not a number of runs (10 or more)", benchScaleoutRunsEnv, v)
		}
	}
	const latencyRuns = 60
	http := []int{5}
	def := scaleoutFlow(10, http...)
	agentcraftBinary(t) // built before any clock starts

	var results []scaleoutResult
	results = append(results, riverCeiling(t, schemaURL(t, dsn), n, latencyRuns))
	// The last row tells process scale-out from concurrency: one process
	// with as many run slots as four.
	for _, c := range []struct{ procs, slots int }{{1, 10}, {2, 10}, {4, 10}, {1, 40}} {
		t.Run(fmt.Sprintf("postgres-%dx%d", c.procs, c.slots), func(t *testing.T) {
			f := newFleet(t, schemaURL(t, dsn), fmt.Sprintf("workflows: {workers: %d}\n", c.slots), 0)
			for i := range c.procs {
				f.worker(t, fmt.Sprintf("w%d", i+1))
			}
			r := f.measure(t, def, n, latencyRuns, http)
			r.name = fmt.Sprintf("PostgreSQL, %d worker × %d slots", c.procs, c.slots)
			if c.procs > 1 {
				r.name = fmt.Sprintf("PostgreSQL, %d workers × %d slots", c.procs, c.slots)
			}
			results = append(results, r)
		})
	}
	t.Run("sqlite-serve", func(t *testing.T) {
		dir := t.TempDir()
		f := newFleet(t, "sqlite://"+dir+"/agentcraft.db", "workflows: {workers: 10}\n", 0)
		startServe(t, "serve", f.cfg, freeAddr(t))
		r := f.measure(t, def, n, latencyRuns, http)
		r.name = "SQLite, one serve process"
		results = append(results, r)
	})
	if len(results) != 6 {
		t.Fatalf("%d of 6 configurations measured", len(results))
	}

	var b strings.Builder
	fmt.Fprintf(&b, "\n%d runs of a 10-node workflow per configuration; %d CPUs (GOMAXPROCS %d), %s\n", n, goruntime.NumCPU(), goruntime.GOMAXPROCS(0), time.Now().UTC().Format("2006-01-02"))
	fmt.Fprintf(&b, "| %-38s | %9s | %9s | %11s | %9s | %9s |\n", "configuration", "runs/s", "× River", "× 1 worker", "p50", "p99")
	fmt.Fprintf(&b, "|%s|%s|%s|%s|%s|%s|\n", strings.Repeat("-", 40), strings.Repeat("-", 11), strings.Repeat("-", 11), strings.Repeat("-", 13), strings.Repeat("-", 11), strings.Repeat("-", 11))
	ceiling, one := results[0].perSec, results[1].perSec
	for i, r := range results {
		vsOne := "-"
		if i >= 1 && i <= 4 {
			vsOne = fmt.Sprintf("%.2f", r.perSec/one)
		}
		fmt.Fprintf(&b, "| %-38s | %9.1f | %9.3f | %11s | %9s | %9s |\n", r.name, r.perSec, r.perSec/ceiling, vsOne,
			r.p50.Round(100*time.Microsecond), r.p99.Round(100*time.Microsecond))
	}
	t.Log(b.String())
}

// measure enqueues n runs of def at once and returns runs per second from
// the first enqueue to the last run final, after checking that none ran
// twice; then latency runs, one every 25ms, for the dispatch latency.
func (f *fleet) measure(t *testing.T, def []byte, n, latencyRuns int, http []int) scaleoutResult {
	t.Helper()
	// A warm-up run, so that no process pays its first plan or connection
	// inside the clock.
	warm := f.start(t, def, "warm-up")
	f.waitAll(t, []string{warm.ID}, time.Minute)

	began := time.Now()
	ids := f.startMany(t, def, n)
	f.waitAll(t, ids, 15*time.Minute)
	elapsed := time.Since(began)
	f.checkOnce(t, ids, 10, http)

	lat := make([]string, 0, latencyRuns)
	for i := range latencyRuns {
		lat = append(lat, f.start(t, def, fmt.Sprint("latency ", i)).ID)
		time.Sleep(25 * time.Millisecond)
	}
	f.waitAll(t, lat, 5*time.Minute)
	f.checkOnce(t, lat, 10, http)
	var ds []time.Duration
	for _, id := range lat {
		run, err := f.st.Runs().Get(t.Context(), f.ws, id)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := f.st.Runs().Events(t.Context(), f.ws, id, 0, 1)
		if err != nil || len(evs) == 0 || evs[0].Type != "run_started" {
			t.Fatalf("first event of %s: %+v, %v", id, evs, err)
		}
		ds = append(ds, evs[0].CreatedAt.Sub(run.CreatedAt))
	}
	p50, p99 := percentiles(ds)
	return scaleoutResult{perSec: float64(n) / elapsed.Seconds(), p50: p50, p99: p99}
}

// riverCeiling measures River's own throughput and latency on dbURL: the
// queue package's client (same settings as a worker's: 10 workers, the
// fetch cooldown and poll interval of PostgreSQL) working no-op jobs.
func riverCeiling(t *testing.T, dbURL string, n, latencyRuns int) scaleoutResult {
	t.Helper()
	ctx := t.Context()
	u, err := database.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	db, err := database.Open(ctx, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := queue.Migrate(ctx, db, ""); err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		queued  = map[string]time.Time{} // run id → insert time; guarded by mu
		started = map[string]time.Time{} // run id → handler start; guarded by mu
		handled atomic.Int64
	)
	q, err := queue.New(queue.Config{DB: db}, func(_ context.Context, args queue.RunArgs) error {
		now := time.Now()
		mu.Lock()
		if _, dup := started[args.RunID]; dup {
			t.Errorf("River ran job %s twice", args.RunID)
		}
		started[args.RunID] = now
		mu.Unlock()
		handled.Add(1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	enqueue := func(id string) {
		mu.Lock()
		queued[id] = time.Now()
		mu.Unlock()
		if err := q.EnqueueRun(context.Background(), queue.RunArgs{WorkspaceID: "bench", RunID: id}); err != nil {
			t.Error(err)
		}
	}
	wait := func(total int64) {
		deadline := time.Now().Add(5 * time.Minute)
		for handled.Load() < total {
			if time.Now().After(deadline) {
				t.Fatalf("River handled %d of %d jobs in 5m", handled.Load(), total)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	enqueue("warm-up")
	wait(1)

	began := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				enqueue(fmt.Sprint("job-", i))
			}
		})
	}
	wg.Wait()
	wait(int64(n + 1))
	elapsed := time.Since(began)

	var lat []string
	for i := range latencyRuns {
		id := fmt.Sprint("latency-", i)
		lat = append(lat, id)
		enqueue(id)
		time.Sleep(25 * time.Millisecond)
	}
	wait(int64(n + 1 + latencyRuns))
	if err := q.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var ds []time.Duration
	for _, id := range lat {
		ds = append(ds, started[id].Sub(queued[id]))
	}
	p50, p99 := percentiles(ds)
	return scaleoutResult{name: "River no-op jobs (ceiling, PostgreSQL)", perSec: float64(n) / elapsed.Seconds(), p50: p50, p99: p99}
}

// percentiles returns the 50th and 99th percentiles of ds (nearest rank).
func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(p float64) time.Duration {
		i := int(p*float64(len(s))+0.5) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return at(0.50), at(0.99)
}
