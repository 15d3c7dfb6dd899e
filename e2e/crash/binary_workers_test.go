package crash

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/store"
)

// benchTasksEnv sets how many tasks TestBinaryWorkersTasks runs per
// configuration: 200 by default (CI), 1000 for the measurement.
const benchTasksEnv = "AGENTCRAFT_BENCH_TASKS"

// TestBinaryWorkersTasks runs the same batch of low tasks (a knowledge
// search and an answer from the model) on PostgreSQL through a web-tier
// serve and one worker, then two: no task is executed twice (the model
// answers each task's question exactly once, and each task has one
// step), and the throughput of both is reported.
func TestBinaryWorkersTasks(t *testing.T) {
	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		t.Skipf("set %s to run on PostgreSQL", dsnEnv)
	}
	n := 200
	if v := os.Getenv(benchTasksEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("%s=%q is not a number of tasks", benchTasksEnv, v)
		}
	}
	one := workerBatch(t, dsn, 1, n)
	two := workerBatch(t, dsn, 2, n)
	t.Logf("%d low tasks on PostgreSQL: 1 worker %.1f tasks/s, 2 workers %.1f tasks/s (×%.2f)", n, one, two, two/one)
}

// workerBatch runs n tasks with workers worker processes behind a serve
// that executes nothing, and returns tasks per second from the first
// submission to the last task done.
func workerBatch(t *testing.T, dsn string, workers, n int) float64 {
	t.Helper()
	llm := llmtest.NewOpenAI(t)
	for range n { // pushed, not repeated: the fake records what it scripts
		llm.Push(llmtest.Turn{Text: "Summary: the handbook covers it."})
	}
	dir := t.TempDir()
	cfg := binConfig{dir: dir, dbURL: schemaURL(t, dsn), llmURL: llm.URL,
		extra: "tasks: {model: fake/m}\nworkflows: {execute: false}\n"}
	addr := freeAddr(t)
	startServe(t, "serve", cfg, addr, "AGENTCRAFT_WORKER_ID=web")
	wcfg := cfg
	wcfg.extra = "tasks: {model: fake/m}\nworkflows: {workers: 10}\n"
	for i := range workers {
		w := startProc(t, fmt.Sprintf("worker-%d", i+1), wcfg.write(t, fmt.Sprintf("worker%d", i+1)), []string{fmt.Sprintf("AGENTCRAFT_WORKER_ID=worker-%d", i+1)}, "worker")
		eventually(t, 30*time.Second, "worker starting", func() bool { return strings.Contains(w.logs.String(), "worker_started") })
	}
	api(t, addr, "POST", "/api/kbs", `{"name":"handbook"}`, http.StatusCreated, nil)
	ingestText(t, addr, "handbook", "handbook.txt", "The handbook covers expenses, travel, leave and security.")

	began := time.Now()
	ids := make([]string, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				body := fmt.Sprintf(`{"intent":{"action":"search","object":"document","target":"question %d about the handbook"}}`, i)
				status, b := apiDo(t, addr, "POST", "/api/tasks", body)
				var out struct {
					Task store.Task `json:"task"`
				}
				if status != http.StatusCreated || json.Unmarshal(b, &out) != nil {
					t.Errorf("submit %d = %d %s", i, status, b)
					return
				}
				ids[i] = out.Task.ID
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	deadline := time.Now().Add(5 * time.Minute)
	for doneCount(t, addr) < n {
		if time.Now().After(deadline) {
			v := getTaskView(t, addr, ids[0])
			t.Fatalf("%d of %d tasks done with %d workers after 5m; %d model requests; first task %s, runs %d, steps %+v",
				doneCount(t, addr), n, workers, len(llm.Requests()), v.Task.Status, len(v.Steps), v.Steps)
		}
		time.Sleep(50 * time.Millisecond)
	}
	elapsed := time.Since(began)
	if len(llm.Requests()) == 0 {
		_, b := apiDo(t, addr, "GET", "/api/tasks/"+ids[0], "")
		t.Fatalf("no model request; first task: %s", b)
	}
	// Exactly once: one answer request per task's question, one step each.
	asked := map[string]int{}
	for _, r := range llm.Requests() {
		body := string(r.Body)
		i := strings.Index(body, "question ")
		if i < 0 {
			t.Fatalf("a model request names no question: %.2000s", body)
		}
		var q int
		if _, err := fmt.Sscanf(body[i:], "question %d", &q); err != nil {
			t.Fatalf("a model request: %v: %.2000s", err, body)
		}
		asked[fmt.Sprint(q)]++
	}
	for i := range n {
		if asked[fmt.Sprint(i)] != 1 {
			t.Errorf("task %d answered %d times, want once", i, asked[fmt.Sprint(i)])
		}
	}
	for _, id := range []string{ids[0], ids[n/2], ids[n-1]} {
		if v := getTaskView(t, addr, id); len(v.Steps) != 1 || v.Steps[0].Status != store.StepOK {
			t.Errorf("task %s steps %+v, want one ok step", id, v.Steps)
		}
	}
	return float64(n) / elapsed.Seconds()
}

// doneCount counts the done tasks, page by page.
func doneCount(t *testing.T, addr string) int {
	t.Helper()
	count, cursor := 0, ""
	for {
		var page store.TaskPage
		api(t, addr, "GET", "/api/tasks?status=done&limit=500&cursor="+cursor, "", http.StatusOK, &page)
		count += len(page.Tasks)
		if page.Next == "" {
			return count
		}
		cursor = page.Next
	}
}
