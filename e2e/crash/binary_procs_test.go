package crash

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/postgres"
)

// TestBinaryTwoServesOneSQLite starts a second `agentcraft serve` on the
// SQLite file of a first one whose run has an agent node in flight. A
// serve on SQLite believes it is the only executor and takes back every
// live run at start, so without an exclusive lock the second executes the
// in-flight node again beside the first. Whatever the second does
// (refuse to start, or serve without executing), the node must not run
// twice.
//
// It fails without the lock (2 model requests): unskip it once h/procs's
// SQLite process lock is merged.
func TestBinaryTwoServesOneSQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	llm := llmtest.NewOpenAI(t,
		llmtest.Turn{Text: "slow", Fault: &llmtest.Fault{AfterChunks: 1, Stall: time.Minute}},
		llmtest.Turn{Text: "a second execution"},
	)
	cfg := binConfig{dir: dir, dbURL: "sqlite://" + filepath.Join(dir, "agentcraft.db"), llmURL: llm.URL}
	addr1 := freeAddr(t)
	startServe(t, "serve#1", cfg, addr1)
	var wf store.Workflow
	api(t, addr1, "POST", "/api/workflows", humanHookFlow("http://127.0.0.1:1"), http.StatusCreated, &wf)
	var run store.Run
	api(t, addr1, "POST", "/api/workflows/"+wf.ID+"/runs", `{"input": "budget"}`, http.StatusAccepted, &run)
	eventually(t, 15*time.Second, "the agent node's model request", func() bool { return llm.Active() == 1 })

	addr2 := freeAddr(t)
	p2 := startProc(t, "serve#2", cfg.write(t, addr2), nil, "serve")
	// Give the second process the time it takes to start and resume runs
	// (~0.3 s here), three times over.
	select {
	case <-p2.exited:
		t.Logf("the second serve refused to start: %v", p2.err)
	case <-time.After(3 * time.Second):
	}
	if n := len(llm.Requests()); n != 1 {
		t.Errorf("model requests = %d, want 1: the second serve executed the node the first one is running", n)
	}
}

// Takeover bounds of TestBinaryPostgresTakeover, from the settings serve
// and worker run with: a run's lease lasts controlplane's default 30 s
// without a heartbeat (renewed every 10 s), and every process sweeps for
// expired leases every 15 s (cmd/agentcraft/internal/cli startWorkflows). A killed
// executor's run is taken over at most lease + sweep after the kill.
const (
	takeoverLease = 30 * time.Second
	takeoverSweep = 15 * time.Second
	takeoverBound = takeoverLease + takeoverSweep + 5*time.Second // + River's fetch and start-up slack
)

// TestBinaryPostgresTakeover runs `agentcraft serve` and one
// `agentcraft worker` on PostgreSQL, kills with SIGKILL whichever of them
// executes a run whose agent node is in flight, and measures how long the
// other takes to run the node again (the second model request).
func TestBinaryPostgresTakeover(t *testing.T) {
	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		t.Skipf("set %s to run on PostgreSQL", dsnEnv)
	}
	t.Parallel()
	ctx := t.Context()
	schema := freshSchema(t, dsn)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize())
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	dir := t.TempDir()
	llm := llmtest.NewOpenAI(t,
		llmtest.Turn{Text: "lost", Fault: &llmtest.Fault{AfterChunks: 1, Stall: 2 * time.Minute}},
		llmtest.Turn{Text: "A memo."},
	)
	cfg := binConfig{dir: dir, dbURL: dsn + sep + "search_path=" + schema, llmURL: llm.URL}
	addr := freeAddr(t)
	procs := map[string]*proc{"serve-1": startServe(t, "serve", cfg, addr, "AGENTCRAFT_WORKER_ID=serve-1")}
	procs["worker-1"] = startProc(t, "worker", cfg.write(t, "worker"), []string{"AGENTCRAFT_WORKER_ID=worker-1"}, "worker")
	eventually(t, 30*time.Second, "the worker starting", func() bool { return strings.Contains(procs["worker-1"].logs.String(), "worker_started") })

	st, err := postgres.Open(ctx, dsn, &postgres.Options{Schema: schema, MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var wf store.Workflow
	api(t, addr, "POST", "/api/workflows", `{"name":"one","nodes":[{"id":"start","type":"start"},
{"id":"draft","type":"agent","config":{"model":"fake/fake-model","prompt":"Draft: {{input}}"}},{"id":"end","type":"end"}],
"edges":[{"id":"e1","source":"start","target":"draft"},{"id":"e2","source":"draft","target":"end"}]}`, http.StatusCreated, &wf)
	var run store.Run
	api(t, addr, "POST", "/api/workflows/"+wf.ID+"/runs", `{"input": "budget"}`, http.StatusAccepted, &run)
	eventually(t, 15*time.Second, "the agent node's model request", func() bool { return llm.Active() == 1 })
	got, err := st.Runs().Get(ctx, run.WorkspaceID, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	victim := procs[got.LeaseOwner]
	if victim == nil {
		t.Fatalf("run leased by %q, neither serve-1 nor worker-1", got.LeaseOwner)
	}
	killedAt := time.Now()
	victim.kill()
	eventually(t, takeoverBound, "the other process taking the run over", func() bool { return len(llm.Requests()) == 2 })
	took := time.Since(killedAt)
	t.Logf("killed %s (executing the run); the other process re-ran the in-flight node %v later (bound %v = lease %v + sweep %v + 5s)",
		got.LeaseOwner, took.Round(time.Millisecond), takeoverBound, takeoverLease, takeoverSweep)
	eventually(t, 15*time.Second, "the run finishing", func() bool {
		r, err := st.Runs().Get(ctx, run.WorkspaceID, run.ID)
		return err == nil && r.Status.Final()
	})
	final, _ := st.Runs().Get(ctx, run.WorkspaceID, run.ID)
	if final.Status != store.RunSucceeded || final.LeaseOwner == got.LeaseOwner {
		t.Errorf("run = %s (%q) by %q; want succeeded by the survivor", final.Status, final.Error, final.LeaseOwner)
	}
}
