package crash

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/internal/database"
	"github.com/agentcraftlab/agentcraft/internal/egress"
	"github.com/agentcraftlab/agentcraft/queue"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/postgres"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/nodes"
)

const (
	dsnEnv = "AGENTCRAFT_TEST_POSTGRES_DSN"

	// Environment of the child process.
	childEnv     = "CRASH_CHILD"     // "1" makes the test binary the child
	dbEnv        = "CRASH_DB"        // sqlite://PATH or postgres://…
	schemaEnv    = "CRASH_SCHEMA"    // PostgreSQL schema ("" on SQLite)
	workspaceEnv = "CRASH_WORKSPACE" // the trial's workspace: its only run is the trial's
	hookEnv      = "CRASH_HOOK"      // base URL of the webhook counter

	// owner is the child's stable executor id: a restarted child takes back
	// the runs its killed predecessor leased (ResumeOwned).
	owner = "crash-child"

	// finalTimeout bounds the last, unkilled launch of a trial.
	finalTimeout = 30 * time.Second
)

// TestMain turns the test binary into the child when childEnv is set.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(child())
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir) // the agentcraft binary of binary_test.go
	}
	os.Exit(code)
}

// The workflow: 20 nodes between start and end, 12 of them http-request
// nodes (13 side effects: the loop runs its http node twice), with a
// parallel fan-out of 3 http branches and a loop of 2 iterations. Every
// node appends its id to a trail the counter echoes back, so the final
// output proves each node's output reached the next one, replayed or not.
//
//	start → h01 → c02 → h03 → h04 → c05 → h06 → p07 ⇉ {pa, pb, pc} → j11
//	      → l12 ⟲ (lh13 → lc14) ×2 → h15 → c16 → h17 → h18 → c19 → h20 → end
const expectedTrail = "go>h01>c02>h03>h04>c05>h06>p07(pa,pb,pc)>j11>lh13>lc14>lh13>lc14>h15>c16>h17>h18>c19>h20"

// effectKeys are the execution keys of the http-request nodes: the
// counter must see each, under Idempotency-Key "<run id>/<key>".
var effectKeys = []string{"h01", "h03", "h04", "h06", "pa", "pb", "pc", "l12#1/lh13", "l12#2/lh13", "h15", "h17", "h18", "h20"}

// maxInFlight is the most http-request nodes that run at once (the three
// parallel branches): the most effects one kill can leave unrecorded.
const maxInFlight = 3

func definition() json.RawMessage {
	httpNode := func(id string) map[string]any {
		return map[string]any{"id": id, "type": "http-request", "config": map[string]any{
			"method": "POST", "url": "{{vars.hook}}/" + id, "body": "{{input}}",
			"response_mapping": map[string]any{"node": "$.node", "trail": "$.trail"},
		}}
	}
	codeNode := func(id, tmpl string) map[string]any {
		return map[string]any{"id": id, "type": "code", "config": map[string]any{"mode": "template", "template": tmpl}}
	}
	trailOn := func(id string) map[string]any { return codeNode(id, "{{input.trail}}>"+id) }
	ns := []map[string]any{
		{"id": "start", "type": "start"},
		httpNode("h01"), trailOn("c02"), httpNode("h03"), httpNode("h04"), trailOn("c05"), httpNode("h06"),
		{"id": "p07", "type": "parallel", "config": map[string]any{"merge": "by_branch"}},
		httpNode("pa"), httpNode("pb"), httpNode("pc"),
		codeNode("j11", "{{nodes.h06.output.trail}}>p07({{input.pa.node}},{{input.pb.node}},{{input.pc.node}})>j11"),
		{"id": "l12", "type": "loop", "config": map[string]any{"condition": "true", "max_iterations": 2}},
		httpNode("lh13"), trailOn("lc14"),
		httpNode("h15"), trailOn("c16"), httpNode("h17"), httpNode("h18"), trailOn("c19"), httpNode("h20"),
		{"id": "end", "type": "end"},
	}
	var es []map[string]any
	edge := func(src, dst, handle string) {
		e := map[string]any{"id": fmt.Sprintf("e%d", len(es)+1), "source": src, "target": dst}
		if handle != "" {
			e["sourceHandle"] = handle
		}
		es = append(es, e)
	}
	chain := func(ids ...string) {
		for i := 1; i < len(ids); i++ {
			edge(ids[i-1], ids[i], "")
		}
	}
	chain("start", "h01", "c02", "h03", "h04", "c05", "h06", "p07")
	for _, b := range []string{"pa", "pb", "pc"} {
		edge("p07", b, "")
		edge(b, "j11", "")
	}
	chain("j11", "l12")
	edge("l12", "lh13", "body")
	chain("lh13", "lc14", "l12")
	edge("l12", "h15", "done")
	chain("h15", "c16", "h17", "h18", "c19", "h20", "end")
	b, err := json.Marshal(map[string]any{"name": "crash", "nodes": ns, "edges": es})
	if err != nil {
		panic(err)
	}
	return b
}

