package crash

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/queue"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/postgres"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/nodes"
)

// TestRestartWithQueuedJob is the kill that lands after Start enqueued
// the run's job and before a worker fetched it, made deterministic: the
// crashed process is a Service whose queue only inserts, so the run stays
// queued with an available job. The restarted process, wired as the crash
// child (and `agentcraft serve`), starts its queue, whose worker fetches
// that job, and calls ResumeOwned, which executes the same run: the run
// must still succeed, with every effect once.
func TestRestartWithQueuedJob(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "crash.db")
		st, err := sqlite.Open(t.Context(), path, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if err := st.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		restartWithQueuedJob(t, prepare(t, func(*testing.T) backend {
			return backend{name: "sqlite", dbURL: "sqlite://" + path, st: st}
		}))
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := os.Getenv(dsnEnv)
		if dsn == "" {
			t.Skipf("set %s to run on PostgreSQL", dsnEnv)
		}
		t.Parallel()
		schema := freshSchema(t, dsn)
		st, err := postgres.Open(t.Context(), dsn, &postgres.Options{Schema: schema, MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if err := st.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		restartWithQueuedJob(t, prepare(t, func(*testing.T) backend {
			return backend{name: "postgres", dbURL: dsn, schema: schema, st: st}
		}))
	})
}

func restartWithQueuedJob(t *testing.T, b backend) {
	ctx := t.Context()
	// A slow receiver keeps the two executions overlapping.
	cnt := &counter{delay: 30 * time.Millisecond, hits: map[string]int{}}
	srv := httptest.NewServer(cnt)
	t.Cleanup(srv.Close)
	ws, err := b.st.Workspaces().Create(ctx, store.Workspace{Name: "restart"})
	if err != nil {
		t.Fatal(err)
	}

	// The process that "dies" right after Start: its queue never works the
	// job it inserted.
	db1, st1, err := openStore(ctx, b.dbURL, b.schema)
	if err != nil {
		t.Fatal(err)
	}
	defer db1.Close()
	defer st1.Close()
	q1, err := queue.New(queue.Config{DB: db1, InsertOnly: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := workflow.NewRegistry()
	if err := nodes.RegisterBuiltins(reg); err != nil {
		t.Fatal(err)
	}
	svc1 := controlplane.New(b.st, workflow.NewEngine(reg, workflow.Services{}, nil), controlplane.Options{
		Owner: owner, SingleProcess: b.schema == "",
		Enqueue: func(ctx context.Context, workspaceID, runID string, _ bool) error {
			return q1.EnqueueRun(ctx, queue.RunArgs{WorkspaceID: workspaceID, RunID: runID})
		},
	})
	run, err := svc1.Start(ctx, controlplane.StartRequest{WorkspaceID: ws.ID, Definition: definition(),
		Input: controlplane.RunInput{Input: "go", Vars: map[string]any{"hook": srv.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	q1.Close()

	// The restarted process.
	var logs lockedBuffer
	rt, err := serve(ctx, b.dbURL, b.schema, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.close()
	if _, err := rt.svc.ResumeOwned(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(finalTimeout)
	for {
		run, err = b.st.Runs().Get(ctx, ws.ID, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if run.Status.Final() || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Let the other execution finish too before judging the effects.
	if err := rt.stop(); err != nil {
		t.Error(err)
	}

	var out struct {
		Trail string `json:"trail"`
	}
	_ = json.Unmarshal(run.Output, &out)
	if run.Status != store.RunSucceeded || out.Trail != expectedTrail {
		t.Errorf("run %s: status %q, error %q, output %s; want succeeded with trail %q\nlog:\n%s",
			run.ID, run.Status, run.Error, run.Output, expectedTrail, logs.String())
	}
	hits := cnt.of(run.ID)
	var dups []string
	for _, k := range effectKeys {
		if hits[k] != 1 {
			dups = append(dups, fmt.Sprintf("%s×%d", k, hits[k]))
		}
	}
	if len(dups) > 0 {
		// Nothing was in flight when the first process stopped: every
		// effect should have happened exactly once.
		t.Errorf("effects not delivered exactly once: %s", strings.Join(dups, " "))
	}
}
