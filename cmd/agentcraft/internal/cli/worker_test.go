package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/queue"
	"github.com/agentcraftlab/agentcraft/store"
)

// TestWorkerExecutesQueuedRuns: a run queued by a process that does not
// execute (an API process enqueueing only) is executed by `agentcraft
// worker`.
func TestWorkerExecutesQueuedRuns(t *testing.T) {
	t.Chdir(t.TempDir())
	ctx := t.Context()
	cfg, err := config.Load("", []string{})
	if err != nil {
		t.Fatal(err)
	}
	// The enqueuing side: store, an insert-only queue, a service that never executes.
	u, err := parseDatabase(cfg.Database.URL)
	if err != nil {
		t.Fatal(err)
	}
	o, err := openDatabase(ctx, u, newLogger(&bytes.Buffer{}, cfg.Log))
	if err != nil {
		t.Fatal(err)
	}
	defer o.close()
	st := o.st
	q, err := queue.New(queue.Config{DB: o.db, InsertOnly: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	eng, err := newEngine(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	api := controlplane.New(st, eng, controlplane.Options{Enqueue: func(ctx context.Context, ws, id string, wake bool) error {
		return q.EnqueueRun(ctx, queue.RunArgs{WorkspaceID: ws, RunID: id})
	}})
	ws, err := st.Workspaces().GetOrCreate(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	def := `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"c","type":"code","config":{"mode":"text","operation":"upper"}},{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"c"},{"id":"e2","source":"c","target":"end"}]}`
	run, err := api.Start(ctx, controlplane.StartRequest{WorkspaceID: ws.ID, Definition: json.RawMessage(def), Input: controlplane.RunInput{Input: "queued"}})
	if err != nil {
		t.Fatal(err)
	}

	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	var logs bytes.Buffer
	go func() {
		root := newRoot(&env{stdout: &bytes.Buffer{}, stderr: &syncWriter{w: &logs}})
		root.SetArgs([]string{"worker"})
		done <- root.ExecuteContext(wctx)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := st.Runs().Get(ctx, ws.ID, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status == store.RunSucceeded {
			if string(got.Output) != `"QUEUED"` {
				t.Errorf("output %s", got.Output)
			}
			break
		}
		if got.Status.Final() || time.Now().After(deadline) {
			t.Fatalf("run %s (%s)\n%s", got.Status, got.Error, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("worker: %v", err)
	}
}
