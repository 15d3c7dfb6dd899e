package react

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// langGraphResult is what js/bench.mjs prints.
type langGraphResult struct {
	NsPerStep     float64 `json:"ns_per_step"`
	CPUNsPerStep  float64 `json:"cpu_ns_per_step"`
	Steps         int     `json:"steps"`
	Runs          int     `json:"runs"`
	Checkpointer  string  `json:"checkpointer"`
	Node          string  `json:"node"`
	LangGraph     string  `json:"langgraph"`
	LangChainCore string  `json:"langchain_core"`
}

// perStep is one line's figures for one transcript: wall and CPU time per
// step, and (Go only; -1 for LangGraph) allocations and bytes per step.
type perStep struct{ ns, cpu, allocs, bytes float64 }

// line is one measured implementation: a name and how to measure it for
// a transcript of n steps.
type line struct {
	name    string
	measure func(t *testing.T, n int) perStep
}

// TestCompareLangGraph runs the Go benchmarks (testing.Benchmark) and
// js/bench.mjs (LangGraph.js's createReactAgent) in one run, interleaved
// round by round so that the load of a shared machine falls on every line
// alike, and logs the medians and the ratio of each AgentCraft line to
// LangGraph per step. It needs Node.js and `npm ci` in js/, so it runs
// only with AGENTCRAFT_BENCH_LANGGRAPH=1; AGENTCRAFT_BENCH_ROUNDS sets the
// rounds (default 3, each about a second a line and transcript).
func TestCompareLangGraph(t *testing.T) {
	if os.Getenv("AGENTCRAFT_BENCH_LANGGRAPH") != "1" {
		t.Skip("set AGENTCRAFT_BENCH_LANGGRAPH=1 to compare with LangGraph.js (needs node and `npm ci` in js/)")
	}
	rounds := 3
	if s := os.Getenv("AGENTCRAFT_BENCH_ROUNDS"); s != "" {
		r, err := strconv.Atoi(s)
		if err != nil || r < 1 {
			t.Fatalf("AGENTCRAFT_BENCH_ROUNDS=%q: want a whole number of at least 1", s)
		}
		rounds = r
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not on PATH: install Node.js 20 or later")
	}
	js, err := filepath.Abs("js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(js, "node_modules", "@langchain", "langgraph")); err != nil {
		t.Fatal("js/node_modules has no @langchain/langgraph: run `npm ci` in bench/react/js first")
	}

	var versions langGraphResult
	langGraph := func(checkpointer string) func(t *testing.T, n int) perStep {
		return func(t *testing.T, n int) perStep {
			cmd := exec.CommandContext(t.Context(), node, "bench.mjs", "--steps", strconv.Itoa(n), "--checkpointer", checkpointer,
				"--seconds", "1", "--rounds", "1", "--warmup", "1")
			cmd.Dir = js
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("node bench.mjs: %v\n%s", err, stderr.Bytes())
			}
			var res langGraphResult
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("node bench.mjs printed %q: %v", out, err)
			}
			if res.Steps != n {
				t.Fatalf("node bench.mjs ran %d steps, want %d", res.Steps, n)
			}
			versions = res
			return perStep{ns: res.NsPerStep, cpu: res.CPUNsPerStep, allocs: -1, bytes: -1}
		}
	}
	goBench := func(f func(b *testing.B, steps int)) func(t *testing.T, n int) perStep {
		return func(t *testing.T, n int) perStep {
			r := testing.Benchmark(func(b *testing.B) { f(b, n) })
			if r.N == 0 {
				t.Fatal("the benchmark failed (run it with go test -bench to see why)")
			}
			return perStep{ns: r.Extra["ns/step"], cpu: r.Extra["cpu-ns/step"], allocs: r.Extra["allocs/step"], bytes: r.Extra["B/step"]}
		}
	}
	lines := []line{
		{"agentcraft autonomous (ReAct executor)", goBench(benchAutonomous)},
		{"agentcraft agent loop (Generate)", goBench(func(b *testing.B, n int) { benchAgent(b, n, true) })},
		{"agentcraft agent loop (Stream)", goBench(func(b *testing.B, n int) { benchAgent(b, n, false) })},
		{"langgraph createReactAgent", langGraph("none")},
		{"langgraph createReactAgent + MemorySaver", langGraph("memory")},
	}
	const peer = 3 // the line the ratios are against

	got := make(map[int][][]perStep) // by steps, by line: one per round
	for _, n := range stepCounts {
		got[n] = make([][]perStep, len(lines))
	}
	for r := range rounds {
		for _, n := range stepCounts {
			for i, l := range lines {
				m := l.measure(t, n)
				got[n][i] = append(got[n][i], m)
				t.Logf("round %d/%d steps=%d %s: %.0f ns/step, %.0f cpu-ns/step", r+1, rounds, n, l.name, m.ns, m.cpu)
			}
		}
	}
	med := func(n, i int, field func(perStep) float64) float64 {
		var xs []float64
		for _, m := range got[n][i] {
			xs = append(xs, field(m))
		}
		return median(xs)
	}
	ns := func(m perStep) float64 { return m.ns }
	cpu := func(m perStep) float64 { return m.cpu }

	var tab strings.Builder
	fmt.Fprintf(&tab, "LangGraph.js %s, @langchain/core %s, Node.js %s; medians of %d rounds\n\n", versions.LangGraph, versions.LangChainCore, versions.Node, rounds)
	tab.WriteString("| steps | line | ns/step | cpu-ns/step | allocs/step | B/step | time ÷ langgraph | cpu ÷ langgraph |\n" +
		"|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for _, n := range stepCounts {
		baseNs, baseCPU := med(n, peer, ns), med(n, peer, cpu)
		for i, l := range lines {
			allocs, b := "–", "–"
			if a := med(n, i, func(m perStep) float64 { return m.allocs }); a >= 0 {
				allocs, b = fmt.Sprintf("%.1f", a), thousands(med(n, i, func(m perStep) float64 { return m.bytes }))
			}
			fmt.Fprintf(&tab, "| %d | %s | %s | %s | %s | %s | %.4f | %.4f |\n", n, l.name, thousands(med(n, i, ns)), thousands(med(n, i, cpu)),
				allocs, b, med(n, i, ns)/baseNs, med(n, i, cpu)/baseCPU)
		}
	}
	t.Log("\n" + tab.String())
	for _, n := range stepCounts {
		ratio := med(n, 0, ns) / med(n, peer, ns)
		verdict := "met"
		if ratio > 0.2 {
			verdict = "MISSED"
		}
		t.Logf("steps=%d: autonomous ÷ langgraph per step = %.4f wall, %.4f cpu (target ≤ 0.2: %s)", n, ratio, med(n, 0, cpu)/med(n, peer, cpu), verdict)
	}
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}

// thousands formats x rounded, with commas between thousands.
func thousands(x float64) string {
	s := strconv.FormatInt(int64(x+0.5), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