// child is the process the parent kills: it wires store, engine, control
// plane and job queue as `agentcraft serve` does (cmd/agentcraft/internal/cli), resumes
// what it owned, starts the trial's run unless it exists, prints
// "ready <run id> <resumed>", then "progress <duration>" when the run saves
// its next checkpoint and "done <status>" when the run is final.
func child() int {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := runChild(context.Background(), logger); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

func runChild(ctx context.Context, logger *slog.Logger) error {
	dbURL, schema, ws, hook := os.Getenv(dbEnv), os.Getenv(schemaEnv), os.Getenv(workspaceEnv), os.Getenv(hookEnv)
	tr := tracer(time.Now())
	tr("main")
	rt, err := serve(ctx, dbURL, schema, logger)
	if err != nil {
		return err
	}
	defer rt.close()
	st, svc := rt.st, rt.svc

	// Progress is timed from here, after the slow start-up: how soon the
	// restarted process saves the run's next checkpoint.
	began := time.Now()
	saved := -1
	if runs, err := st.Runs().List(ctx, ws, store.RunFilter{}); err == nil && len(runs) == 1 {
		cps, err := st.Runs().Checkpoints(ctx, ws, runs[0].ID)
		if err != nil {
			return err
		}
		saved = len(cps)
	}
	resumed, err := svc.ResumeOwned(ctx)
	if err != nil {
		return err
	}
	tr("resumed")

	// A launch killed between creating the run and reporting it leaves the
	// run in the workspace: find it rather than start a second one.
	runs, err := st.Runs().List(ctx, ws, store.RunFilter{})
	if err != nil {
		return err
	}
	var runID string
	switch len(runs) {
	case 0:
		run, err := svc.Start(ctx, controlplane.StartRequest{WorkspaceID: ws, Definition: definition(),
			Input: controlplane.RunInput{Input: "go", Vars: map[string]any{"hook": hook}}})
		if err != nil {
			return err
		}
		runID = run.ID
	case 1:
		runID = runs[0].ID
	default:
		return fmt.Errorf("workspace %s has %d runs, want 1", ws, len(runs))
	}
	tr("ready")
	fmt.Printf("ready %s %d\n", runID, resumed)

	progressed := saved < 0 // a run this launch started: nothing to resume
	deadline := time.Now().Add(2 * finalTimeout)
	for {
		run, err := st.Runs().Get(ctx, ws, runID)
		if err != nil {
			return err
		}
		if !progressed {
			cps, err := st.Runs().Checkpoints(ctx, ws, runID)
			if err != nil {
				return err
			}
			if len(cps) > saved {
				progressed = true
				fmt.Printf("progress %d\n", time.Since(began).Microseconds())
				tr(fmt.Sprintf("progress (checkpoint %s saved at %s)", cps[saved].Key, cps[saved].CreatedAt.Format(time.StampMicro)))
			}
		}
		if run.Status.Final() {
			tr("done")
			fmt.Printf("done %s\n", run.Status)
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("run %s still %s (lease %q) after %v", runID, run.Status, run.LeaseOwner, 2*finalTimeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
	err = rt.stop()
	tr("stopped")
	return err
}

// runtime is the durable workflow side of a server process.
type runtime struct {
	db  *database.DB
	st  store.Store
	svc *controlplane.Service
	q   *queue.Queue
}

// serve opens the store (without migrating: the parent did) and wires
// engine, control plane and job queue as `agentcraft serve` does
// (cmd/agentcraft/internal/cli/workflows.go), with the stable Owner, and starts the
// queue. It does not resume runs: call svc.ResumeOwned.
func serve(ctx context.Context, dbURL, schema string, logger *slog.Logger) (*runtime, error) {
	tr := tracer(time.Now())
	db, st, err := openStore(ctx, dbURL, schema)
	if err != nil {
		return nil, err
	}
	single := db.Kind() == database.SQLite
	closeStore := func() { st.Close(); db.Close() }
	tr("store_open")
	reg := workflow.NewRegistry()
	if err := nodes.RegisterBuiltins(reg); err != nil {
		closeStore()
		return nil, err
	}
	guard, err := (&egress.Policy{Allow: []string{"127.0.0.1"}}).Compile()
	if err != nil {
		closeStore()
		return nil, err
	}
	eng := workflow.NewEngine(reg, workflow.Services{HTTP: guard.Client(), Logger: logger}, nil)
	rt := &runtime{db: db, st: st}
	rt.svc = controlplane.New(st, eng, controlplane.Options{
		Owner:         owner,
		SingleProcess: single,
		Logger:        logger,
		Enqueue: func(ctx context.Context, workspaceID, runID string, wake bool) error {
			args := queue.RunArgs{WorkspaceID: workspaceID, RunID: runID}
			if wake {
				args.Wake = time.Now().UTC().Format(time.RFC3339Nano)
			}
			return rt.q.EnqueueRun(ctx, args)
		},
	})
	rt.q, err = queue.New(queue.Config{DB: db, Workers: 4, Logger: logger},
		func(ctx context.Context, args queue.RunArgs) error {
			return rt.svc.Execute(ctx, args.WorkspaceID, args.RunID)
		})
	if err != nil {
		closeStore()
		return nil, err
	}
	tr("queue_open")
	if err := rt.q.Start(ctx); err != nil {
		rt.close()
		return nil, err
	}
	tr("queue_start")
	return rt, nil
}

// stop stops the queue gracefully and waits for resumed runs.
func (rt *runtime) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := rt.q.Stop(ctx)
	rt.svc.Wait()
	return err
}

func (rt *runtime) close() {
	rt.q.Close()
	rt.st.Close()
	rt.db.Close()
}

// tracer prints start-up phases to stderr when CRASH_TRACE is set.
func tracer(start time.Time) func(phase string) {
	if os.Getenv("CRASH_TRACE") == "" {
		return func(string) {}
	}
	return func(phase string) {
		fmt.Fprintf(os.Stderr, "trace %s %v (%s)\n", phase, time.Since(start), time.Now().Format(time.StampMicro))
	}
}

// openStore opens the database at dbURL once, as `agentcraft serve`
// does, and the store on it (without migrating: the parent did). On SQLite
// the child is the only executor.
func openStore(ctx context.Context, dbURL, schema string) (*database.DB, store.Store, error) {
	u, err := database.Parse(dbURL)
	if err != nil {
		return nil, nil, err
	}
	opts := &database.Options{MaxConns: 8}
	if u.Kind == database.Postgres {
		opts.Schema = schema
	}
	db, err := database.Open(ctx, u, opts)
	if err != nil {
		return nil, nil, err
	}
	var st store.Store
	if u.Kind == database.SQLite {
		st, err = sqlite.New(db, nil)
	} else {
		st, err = postgres.New(db, nil)
	}
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, st, nil
}

// counter is the webhook receiver: it counts requests per Idempotency-Key
// and echoes the trail of the request body with the node (the URL path)
// appended.
type counter struct {
	delay time.Duration // slept per request, to widen the window a kill can hit

	mu   sync.Mutex
	hits map[string]int // Idempotency-Key → requests received; guarded by mu
}

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the child died mid-request: nothing was delivered
	}
	node := strings.TrimPrefix(r.URL.Path, "/")
	c.mu.Lock()
	c.hits[r.Header.Get("Idempotency-Key")]++
	c.mu.Unlock()
	time.Sleep(c.delay)
	trail := string(body)
	var obj struct {
		Trail string `json:"trail"`
	}
	if json.Unmarshal(body, &obj) == nil && obj.Trail != "" {
		trail = obj.Trail
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"node": node, "trail": trail + ">" + node})
}

