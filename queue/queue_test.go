package queue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/internal/database"
)

// backends returns, for each database the queue supports, a function that
// gives a fresh, isolated, migrated database for one test. The PostgreSQL
// variant skips unless AGENTCRAFT_TEST_POSTGRES_DSN is set.
func backends(t *testing.T) map[string]func(t *testing.T) Config {
	t.Helper()
	m := map[string]func(t *testing.T) Config{
		"sqlite": func(t *testing.T) Config {
			return Config{DB: testDB(t, filepath.Join(t.TempDir(), "agentcraft.db"))}
		},
	}
	m["postgres"] = func(t *testing.T) Config {
		dsn := os.Getenv("AGENTCRAFT_TEST_POSTGRES_DSN")
		if dsn == "" {
			t.Skip("AGENTCRAFT_TEST_POSTGRES_DSN is unset; set it to a PostgreSQL URL to run this variant")
		}
		schema := newSchema(t, dsn)
		db, err := database.OpenPostgres(context.Background(), dsn, &database.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() }) // after the queue's Close, before the schema drop
		if _, err := Migrate(context.Background(), db, ""); err != nil {
			t.Fatal(err)
		}
		return Config{DB: db}
	}
	return m
}

// testDB opens and migrates a SQLite database at path (or
// database.MemoryPath) for tb, closed when it ends.
func testDB(tb testing.TB, path string) *database.DB {
	tb.Helper()
	db, err := database.OpenSQLite(context.Background(), path, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if _, err := Migrate(context.Background(), db, ""); err != nil {
		tb.Fatal(err)
	}
	return db
}

// newSchema creates schema q_<random> and drops it when the test ends, so
// parallel tests and packages never see each other's jobs.
func newSchema(t *testing.T, dsn string) string {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	schema := "q_" + hex.EncodeToString(b)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect to AGENTCRAFT_TEST_POSTGRES_DSN: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

// forEachBackend runs test once per backend, in parallel.
func forEachBackend(t *testing.T, test func(t *testing.T, cfg Config)) {
	for name, newCfg := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, newCfg(t))
		})
	}
}

// start opens and starts a queue for a test, stopping and closing it when
// the test ends.
func start(t *testing.T, cfg Config, h Handler) *Queue {
	t.Helper()
	cfg.testOnly = true
	ctx := context.Background()
	q, err := New(cfg, h)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := q.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if err := q.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := q.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return q
}

func enqueue(t *testing.T, q *Queue, runID string) {
	t.Helper()
	if err := q.EnqueueRun(context.Background(), RunArgs{WorkspaceID: "ws1", RunID: runID}); err != nil {
		t.Fatalf("EnqueueRun(%s): %v", runID, err)
	}
}

func receive[T any](t *testing.T, ch <-chan T, within time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(within):
		t.Fatalf("no %s within %v", what, within)
		panic("unreachable")
	}
}

func TestEnqueueRunsHandler(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg Config) {
		got := make(chan RunArgs, 1)
		q := start(t, cfg, func(ctx context.Context, args RunArgs) error {
			got <- args
			return nil
		})
		want := RunArgs{WorkspaceID: "ws1", RunID: "run1"}
		if err := q.EnqueueRun(context.Background(), want); err != nil {
			t.Fatal(err)
		}
		if args := receive(t, got, 2*time.Second, "handler call"); args != want {
			t.Errorf("handler got %+v, want %+v", args, want)
		}
	})
}

func TestEnqueueSameRunTwiceWhileRunning(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg Config) {
		var calls, running, overlap atomic.Int32
		started := make(chan struct{}, 2)
		release := make(chan struct{})
		q := start(t, cfg, func(ctx context.Context, args RunArgs) error {
			calls.Add(1)
			if running.Add(1) > 1 {
				overlap.Add(1)
			}
			defer running.Add(-1)
			started <- struct{}{}
			<-release
			return nil
		})
		enqueue(t, q, "run1")
		receive(t, started, 2*time.Second, "handler start")
		enqueue(t, q, "run1") // while the first job runs
		// A second job would start within a few poll intervals.
		select {
		case <-started:
			t.Error("handler started a second time for the same run while the first was running")
		case <-time.After(300 * time.Millisecond):
		}
		close(release)
		if overlap.Load() != 0 {
			t.Error("handler ran concurrently for the same run")
		}
		if n := calls.Load(); n != 1 {
			t.Errorf("handler called %d times, want 1", n)
		}
	})
}

func TestEnqueueAgainAfterCompletion(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg Config) {
		done := make(chan struct{}, 2)
		q := start(t, cfg, func(ctx context.Context, args RunArgs) error {
			done <- struct{}{}
			return nil
		})
		enqueue(t, q, "run1")
		receive(t, done, 2*time.Second, "first run")
		// Resuming a parked run enqueues it again once its job completed;
		// that must not be swallowed as a duplicate. River records the
		// completion shortly after the handler returns, so retry briefly.
		deadline := time.Now().Add(2 * time.Second)
		for {
			enqueue(t, q, "run1")
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatal("a run enqueued again after its job completed never ran")
			}
		}
	})
}

