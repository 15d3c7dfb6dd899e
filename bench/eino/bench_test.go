package eino

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cloudwego/eino/compose"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
	"github.com/agentcraftlab/agentcraft/workflow"
)

const (
	chainNodes  = 100
	fanoutNodes = 1000
	// input has spaces around it so that every node's trim is visible in
	// the output of the first node.
	input = "  hello  "
	want  = "hello"
)

func BenchmarkChain100(b *testing.B) {
	src := chainJSON(chainNodes)
	b.Run("agentcraft_memory", func(b *testing.B) { benchAgentCraft(b, src, chainNodes, nil) })
	b.Run("agentcraft_sqlite", func(b *testing.B) { benchAgentCraft(b, src, chainNodes, openStore(b)) })
	b.Run("eino", func(b *testing.B) { benchEino(b, einoChain, chainNodes, compose.AnyPredecessor) })
	b.Run("eino_allpred", func(b *testing.B) { benchEino(b, einoChain, chainNodes, compose.AllPredecessor) })
}

func BenchmarkFanout1000(b *testing.B) {
	src := fanoutJSON(fanoutNodes)
	b.Run("agentcraft_memory", func(b *testing.B) { benchAgentCraft(b, src, fanoutNodes, nil) })
	b.Run("agentcraft_sqlite", func(b *testing.B) { benchAgentCraft(b, src, fanoutNodes, openStore(b)) })
	b.Run("eino", func(b *testing.B) { benchEino(b, einoFanout, fanoutNodes, compose.AnyPredecessor) })
	b.Run("eino_allpred", func(b *testing.B) { benchEino(b, einoFanout, fanoutNodes, compose.AllPredecessor) })
}

// einoCompiler builds and compiles one of the Eino graphs.
type einoCompiler func(ctx context.Context, n int, mode compose.NodeTriggerMode) (compose.Runnable[string, string], error)

// durable is a store to checkpoint runs in.
type durable struct {
	runs        store.Runs
	workspaceID string
}

// benchAgentCraft runs src once per op; with d, each op first creates its
// run row and checkpoints every node execution in d.
func benchAgentCraft(b *testing.B, src []byte, nodes int, d *durable) {
	e, p, err := prepare(src)
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		req := workflow.Request{RunID: "r", Input: input}
		if d != nil {
			run, err := d.runs.Create(ctx, store.Run{WorkspaceID: d.workspaceID, Definition: src, Input: []byte(`"  hello  "`)})
			if err != nil {
				b.Fatal(err)
			}
			req.RunID, req.WorkspaceID = run.ID, d.workspaceID
			req.Checkpoints = controlplane.NewCheckpointer(d.runs, d.workspaceID, run.ID)
		}
		if out := e.Run(ctx, p, req); out.Status != workflow.StatusSucceeded {
			b.Fatalf("run %s: %s", out.Status, out.Error)
		}
	}
	reportPerNode(b, nodes)
}

func benchEino(b *testing.B, compile einoCompiler, nodes int, mode compose.NodeTriggerMode) {
	ctx := b.Context()
	r, err := compile(ctx, nodes, mode)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Invoke(ctx, input); err != nil {
			b.Fatal(err)
		}
	}
	reportPerNode(b, nodes)
}

// reportPerNode reports the time per working node (the chain's or the
// branches' code nodes; start, end, parallel and join are not counted).
func reportPerNode(b *testing.B, nodes int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nodes), "ns/node")
}

func openStore(tb testing.TB) *durable {
	tb.Helper()
	ctx := tb.Context()
	st, err := sqlite.Open(ctx, filepath.Join(tb.TempDir(), "db"), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	ws, err := st.Workspaces().GetOrCreate(ctx, "bench")
	if err != nil {
		tb.Fatal(err)
	}
	return &durable{runs: st.Runs(), workspaceID: ws.ID}
}

// TestSameOutput runs every benchmarked graph once and checks that both
// engines give the same output, so the benchmarks compare equal work.
func TestSameOutput(t *testing.T) {
	ctx := t.Context()
	d := openStore(t)

	runAC := func(t *testing.T, src []byte, d *durable) (string, []store.Checkpoint) {
		t.Helper()
		e, p, err := prepare(src)
		if err != nil {
			t.Fatal(err)
		}
		req := workflow.Request{RunID: "r", Input: input}
		if d != nil {
			run, err := d.runs.Create(ctx, store.Run{WorkspaceID: d.workspaceID, Definition: src})
			if err != nil {
				t.Fatal(err)
			}
			req.RunID, req.WorkspaceID = run.ID, d.workspaceID
			req.Checkpoints = controlplane.NewCheckpointer(d.runs, d.workspaceID, run.ID)
		}
		out := e.Run(ctx, p, req)
		if out.Status != workflow.StatusSucceeded {
			t.Fatalf("agentcraft run %s: %s", out.Status, out.Error)
		}
		s, ok := out.Output.(string)
		if !ok {
			t.Fatalf("agentcraft output is %T, want string", out.Output)
		}
		if d == nil {
			return s, nil
		}
		cps, err := d.runs.Checkpoints(ctx, d.workspaceID, req.RunID)
		if err != nil {
			t.Fatal(err)
		}
		return s, cps
	}
	runEino := func(t *testing.T, compile einoCompiler, n int, mode compose.NodeTriggerMode) string {
		t.Helper()
		r, err := compile(ctx, n, mode)
		if err != nil {
			t.Fatal(err)
		}
		s, err := r.Invoke(ctx, input)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	t.Run("chain", func(t *testing.T) {
		src := chainJSON(chainNodes)
		mem, _ := runAC(t, src, nil)
		dur, cps := runAC(t, src, d)
		any := runEino(t, einoChain, chainNodes, compose.AnyPredecessor)
		all := runEino(t, einoChain, chainNodes, compose.AllPredecessor)
		for name, got := range map[string]string{"agentcraft_memory": mem, "agentcraft_sqlite": dur, "eino": any, "eino_allpred": all} {
			if got != want {
				t.Errorf("%s output = %q, want %q", name, got, want)
			}
		}
		if len(cps) != chainNodes {
			t.Errorf("sqlite run saved %d checkpoints, want %d (one per code node)", len(cps), chainNodes)
		}
	})

	t.Run("fanout", func(t *testing.T) {
		src := fanoutJSON(fanoutNodes)
		mem, _ := runAC(t, src, nil)
		dur, cps := runAC(t, src, d)
		any := runEino(t, einoFanout, fanoutNodes, compose.AnyPredecessor)
		all := runEino(t, einoFanout, fanoutNodes, compose.AllPredecessor)
		wantParts := slices.Repeat([]string{want}, fanoutNodes)
		for name, got := range map[string]string{"agentcraft_memory": mem, "agentcraft_sqlite": dur, "eino": any, "eino_allpred": all} {
			// Eino merges fan-in in map order; compare the parts as a set.
			parts := strings.Split(got, sep)
			slices.Sort(parts)
			if !slices.Equal(parts, wantParts) {
				t.Errorf("%s output has %d parts (first %q), want %d × %q", name, len(parts), parts[0], fanoutNodes, want)
			}
		}
		if mem != dur {
			t.Errorf("agentcraft outputs differ between memory and sqlite runs")
		}
		// One per branch node, plus the parallel node's merged output.
		if len(cps) != fanoutNodes+1 {
			t.Errorf("sqlite run saved %d checkpoints, want %d", len(cps), fanoutNodes+1)
		}
	})
}