// of returns the hits of the run's keys, keyed by execution key.
func (c *counter) of(runID string) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, n := range c.hits {
		if key, ok := strings.CutPrefix(k, runID+"/"); ok {
			out[key] = n
		}
	}
	return out
}

func (c *counter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.hits {
		n += v
	}
	return n
}

// backend is the database the children share.
type backend struct {
	name   string
	dbURL  string
	schema string
	st     store.Store
}

func TestCrashSQLite(t *testing.T) {
	t.Parallel()
	runTrials(t, "sqlite", func(t *testing.T) backend {
		path := filepath.Join(t.TempDir(), "crash.db")
		st, err := sqlite.Open(t.Context(), path, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if err := st.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		return backend{name: "sqlite", dbURL: "sqlite://" + path, st: st}
	})
}

func TestCrashPostgres(t *testing.T) {
	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		t.Skipf("PostgreSQL crash test skipped: set %s (such as postgres://postgres@127.0.0.1:5432/test?sslmode=disable)", dsnEnv)
	}
	t.Parallel()
	runTrials(t, "postgres", func(t *testing.T) backend {
		schema := freshSchema(t, dsn)
		st, err := postgres.Open(t.Context(), dsn, &postgres.Options{Schema: schema, MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() }) // registered after the schema drop, so it runs first
		if err := st.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		return backend{name: "postgres", dbURL: dsn, schema: schema, st: st}
	})
}

