package retention_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/store/retention"
)

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// fillRuns inserts n finished runs of ws, each with events events and
// checkpoints checkpoints of about size bytes, in transactions of 10000
// runs on the writer.
func fillRuns(t *testing.T, w *sql.DB, ws string, n, events, checkpoints, size int, finished time.Time) {
	t.Helper()
	ctx := t.Context()
	data := `{"text":"` + strings.Repeat("x", size) + `"}`
	at := finished.UnixMicro()
	for start := 0; start < n; start += 10000 {
		tx, err := w.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		run, _ := tx.PrepareContext(ctx, `INSERT INTO runs (id, workspace_id, workflow_id, workflow_version, definition, status, input, output, error, waiting_node, lease_owner, lease_until, created_at, updated_at, finished_at)
			VALUES (?, ?, NULL, 0, '{}', 'succeeded', NULL, '{"ok":true}', '', '', '', NULL, ?, ?, ?)`)
		ev, _ := tx.PrepareContext(ctx, `INSERT INTO run_events (run_id, seq, type, data, created_at) VALUES (?, ?, 'node_finished', ?, ?)`)
		cp, _ := tx.PrepareContext(ctx, `INSERT INTO run_checkpoints (run_id, key, node_id, output, handle, created_at) VALUES (?, ?, 'n', ?, '', ?)`)
		for i := start; i < min(n, start+10000); i++ {
			id := fmt.Sprintf("run-%07d", i)
			if _, err := run.ExecContext(ctx, id, ws, at, at, at); err != nil {
				t.Fatal(err)
			}
			for s := 1; s <= events; s++ {
				if _, err := ev.ExecContext(ctx, id, s, data, at); err != nil {
					t.Fatal(err)
				}
			}
			for s := 1; s <= checkpoints; s++ {
				if _, err := cp.ExecContext(ctx, id, fmt.Sprint("node", s), data, at); err != nil {
					t.Fatal(err)
				}
			}
		}
		run.Close()
		ev.Close()
		cp.Close()
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPruneShrinksFile is acceptance item 1: a SQLite database of 100k
// finished runs with their events and checkpoints shrinks on disk once
// the policy runs (the run rows themselves stay).
func TestPruneShrinksFile(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a database of 100k runs")
	}
	e := openSQLite(t)
	ctx := t.Context()
	ws, err := e.st.Workspaces().GetOrCreate(ctx, "team")
	if err != nil {
		t.Fatal(err)
	}
	const runs = 100_000
	start := time.Now()
	fillRuns(t, e.db.Writer(), ws.ID, runs, 2, 1, 200, time.Now().Add(-40*24*time.Hour))
	if _, err := e.db.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	path := e.db.Path()
	before := fileSize(t, path)
	t.Logf("filled %d runs (%d events, %d checkpoints) in %s: file %.1f MiB", runs, 2*runs, runs, time.Since(start).Round(time.Millisecond), float64(before)/(1<<20))

	p, err := retention.New(e.db, &retention.Options{Policy: retention.Policy{
		retention.RunEvents: 30 * 24 * time.Hour, retention.Checkpoints: 30 * 24 * time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	r, err := p.Run(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	after := fileSize(t, path)
	wal := fileSize(t, path+"-wal")
	t.Logf("pruned %d events and %d checkpoints in %s (%d pages vacuumed): file %.1f MiB → %.1f MiB, WAL %d bytes",
		r.Rows(retention.RunEvents), r.Rows(retention.Checkpoints), time.Since(start).Round(time.Millisecond), r.VacuumedPages,
		float64(before)/(1<<20), float64(after)/(1<<20), wal)
	if r.Rows(retention.RunEvents) != 2*runs || r.Rows(retention.Checkpoints) != runs {
		t.Fatalf("removed %d events and %d checkpoints, want %d and %d", r.Rows(retention.RunEvents), r.Rows(retention.Checkpoints), 2*runs, runs)
	}
	if after > before/3 {
		t.Errorf("file after pruning = %d bytes, want under a third of %d", after, before)
	}
	if n := count(t, e, `SELECT count(*) FROM runs WHERE status = 'succeeded'`); n != runs {
		t.Errorf("runs after pruning = %d, want all %d kept", n, runs)
	}
}

// walBound is the largest -wal file TestWALBound accepts (README,
// "Retention"): the checkpoint schedule keeps the WAL under it whatever
// the load, even while readers hold snapshots that starve SQLite's own
// automatic checkpoints.
const walBound = 64 << 20

// TestWALBound is acceptance item 2: a steady stream of run writes for
// an hour's worth of the checkpoint schedule (12 checkpoints of the 5 min
// default, scaled down to 250 ms), with readers always holding a
// snapshot open, keeps the -wal file under walBound. Without the
// schedule the same load grows the WAL past it.
func TestWALBound(t *testing.T) {
	if testing.Short() {
		t.Skip("writes for several seconds")
	}
	run := func(t *testing.T, checkpoints bool) (peakWAL int64, written int64) {
		e := openSQLite(t)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		ws, _ := e.st.Workspaces().GetOrCreate(ctx, "team")
		var wg sync.WaitGroup
		var peak atomic.Int64
		path := e.db.Path() + "-wal"
		var svc *retention.Service
		if checkpoints {
			p, err := retention.New(e.db, nil)
			if err != nil {
				t.Fatal(err)
			}
			svc = retention.NewService(p, &retention.ServiceOptions{Interval: -1, CheckpointInterval: 250 * time.Millisecond})
			svc.Start(ctx)
			defer svc.Stop()
		}
		// Readers: overlapping read transactions, so there is always a
		// snapshot older than the newest write.
		for i := range 2 {
			wg.Go(func() {
				time.Sleep(time.Duration(i) * 40 * time.Millisecond)
				for ctx.Err() == nil {
					tx, err := e.db.Reader().BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
					if err != nil {
						return
					}
					var n int
					tx.QueryRowContext(ctx, `SELECT count(*) FROM runs`).Scan(&n)
					time.Sleep(80 * time.Millisecond)
					tx.Rollback()
				}
			})
		}
		wg.Go(func() {
			for ctx.Err() == nil {
				peak.Store(max(peak.Load(), fileSize(t, path)))
				time.Sleep(10 * time.Millisecond)
			}
		})
		data := `{"text":"` + strings.Repeat("y", 4000) + `"}`
		deadline := time.Now().Add(3 * time.Second)
		at := time.Now().UnixMicro()
		for i := 0; time.Now().Before(deadline); i++ {
			tx, err := e.db.Writer().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			id := fmt.Sprintf("r%d", i)
			if _, err := tx.ExecContext(ctx, `INSERT INTO runs (id, workspace_id, workflow_id, workflow_version, definition, status, input, output, error, waiting_node, lease_owner, lease_until, created_at, updated_at, finished_at)
				VALUES (?, ?, NULL, 0, '{}', 'running', NULL, NULL, '', '', '', NULL, ?, ?, NULL)`, id, ws.ID, at, at); err != nil {
				t.Fatal(err)
			}
			for s := 1; s <= 10; s++ {
				if _, err := tx.ExecContext(ctx, `INSERT INTO run_events (run_id, seq, type, data, created_at) VALUES (?, ?, 'node', ?, ?)`, id, s, data, at); err != nil {
					t.Fatal(err)
				}
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			written += int64(10 * len(data))
		}
		cancel()
		wg.Wait()
		return peak.Load(), written
	}
	t.Run("schedule", func(t *testing.T) {
		peak, written := run(t, true)
		t.Logf("with a checkpoint every 250ms: wrote %.0f MiB, largest WAL %.1f MiB (bound %d MiB)", float64(written)/(1<<20), float64(peak)/(1<<20), walBound>>20)
		if peak >= walBound {
			t.Errorf("largest WAL = %d bytes, want under %d", peak, walBound)
		}
		if written < 2*walBound {
			t.Logf("the load wrote only %d bytes: too little to exceed the bound without checkpoints", written)
		}
	})
	t.Run("control", func(t *testing.T) {
		peak, written := run(t, false)
		t.Logf("without the schedule: wrote %.0f MiB, largest WAL %.1f MiB", float64(written)/(1<<20), float64(peak)/(1<<20))
		// The load is heavy enough that the bound means something: with
		// readers always holding a snapshot SQLite's own checkpoints never
		// reset the WAL, so it grows with every byte written.
		if written > 2*walBound && peak < walBound {
			t.Errorf("without checkpoints the WAL stayed at %d bytes after %d written: the load does not test the bound", peak, written)
		}
	})
}