func TestFailedRunIsRetried(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg Config) {
		var attempts atomic.Int32
		var delays sync.Map // attempt → asked
		// A retried job becomes available without an insert notification,
		// so workers find it at their next poll: keep the test short on
		// PostgreSQL (1s default).
		cfg.PollInterval = 50 * time.Millisecond
		cfg.RetryDelay = func(attempt int) time.Duration {
			delays.Store(attempt, true)
			return 10 * time.Millisecond
		}
		succeeded := make(chan int32, 1)
		q := start(t, cfg, func(ctx context.Context, args RunArgs) error {
			n := attempts.Add(1)
			if n == 1 {
				return errors.New("provider unavailable")
			}
			succeeded <- n
			return nil
		})
		enqueue(t, q, "run1")
		if n := receive(t, succeeded, 3*time.Second, "successful retry"); n != 2 {
			t.Errorf("succeeded on attempt %d, want 2", n)
		}
		if _, ok := delays.Load(1); !ok {
			t.Error("RetryDelay was not asked about attempt 1")
		}
	})
}

func TestMaxAttempts(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg Config) {
		var attempts atomic.Int32
		cfg.MaxAttempts = 2
		cfg.PollInterval = 50 * time.Millisecond // as in TestFailedRunIsRetried
		cfg.RetryDelay = func(int) time.Duration { return time.Millisecond }
		q := start(t, cfg, func(ctx context.Context, args RunArgs) error {
			attempts.Add(1)
			return errors.New("always fails")
		})
		enqueue(t, q, "run1")
		deadline := time.Now().Add(2 * time.Second)
		for attempts.Load() < 2 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond) // room for a third attempt
		if n := attempts.Load(); n != 2 {
			t.Errorf("handler ran %d times with MaxAttempts 2, want 2", n)
		}
	})
}

func TestStopWaitsForRunningJob(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg Config) {
		started := make(chan struct{})
		release := make(chan struct{})
		var finished atomic.Bool
		cfg.testOnly = true
		q, err := New(cfg, func(ctx context.Context, args RunArgs) error {
			close(started)
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
			finished.Store(true)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		if err := q.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		enqueue(t, q, "run1")
		receive(t, started, 2*time.Second, "handler start")

		stopped := make(chan error, 1)
		go func() { stopped <- q.Stop(context.Background()) }()
		select {
		case err := <-stopped:
			t.Fatalf("Stop returned (%v) while a job was running", err)
		case <-time.After(200 * time.Millisecond):
		}
		close(release)
		if err := receive(t, stopped, 5*time.Second, "Stop return"); err != nil {
			t.Errorf("Stop: %v", err)
		}
		if !finished.Load() {
			t.Error("Stop returned before the running job finished")
		}
		if err := q.Stop(context.Background()); err != nil {
			t.Errorf("second Stop: %v", err)
		}
	})
}

func TestStopCancelsJobsWhenContextEnds(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg Config) {
		started := make(chan struct{})
		cancelled := make(chan struct{})
		cfg.testOnly = true
		q, err := New(cfg, func(ctx context.Context, args RunArgs) error {
			close(started)
			<-ctx.Done()
			close(cancelled)
			return ctx.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		if err := q.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		enqueue(t, q, "run1")
		receive(t, started, 2*time.Second, "handler start")

		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		err = q.Stop(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Stop = %v, want an error wrapping context.DeadlineExceeded", err)
		}
		select {
		case <-cancelled:
		default:
			t.Error("Stop returned without cancelling the running job")
		}
	})
}

func TestManyJobsRunExactlyOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg Config) {
		const jobs, workers = 50, 4
		cfg.Workers = workers
		var mu sync.Mutex // guards count
		count := map[string]int{}
		var running, peak atomic.Int32
		var wg sync.WaitGroup
		wg.Add(jobs)
		q := start(t, cfg, func(ctx context.Context, args RunArgs) error {
			n := running.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(5 * time.Millisecond)
			running.Add(-1)
			mu.Lock()
			count[args.RunID]++
			mu.Unlock()
			wg.Done()
			return nil
		})
		for i := range jobs {
			enqueue(t, q, fmt.Sprintf("run%02d", i))
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		// Generous: modernc SQLite is slow under -race.
		receive(t, done, 30*time.Second, "completion of all jobs")
		time.Sleep(100 * time.Millisecond) // a duplicate would show up here
		mu.Lock()
		defer mu.Unlock()
		for i := range jobs {
			id := fmt.Sprintf("run%02d", i)
			if count[id] != 1 {
				t.Errorf("%s ran %d times, want 1", id, count[id])
			}
		}
		if p := peak.Load(); p > workers {
			t.Errorf("%d jobs ran at once with Workers %d", p, workers)
		}
	})
}