// freshSchema returns the name of a schema that does not exist yet and is
// dropped, with everything in it, when t ends.
func freshSchema(t *testing.T, dsn string) string {
	t.Helper()
	var b [6]byte
	rand.Read(b[:])
	schema := "crash_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

// stats aggregates a test's trials for its closing log.
type stats struct {
	mu         sync.Mutex     // guards the fields below
	kills      int            // kills that landed
	inFlight   map[string]int // node in flight at a kill (or "startup", "finished") → kills
	dups       int
	resumeLat  []time.Duration // restart → next checkpoint saved
	trialTimes []time.Duration // of the trials that got to their checks
	failed     int             // trials that failed
}

// lanes is how many trials run at once, each lane on its own database
// (a child takes back every live run of its database, so lanes cannot
// share one). Children mostly wait (kill delays, start-up), so two lanes
// nearly halve the wall time.
const lanes = 2

// runTrials runs the trials in lanes, each lane on a database open
// returns, after a calibration run.
func runTrials(t *testing.T, name string, open func(t *testing.T) backend) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CRASH_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("CRASH_SEED: %v", err)
		}
	}
	t.Logf("%s: seed %d (replay with CRASH_SEED=%d)", name, seed, seed)

	cnt := &counter{delay: 3 * time.Millisecond, hits: map[string]int{}}
	srv := httptest.NewServer(cnt)
	t.Cleanup(srv.Close)

	trials := 20
	if testing.Short() {
		trials = 3
	}
	// A first run without kills measures start-up (launch → ready) and run
	// time (ready → done), which scale the kill delays so that kills land
	// all along the run, with -race or without.
	var cal calibration
	b := prepare(t, open)
	if !trial(t, b, -1, seed, mrand.New(mrand.NewPCG(seed, 99)), cnt, srv.URL, &stats{inFlight: map[string]int{}}, &cal) {
		return
	}
	t.Logf("%s: calibration: start-up %v, run %v, %d checkpoints", name, cal.startup, cal.run, cal.checkpoints)

	began := time.Now()
	s := &stats{inFlight: map[string]int{}}
	// Lanes are subtests run from goroutines rather than parallel
	// subtests: those would wait for a -parallel slot, which the two
	// top-level tests already hold.
	// Each lane draws from a generator of its own, seeded from the test's:
	// PCGs seeded (seed, 0) and (seed, 1) give correlated first draws.
	master := mrand.New(mrand.NewPCG(seed, 0))
	var wg sync.WaitGroup
	for lane := range lanes {
		laneSeed := master.Uint64()
		wg.Go(func() {
			t.Run(fmt.Sprintf("lane%d", lane), func(t *testing.T) {
				b := b
				if lane > 0 {
					b = prepare(t, open)
				}
				// A failed trial leaves its run final, so the lane goes
				// on (the count of failed trials says how often a fault
				// shows), unless failures pile up.
				rng := mrand.New(mrand.NewPCG(laneSeed, seed))
				failed := 0
				for i := lane; i < trials && failed < 3; i += lanes {
					if !trial(t, b, i, seed, rng, cnt, srv.URL, s, &cal) {
						failed++
					}
				}
				s.mu.Lock()
				s.failed += failed
				s.mu.Unlock()
			})
		})
	}
	wg.Wait()

	slices.Sort(s.resumeLat)
	var lat string
	if n := len(s.resumeLat); n > 0 {
		lat = fmt.Sprintf("min %v, median %v, max %v over %d restarts", s.resumeLat[0], s.resumeLat[n/2], s.resumeLat[n-1], n)
	}
	var total time.Duration
	for _, d := range s.trialTimes {
		total += d
	}
	t.Logf("%s: %d trials checked, %d failed, in %v (%d lanes); %d kills, %d duplicate deliveries, %d requests in all; trial time mean %v",
		name, len(s.trialTimes), s.failed, time.Since(began).Round(time.Millisecond), lanes, s.kills, s.dups, cnt.total(),
		(total / time.Duration(max(1, len(s.trialTimes)))).Round(time.Millisecond))
	t.Logf("%s: in flight at the kills: %v", name, s.inFlight)
	t.Logf("%s: restart → next checkpoint: %s", name, lat)
	if !t.Failed() && len(s.trialTimes) < trials {
		t.Errorf("%d trials ran, want %d", len(s.trialTimes), trials)
	}
}

