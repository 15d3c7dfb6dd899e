package crash

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool/caldav/caldavtest"
)

// slowCalendar puts a delay of up to max before every request to the
// CalDAV server, so kills land while an approved step's PUT is in
// flight.
func slowCalendar(t *testing.T, cal *caldavtest.Server, max time.Duration) string {
	t.Helper()
	u, err := url.Parse(cal.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(rand.N(max))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + u.Path
}

type taskView struct {
	Task      store.Task        `json:"task"`
	Steps     []store.TaskStep  `json:"steps"`
	Events    []store.TaskEvent `json:"events"`
	Approvals []store.Approval  `json:"approvals"`
}

func getTaskView(t *testing.T, addr, id string) taskView {
	t.Helper()
	var v taskView
	api(t, addr, "GET", "/api/tasks/"+id, "", http.StatusOK, &v)
	return v
}

// killStats counts where the kills of a test landed.
type killStats struct {
	mu      sync.Mutex // guards phases
	phases  map[string]int
	restart []time.Duration
}

func (k *killStats) add(phase string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.phases == nil {
		k.phases = map[string]int{}
	}
	k.phases[phase]++
}

// taskKillTrials runs trials on one database: each submits tasks whose
// plan creates a calendar event (medium: approval first), kills serve
// with SIGKILL at a random moment while they are planned and parked,
// restarts it, approves them (or rejects one), kills it again at a
// random moment while the approved steps run, restarts it, and checks
// that every task ended, each event exists once per approved task
// (counted by its UID, the step's idempotency key), and each approval
// was decided and applied once.
func taskKillTrials(t *testing.T, dbURL string, trials int) {
	dir := t.TempDir()
	cal := caldavtest.New(t, "team", "pw")
	calURL := slowCalendar(t, cal, 60*time.Millisecond)
	cfg := binConfig{dir: dir, dbURL: dbURL, extra: fmt.Sprintf("tasks:\n  calendar: {url: %q, username: team, password: pw}\n", calURL)}
	addr := freeAddr(t)
	env := "AGENTCRAFT_WORKER_ID=serve-1" // a restart takes back its own runs at once
	p := startServe(t, "serve", cfg, addr, env)
	var ks killStats
	approvedTasks := map[string]bool{} // task id → approved (false: rejected)
	restart := func(phase string) {
		ks.add(phase)
		p.kill()
		began := time.Now()
		p = startServe(t, "serve", cfg, addr, env)
		ks.mu.Lock()
		ks.restart = append(ks.restart, time.Since(began))
		ks.mu.Unlock()
	}
	start := time.Now().Add(240 * time.Hour).Truncate(time.Hour).UTC()
	for trial := range trials {
		var ids []string
		for i := range 3 {
			when := start.Add(time.Duration(trial*3+i) * time.Hour).Format(time.RFC3339)
			body := fmt.Sprintf(`{"intent":{"action":"schedule","object":"calendar_event","target":"trial %d event %d","when":%q,"duration":"30m"}}`, trial, i, when)
			var out struct {
				Task store.Task `json:"task"`
			}
			api(t, addr, "POST", "/api/tasks", body, http.StatusCreated, &out)
			ids = append(ids, out.Task.ID)
		}
		// Kill while the runs plan, ask and park.
		time.Sleep(rand.N(40 * time.Millisecond))
		restart("asking")
		for _, id := range ids {
			waitTaskStatus(t, addr, id, "awaiting approval after the restart", store.TaskAwaitingApproval)
		}
		// Decide them concurrently, then kill while the steps run.
		var wg sync.WaitGroup
		for i, id := range ids {
			approve := i != 2 || trial%2 == 0 // every other trial rejects its third task
			approvedTasks[id] = approve
			verb := "reject"
			if approve {
				verb = "approve"
			}
			wg.Go(func() {
				status, b := apiDo(t, addr, "POST", "/api/tasks/"+id+"/"+verb, `{}`)
				if status != http.StatusOK {
					t.Errorf("%s %s = %d %s", verb, id, status, b)
				}
			})
		}
		wg.Wait()
		time.Sleep(rand.N(120 * time.Millisecond))
		restart("running")
		for _, id := range ids {
			waitTaskStatus(t, addr, id, "ending after the restart", store.TaskDone, store.TaskCancelled, store.TaskFailed, store.TaskExpired)
		}
		if t.Failed() {
			return
		}
	}
	// Every task ended as decided; each effect happened once.
	events := map[string]int{}
	for _, e := range cal.Events() {
		events[e.Summary]++
	}
	done := 0
	for id, approved := range approvedTasks {
		v := getTaskView(t, addr, id)
		want := store.TaskDone
		if !approved {
			want = store.TaskCancelled
		}
		if v.Task.Status != want {
			t.Errorf("task %s (%s) is %s, want %s", id, v.Task.Title, v.Task.Status, want)
		}
		decisions := 0
		for _, ev := range v.Events {
			if ev.Type == store.TaskEventApproved || ev.Type == store.TaskEventRejected {
				decisions++
			}
		}
		if len(v.Approvals) != 1 || decisions != 1 {
			t.Errorf("task %s: %d approvals, %d decision events; want one of each", id, len(v.Approvals), decisions)
		}
		okSteps := 0
		for _, s := range v.Steps {
			if s.Status == store.StepOK {
				okSteps++
			}
		}
		wantEvents := 0
		if approved {
			wantEvents, done = 1, done+1
		}
		if okSteps != wantEvents || events[v.Task.Title] != wantEvents {
			t.Errorf("task %s (%s): %d ok steps, %d calendar events; want %d", id, v.Task.Title, okSteps, events[v.Task.Title], wantEvents)
		}
	}
	if len(cal.Events()) != done {
		t.Errorf("%d calendar events for %d approved tasks", len(cal.Events()), done)
	}
	puts := 0
	for _, e := range cal.Events() {
		puts += cal.Puts(e.UID)
	}
	slices.Sort(ks.restart)
	t.Logf("%d trials, %d tasks (%d approved), kills %v, restart to healthy median %v; %d PUTs for %d events (a repeated PUT is a step resumed after a kill, answered 412 and recognised)",
		trials, len(approvedTasks), done, ks.phases, ks.restart[len(ks.restart)/2].Round(time.Millisecond), puts, len(cal.Events()))
	p.kill()
}

// TestBinaryTaskKillSQLite: 20 trials of kill -9 around approvals and
// their steps, on SQLite.
func TestBinaryTaskKillSQLite(t *testing.T) {
	t.Parallel()
	taskKillTrials(t, "sqlite://"+filepath.Join(t.TempDir(), "agentcraft.db"), 20)
}

// TestBinaryTaskKillPostgres: the same on PostgreSQL.
func TestBinaryTaskKillPostgres(t *testing.T) {
	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		t.Skipf("set %s to run on PostgreSQL", dsnEnv)
	}
	t.Parallel()
	taskKillTrials(t, schemaURL(t, dsn), 20)
}

// waitTaskStatus waits until the task is in one of want, failing with
// the task's whole view (and its runs' errors) when it does not get there.
func waitTaskStatus(t *testing.T, addr, id, what string, want ...store.TaskStatus) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		v := getTaskView(t, addr, id)
		if slices.Contains(want, v.Task.Status) {
			return
		}
		if time.Now().After(deadline) {
			_, b := apiDo(t, addr, "GET", "/api/tasks/"+id, "")
			t.Fatalf("task %s %s: still %s after 30s; view: %s", id, what, v.Task.Status, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// schemaURL creates a fresh schema (dropped at the end of the test) and
// returns dsn pointing at it: the database.url of a binary under test.
func schemaURL(t *testing.T, dsn string) string {
	t.Helper()
	schema := freshSchema(t, dsn)
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(t.Context(), `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize())
	conn.Close(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "search_path=" + schema
}