func TestInsertOnly(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg Config) {
		got := make(chan RunArgs, 1)
		start(t, cfg, func(ctx context.Context, args RunArgs) error {
			got <- args
			return nil
		})
		// The API process of a serve/worker split enqueues; the worker
		// above, a separate client on the same database, runs the jobs.
		ins := cfg
		ins.InsertOnly = true
		api, err := New(ins, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer api.Close()
		if err := api.Start(context.Background()); err != nil {
			t.Fatalf("Start on an insert-only queue: %v", err)
		}
		// On PostgreSQL, runs enqueued one after another must not wait for
		// the 1s fallback poll: the insert-only client's notifications must
		// reach the worker. SQLite polls every 20ms; the bound there only
		// catches a job that never starts.
		within := 3 * time.Second
		if cfg.DB.Kind() == database.Postgres {
			within = 700 * time.Millisecond
		}
		for i := range 5 {
			id := fmt.Sprintf("run%d", i)
			enqueue(t, api, id)
			if args := receive(t, got, within, "start of "+id); args.RunID != id {
				t.Errorf("worker got %+v, want run %s", args, id)
			}
		}
	})
}

func TestSharesFileWithGooseTables(t *testing.T) {
	// River's tables live in the store's SQLite file; none may be named
	// like the app's or goose's.
	db := testDB(t, filepath.Join(t.TempDir(), "agentcraft.db"))
	rows, err := db.Reader().Query("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	if !slices.Contains(tables, "river_job") {
		t.Errorf("tables %v lack river_job", tables)
	}
	for _, name := range tables {
		if !strings.HasPrefix(name, "river_") && !strings.HasPrefix(name, "sqlite_") {
			t.Errorf("River created table %q outside the river_ prefix", name)
		}
	}
}

func TestOpenRejectsBadConfig(t *testing.T) {
	db := testDB(t, filepath.Join(t.TempDir(), "q.db"))
	h := func(context.Context, RunArgs) error { return nil }
	tests := []struct {
		name string
		cfg  Config
		h    Handler
		want string
	}{
		{"no database", Config{}, h, "Config.DB is nil"},
		{"nil handler", Config{DB: db}, nil, "Handler is nil"},
		{"schema on sqlite", Config{DB: db, Schema: "s"}, h, "Schema"},
		{"workers", Config{DB: db, Workers: -1}, h, "Workers"},
		{"rescue", Config{DB: db, RescueAfter: time.Minute}, h, "RescueAfter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := New(tt.cfg, tt.h)
			if err == nil {
				q.Close()
				t.Fatalf("New succeeded, want an error mentioning %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New error %q does not mention %q", err, tt.want)
			}
		})
	}
}

func TestEnqueueRunRejectsEmptyIDs(t *testing.T) {
	cfg := Config{DB: testDB(t, database.MemoryPath), InsertOnly: true}
	q, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.EnqueueRun(context.Background(), RunArgs{WorkspaceID: "ws1"}); err == nil || !strings.Contains(err.Error(), "RunID") {
		t.Errorf("EnqueueRun without RunID = %v, want an error naming RunID", err)
	}
	if err := q.EnqueueRun(context.Background(), RunArgs{RunID: "r"}); err == nil || !strings.Contains(err.Error(), "WorkspaceID") {
		t.Errorf("EnqueueRun without WorkspaceID = %v, want an error naming WorkspaceID", err)
	}
}

func TestEnqueueIngestRunsIngestHandler(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg Config) {
		runs := make(chan RunArgs, 1)
		ingests := make(chan IngestArgs, 1)
		cfg.Ingest = func(ctx context.Context, args IngestArgs) error {
			ingests <- args
			return nil
		}
		q := start(t, cfg, func(ctx context.Context, args RunArgs) error {
			runs <- args
			return nil
		})
		want := IngestArgs{WorkspaceID: "ws1", JobID: "job1"}
		if err := q.EnqueueIngest(context.Background(), want); err != nil {
			t.Fatal(err)
		}
		if got := receive(t, ingests, 2*time.Second, "ingest handler call"); got != want {
			t.Errorf("ingest handler got %+v, want %+v", got, want)
		}
		enqueue(t, q, "run1")
		if got := receive(t, runs, 2*time.Second, "run handler call"); got.RunID != "run1" {
			t.Errorf("run handler got %+v", got)
		}
		if err := q.EnqueueIngest(context.Background(), IngestArgs{WorkspaceID: "ws1"}); err == nil {
			t.Error("EnqueueIngest without a job id succeeded")
		}
	})
}