// prepare opens a lane's database and migrates River's tables there, so
// that no kill lands in the middle of River's first migration.
func prepare(t *testing.T, open func(t *testing.T) backend) backend {
	b := open(t)
	db, st, err := openStore(t.Context(), b.dbURL, b.schema)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	defer st.Close()
	if _, err := queue.Migrate(t.Context(), db, ""); err != nil {
		t.Fatal(err)
	}
	return b
}

// launch is one run of the child process.
type launch struct {
	cmd    *exec.Cmd
	start  time.Time
	ready  chan string // the run id, once
	exited chan struct{}
	stderr *lockedBuffer

	mu       sync.Mutex // guards the fields below
	progress time.Duration
	done     string    // the final status the child saw
	readyAt  time.Time // when the ready line came
	doneAt   time.Time // when the done line came
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (lb *lockedBuffer) Write(p []byte) (int, error) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return lb.b.Write(p)
}

func (lb *lockedBuffer) String() string {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return lb.b.String()
}

func startChild(t *testing.T, ctx context.Context, b backend, workspaceID, hook string) *launch {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"=1", dbEnv+"="+b.dbURL, schemaEnv+"="+b.schema,
		workspaceEnv+"="+workspaceID, hookEnv+"="+hook)
	l := &launch{cmd: cmd, ready: make(chan string, 1), exited: make(chan struct{}), stderr: &lockedBuffer{}}
	cmd.Stderr = l.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	l.start = time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(l.exited)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) < 2 {
				continue
			}
			switch f[0] {
			case "ready":
				l.mu.Lock()
				l.readyAt = time.Now()
				l.mu.Unlock()
				l.ready <- f[1]
			case "progress":
				us, _ := strconv.ParseInt(f[1], 10, 64)
				l.mu.Lock()
				l.progress = time.Duration(us) * time.Microsecond
				l.mu.Unlock()
			case "done":
				l.mu.Lock()
				l.done = f[1]
				l.doneAt = time.Now()
				l.mu.Unlock()
			}
		}
	}()
	return l
}

// wait waits for the child to exit and returns its error.
func (l *launch) wait() error {
	<-l.exited
	return l.cmd.Wait()
}

// snapshot is the state right after a kill.
type snapshot struct {
	phase string          // "startup" (no ready line), "running" or "finished"
	saved map[string]bool // checkpoint keys
	hits  map[string]int  // counter hits of the run's keys
}

// calibration is measured by a trial without kills.
type calibration struct {
	startup     time.Duration // launch → ready
	run         time.Duration // ready → done
	checkpoints int           // of the finished run
}

