package queue

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/agentcraftlab/agentcraft/internal/database"
)

// latencyQueue starts a queue with default settings whose handler reports
// on the returned channel when a job begins.
func latencyQueue(tb testing.TB, cfg Config) (*Queue, <-chan time.Time) {
	tb.Helper()
	cfg.testOnly = true
	started := make(chan time.Time, 1)
	q, err := New(cfg, func(ctx context.Context, args RunArgs) error {
		started <- time.Now()
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		q.Stop(ctx)
		q.Close()
	})
	if err := q.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return q, started
}

// runSeq numbers the runs of enqueueToStart, which must differ or
// EnqueueRun would skip them as duplicates.
var runSeq atomic.Int64

// enqueueToStart enqueues n runs one at a time, each after the previous one
// started, and returns the sorted latencies from EnqueueRun to handler start.
func enqueueToStart(tb testing.TB, q *Queue, started <-chan time.Time, n int) []time.Duration {
	tb.Helper()
	lat := make([]time.Duration, 0, n)
	for i := range n {
		enqueued := time.Now()
		if err := q.EnqueueRun(context.Background(), RunArgs{WorkspaceID: "ws1", RunID: fmt.Sprintf("run%d", runSeq.Add(1))}); err != nil {
			tb.Fatal(err)
		}
		select {
		case at := <-started:
			lat = append(lat, at.Sub(enqueued))
		case <-time.After(3 * time.Second):
			tb.Fatalf("job %d did not start within 3s", i)
		}
	}
	slices.Sort(lat)
	return lat
}

// TestEnqueueToStartLatency checks that an idle queue with default settings
// starts a run soon after EnqueueRun: within a few poll intervals on SQLite,
// and on PostgreSQL without waiting for the 1s fallback poll.
func TestEnqueueToStartLatency(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg Config) {
		q, started := latencyQueue(t, cfg)
		const n = 20
		lat := enqueueToStart(t, q, started, n)
		p50, p90 := lat[n/2], lat[n*9/10]
		t.Logf("enqueue to start over %d jobs: p50 %v, p90 %v, max %v", n, p50, p90, lat[n-1])
		if raceEnabled {
			return // the bounds below are for uninstrumented builds
		}
		if p50 > 250*time.Millisecond {
			t.Errorf("median enqueue-to-start latency %v; want under 250ms", p50)
		}
		// On PostgreSQL a p90 near a second means insert notifications are
		// dropped (FetchCooldown too long) and runs wait for the fallback
		// poll, as they did with River's default cooldown.
		if cfg.DB.Kind() == database.Postgres && p90 > 700*time.Millisecond {
			t.Errorf("p90 enqueue-to-start latency %v; want under 700ms", p90)
		}
	})
}

// BenchmarkEnqueueToStart measures EnqueueRun to handler start on an idle
// SQLite queue with default settings, one run at a time, and
// reports the median and p90 as p50-ms and p90-ms.
func BenchmarkEnqueueToStart(b *testing.B) {
	cfg := Config{DB: testDB(b, filepath.Join(b.TempDir(), "agentcraft.db"))}
	q, started := latencyQueue(b, cfg)
	b.ReportAllocs()
	var lat []time.Duration
	for b.Loop() {
		lat = append(lat, enqueueToStart(b, q, started, 1)...)
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*9/10]), "p90-ms")
}

// TestPostgresListensSQLitePolls pins the fetch settings: on PostgreSQL
// River is not in poll-only mode (new jobs are announced by LISTEN/NOTIFY,
// the 1s poll is a fallback) and its insert notifications are spaced by
// the minimum cooldown; SQLite, which has no NOTIFY, hands jobs to its
// producer in process (inProcessSQLite) and polls each second as a fallback.
func TestPostgresListensSQLitePolls(t *testing.T) {
	h := func(context.Context, RunArgs) error { return nil }
	pg, err := (&Config{}).riverConfig(database.Postgres, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pg.PollOnly || pg.FetchPollInterval != time.Second || pg.FetchCooldown != river.FetchCooldownMin {
		t.Errorf("PostgreSQL: PollOnly %v, FetchPollInterval %v, FetchCooldown %v; want listening, 1s fallback poll, %v cooldown",
			pg.PollOnly, pg.FetchPollInterval, pg.FetchCooldown, river.FetchCooldownMin)
	}
	lite, err := (&Config{}).riverConfig(database.SQLite, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lite.FetchPollInterval != time.Second || lite.FetchCooldown != river.FetchCooldownMin {
		t.Errorf("SQLite: FetchPollInterval %v, FetchCooldown %v; want 1s and %v", lite.FetchPollInterval, lite.FetchCooldown, river.FetchCooldownMin)
	}
}