// trial runs one trial and reports whether to go on. Trial -1 has no kills
// and fills cal; the others kill the child 1–3 times, with delays scaled
// by cal.
func trial(t *testing.T, b backend, i int, seed uint64, rng *mrand.Rand, cnt *counter, hook string, s *stats, cal *calibration) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*finalTimeout)
	defer cancel()
	began := time.Now()
	ws, err := b.st.Workspaces().Create(ctx, store.Workspace{Name: fmt.Sprintf("trial-%d-%d", i, seed)})
	if err != nil {
		t.Fatal(err)
	}
	runOf := func() (store.Run, bool) {
		runs, err := b.st.Runs().List(ctx, ws.ID, store.RunFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) > 1 {
			t.Fatalf("trial %d: %d runs in the workspace, want 1", i, len(runs))
		}
		if len(runs) == 0 {
			return store.Run{}, false
		}
		return runs[0], true
	}
	var logs []string
	passed := true
	fail := func(format string, args ...any) {
		t.Helper()
		passed = false
		t.Errorf("%s trial %d (seed %d): %s", b.name, i, seed, fmt.Sprintf(format, args...))
	}
	checkRace := func(l *launch, n int) {
		if e := l.stderr.String(); strings.Contains(e, "WARNING: DATA RACE") || strings.Contains(e, "panic:") {
			fail("launch %d stderr:\n%s", n, e)
		}
	}

	kills := 1 + rng.IntN(3)
	if i < 0 {
		kills = 0
	}
	var snaps []snapshot
	saved := 0 // checkpoints saved at the last kill
	for k := range kills {
		l := startChild(t, ctx, b, ws.ID, hook)
		phase := "running"
		if rng.IntN(4) == 0 {
			// Kill at a random time from launch, often before the child
			// is ready: during start-up, Start or ResumeOwned.
			d := time.Duration(rng.Int64N(int64(cal.startup + cal.run/4)))
			select {
			case <-time.After(time.Until(l.start.Add(d))):
			case <-l.exited:
			}
			select {
			case <-l.ready:
			default:
				phase = "startup"
			}
		} else {
			// Kill once the run has saved a random number of further
			// checkpoints, then a random 0–15 ms more, so that kills
			// land all along the run and inside nodes (an http node
			// takes a few ms) however slow the machine is: a delay
			// from launch alone mostly lands after the end, or before
			// the start, on a loaded machine.
			target := saved + rng.IntN(max(1, cal.checkpoints-saved))
			jitter := time.Duration(rng.IntN(16)) * time.Millisecond
			var runID string
			select {
			case runID = <-l.ready:
			case <-l.exited:
			case <-ctx.Done():
			}
			for runID != "" {
				cps, err := b.st.Runs().Checkpoints(ctx, ws.ID, runID)
				if err != nil {
					t.Fatal(err)
				}
				if len(cps) >= target {
					break
				}
				select {
				case <-time.After(5 * time.Millisecond):
					continue
				case <-l.exited:
				case <-ctx.Done():
				}
				break
			}
			select {
			case <-time.After(jitter):
			case <-l.exited:
			}
		}
		l.cmd.Process.Kill()
		err := l.wait()
		checkRace(l, k)
		l.mu.Lock()
		done := l.done
		l.mu.Unlock()
		if done != "" {
			phase = "finished"
		}
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("launch %d: %v", k, err)
		}
		// Let the counter take in requests the child wrote before it died.
		time.Sleep(20 * time.Millisecond)
		snap := snapshot{phase: phase, saved: map[string]bool{}, hits: map[string]int{}}
		inFlight := phase
		if run, ok := runOf(); ok {
			cps, err := b.st.Runs().Checkpoints(ctx, ws.ID, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, cp := range cps {
				snap.saved[cp.Key] = true
			}
			snap.hits = cnt.of(run.ID)
			saved = len(cps)
			if phase == "running" {
				inFlight = fmt.Sprintf("after %d checkpoints", len(cps))
				if len(cps) > 0 {
					inFlight = "after " + cps[len(cps)-1].Key
				}
			}
		}
		snaps = append(snaps, snap)
		logs = append(logs, inFlight)
		if phase == "finished" {
			break
		}
	}

	// The last launch runs to completion.
	l := startChild(t, ctx, b, ws.ID, hook)
	var finalErr error
	select {
	case <-l.exited:
		finalErr = l.wait()
	case <-time.After(finalTimeout):
		l.cmd.Process.Kill()
		l.wait()
		finalErr = fmt.Errorf("not done after %v", finalTimeout)
	}
	checkRace(l, len(snaps))
	if os.Getenv("CRASH_TRACE") != "" {
		t.Logf("final launch at %s: start-up %v; stderr:\n%s", l.start.Format(time.StampMicro), l.readyAt.Sub(l.start), l.stderr.String())
	}
	l.mu.Lock()
	progress := l.progress
	if i < 0 {
		cal.startup, cal.run = l.readyAt.Sub(l.start), l.doneAt.Sub(l.readyAt)
	}
	l.mu.Unlock()
	run, ok := runOf()
	if finalErr != nil || !ok || run.Status != store.RunSucceeded {
		fail("final launch: %v; kills [%s]; run found %v: status %q, error %q, lease %q until %v, output %s; child stderr:\n%s",
			finalErr, strings.Join(logs, "; "), ok, run.Status, run.Error, run.LeaseOwner, run.LeaseUntil, run.Output, l.stderr.String())
		if ok {
			dumpCheckpoints(t, b, ws.ID, run.ID)
		}
		return false
	}

	var out struct {
		Trail string `json:"trail"`
	}
	if err := json.Unmarshal(run.Output, &out); err != nil || out.Trail != expectedTrail {
		fail("output %s, want trail %q", run.Output, expectedTrail)
	}
	cps, err := b.st.Runs().Checkpoints(ctx, ws.ID, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, cp := range cps {
		seen[cp.Key]++
	}
	for k, n := range seen {
		if n > 1 {
			fail("checkpoint %q saved %d times", k, n)
		}
	}
	for _, k := range effectKeys {
		if seen[k] == 0 {
			fail("no checkpoint %q", k)
		}
	}

	hits := cnt.of(run.ID)
	dups := 0
	var dupLog []string
	for _, k := range effectKeys {
		if hits[k] == 0 {
			fail("effect %q never happened", k)
		}
	}
	if len(hits) != len(effectKeys) {
		fail("%d distinct effects %v, want %d %v", len(hits), hits, len(effectKeys), effectKeys)
	}
	for k, n := range hits {
		// A repeat is only allowed after a kill that found the effect
		// delivered but its checkpoint not saved; an effect whose
		// checkpoint was saved must never be repeated.
		allowed := 0
		for j, sn := range snaps {
			switch {
			case sn.saved[k] && n != sn.hits[k]:
				fail("effect %q repeated after its checkpoint was saved (kill %d: %d hits, now %d)", k, j, sn.hits[k], n)
			case !sn.saved[k] && sn.hits[k] > 0:
				allowed++
			}
		}
		if n > 1 {
			dups += n - 1
			dupLog = append(dupLog, fmt.Sprintf("%s×%d", k, n))
			if n-1 > allowed {
				fail("effect %q happened %d times; only %d kills caught it in flight", k, n, allowed)
			}
		}
	}
	if dups > maxInFlight*len(snaps) {
		fail("%d duplicate deliveries after %d kills, more than %d in flight per kill", dups, len(snaps), maxInFlight)
	}

	if i < 0 {
		cal.checkpoints = len(cps)
		if cal.startup <= 0 || cal.run <= 0 {
			t.Fatalf("calibration run: start-up %v, run %v", cal.startup, cal.run)
		}
	}
	took := time.Since(began)
	s.mu.Lock()
	s.kills += len(snaps)
	s.dups += dups
	for j, sn := range snaps {
		key := logs[j]
		if sn.phase == "running" {
			key = inFlightNode(cps, sn.saved)
		}
		s.inFlight[key]++
	}
	if progress > 0 && i >= 0 {
		s.resumeLat = append(s.resumeLat, progress)
	}
	s.trialTimes = append(s.trialTimes, took)
	s.mu.Unlock()
	slices.Sort(dupLog)
	t.Logf("%s trial %d: %d kills [%s], duplicates %v, restart → progress %v, %v",
		b.name, i, len(snaps), strings.Join(logs, "; "), dupLog, progress, took.Round(time.Millisecond))
	return passed
}

// inFlightNode names the node that was executing at a kill: the first
// execution, in the order the finished run saved them, not yet saved then.
func inFlightNode(cps []store.Checkpoint, saved map[string]bool) string {
	for _, cp := range cps {
		if !saved[cp.Key] {
			return cp.Key
		}
	}
	return "end (all saved)"
}

func dumpCheckpoints(t *testing.T, b backend, workspaceID, runID string) {
	t.Helper()
	cps, err := b.st.Runs().Checkpoints(context.Background(), workspaceID, runID)
	if err != nil {
		t.Logf("checkpoints: %v", err)
		return
	}
	for _, cp := range cps {
		t.Logf("checkpoint %s (%s) at %s: %s", cp.Key, cp.NodeID, cp.CreatedAt.Format(time.StampMicro), cp.Output)
	}
	evs, err := b.st.Runs().Events(context.Background(), workspaceID, runID, 0, 0)
	if err != nil {
		t.Logf("events: %v", err)
		return
	}
	for _, ev := range evs {
		t.Logf("event %d %s %s", ev.Seq, ev.Type, ev.Data)
	}
}
