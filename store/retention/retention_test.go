package retention_test

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
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/internal/database"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/postgres"
	"github.com/agentcraftlab/agentcraft/store/retention"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
)

// env is a migrated database with its store.
type env struct {
	db *database.DB
	st store.Store
}

func openSQLite(t *testing.T) env {
	t.Helper()
	db, err := database.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "agentcraft.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.New(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(); db.Close() })
	return env{db: db, st: st}
}

func openPostgres(t *testing.T) env {
	t.Helper()
	dsn := os.Getenv("AGENTCRAFT_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("PostgreSQL tests skipped: set AGENTCRAFT_TEST_POSTGRES_DSN")
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "retention_" + hex.EncodeToString(b[:])
	db, err := database.OpenPostgres(t.Context(), dsn, &database.Options{Schema: schema, MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	st, err := postgres.New(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		st.Close()
		db.Close()
		conn, err := pgx.Connect(context.Background(), dsn)
		if err == nil {
			conn.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
			conn.Close(context.Background())
		}
	})
	return env{db: db, st: st}
}

func drivers(t *testing.T, fn func(t *testing.T, e env)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, openSQLite(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, openPostgres(t)) })
}

// sqlExec runs q with ? placeholders on either database.
func sqlExec(t *testing.T, e env, q string, args ...any) error {
	t.Helper()
	if e.db.Kind() == database.Postgres {
		n := 0
		var b strings.Builder
		for _, r := range q {
			if r == '?' {
				n++
				fmt.Fprintf(&b, "$%d", n)
				continue
			}
			b.WriteRune(r)
		}
		_, err := e.db.Pool().Exec(t.Context(), b.String(), args...)
		return err
	}
	_, err := e.db.Writer().ExecContext(t.Context(), q, args...)
	return err
}

func count(t *testing.T, e env, q string, args ...any) int64 {
	t.Helper()
	var n int64
	var err error
	if e.db.Kind() == database.Postgres {
		q = strings.ReplaceAll(q, "?", "$1")
		err = e.db.Pool().QueryRow(t.Context(), q, args...).Scan(&n)
	} else {
		err = e.db.Reader().QueryRowContext(t.Context(), q, args...).Scan(&n)
	}
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func ts(e env, at time.Time) any {
	if e.db.Kind() == database.Postgres {
		return at.UTC()
	}
	return at.UnixMicro()
}

func addAudit(t *testing.T, e env, ws, id string, at time.Time) {
	t.Helper()
	if err := sqlExec(t, e, `INSERT INTO audit_log (id, workspace_id, actor, action, target, details, created_at) VALUES (?, ?, 'test', 'test.event', '', NULL, ?)`,
		id, ws, ts(e, at)); err != nil {
		t.Fatal(err)
	}
}

// TestAuditKeptUnlessPolicy is acceptance item 5: audit rows survive
// every other policy, go only with an audit policy, and the database
// still refuses ordinary deletes and updates.
func TestAuditKeptUnlessPolicy(t *testing.T) {
	drivers(t, func(t *testing.T, e env) {
		ctx := t.Context()
		ws, err := e.st.Workspaces().GetOrCreate(ctx, "team")
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		old := now.Add(-400 * 24 * time.Hour)
		for i := range 30 {
			addAudit(t, e, ws.ID, fmt.Sprintf("old-%02d", i), old.Add(time.Duration(i)*time.Minute))
		}
		addAudit(t, e, ws.ID, "recent", now.Add(-time.Hour))

		every := retention.Policy{retention.RunEvents: time.Hour, retention.Checkpoints: time.Hour,
			retention.Conversations: time.Hour, retention.Uploads: time.Hour}
		p, err := retention.New(e.db, &retention.Options{Policy: every, BatchSize: 7})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Run(ctx, false); err != nil {
			t.Fatal(err)
		}
		if n := count(t, e, `SELECT count(*) FROM audit_log`); n != 31 {
			t.Fatalf("audit rows after pruning without an audit policy = %d, want 31", n)
		}

		// Ordinary deletes and updates stay refused.
		for _, q := range []string{
			`DELETE FROM audit_log WHERE id = 'old-00'`,
			`UPDATE audit_log SET actor = 'forged' WHERE id = 'old-00'`,
		} {
			if err := sqlExec(t, e, q); err == nil || !strings.Contains(err.Error(), "append-only") {
				t.Errorf("%s = %v, want the append-only refusal", q, err)
			}
		}
		// The guarded path refuses a window younger than a day.
		err = func() error {
			if err := sqlExec(t, e, `INSERT INTO audit_prune_window (before) VALUES (?)`, ts(e, now)); err != nil {
				return err
			}
			defer sqlExec(t, e, `DELETE FROM audit_prune_window`)
			return sqlExec(t, e, `DELETE FROM audit_log WHERE id = 'recent'`)
		}()
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("delete through a window ending now = %v, want the append-only refusal", err)
		}
		if _, err := retention.New(e.db, &retention.Options{Policy: retention.Policy{retention.Audit: time.Hour}}); err == nil {
			t.Error("New with audit: 1h = nil error, want under a day refused")
		}

		// With the policy: old rows go, the recent one stays.
		every[retention.Audit] = 365 * 24 * time.Hour
		p, err = retention.New(e.db, &retention.Options{Policy: every, BatchSize: 2}) // batches of 10
		if err != nil {
			t.Fatal(err)
		}
		dry, err := p.Run(ctx, true)
		if err != nil || dry.Rows(retention.Audit) != 30 {
			t.Fatalf("dry run = %d audit rows, %v; want 30", dry.Rows(retention.Audit), err)
		}
		if n := count(t, e, `SELECT count(*) FROM audit_log`); n != 31 {
			t.Fatalf("a dry run removed audit rows: %d left", n)
		}
		r, err := p.Run(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Rows(retention.Audit); got != 30 {
			t.Errorf("audit rows removed = %d, want 30", got)
		}
		if n := count(t, e, `SELECT count(*) FROM audit_log WHERE id = 'recent'`); n != 1 {
			t.Error("the recent audit row was removed")
		}
		if n := count(t, e, `SELECT count(*) FROM audit_prune_window`); n != 0 {
			t.Errorf("audit_prune_window holds %d rows after the prune, want 0", n)
		}
		if err := sqlExec(t, e, `DELETE FROM audit_log WHERE id = 'recent'`); err == nil {
			t.Error("an ordinary delete after the prune succeeded")
		}
	})
}

// addRun inserts a run with n events and n checkpoints of about size
// bytes each.
func addRun(t *testing.T, e env, ws, id, status string, finished time.Time, n, size int) {
	t.Helper()
	var fin any
	if !finished.IsZero() {
		fin = ts(e, finished)
	}
	if err := sqlExec(t, e, `INSERT INTO runs (id, workspace_id, workflow_id, workflow_version, definition, status, input, output, error, waiting_node, lease_owner, lease_until, created_at, updated_at, finished_at)
		VALUES (?, ?, NULL, 0, '{}', ?, NULL, NULL, '', '', '', NULL, ?, ?, ?)`, id, ws, status, ts(e, finished.Add(-time.Minute)), ts(e, finished), fin); err != nil {
		t.Fatal(err)
	}
	data := `{"text":"` + strings.Repeat("x", size) + `"}`
	for i := 1; i <= n; i++ {
		if err := sqlExec(t, e, `INSERT INTO run_events (run_id, seq, type, data, created_at) VALUES (?, ?, 'node', ?, ?)`, id, i, data, ts(e, finished)); err != nil {
			t.Fatal(err)
		}
		if err := sqlExec(t, e, `INSERT INTO run_checkpoints (run_id, key, node_id, output, handle, created_at) VALUES (?, ?, 'n', ?, '', ?)`, id, fmt.Sprint("k", i), data, ts(e, finished)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRunsConversationsUploads(t *testing.T) {
	drivers(t, func(t *testing.T, e env) {
		ctx := t.Context()
		a, _ := e.st.Workspaces().GetOrCreate(ctx, "a")
		b, _ := e.st.Workspaces().GetOrCreate(ctx, "b")
		now := time.Now()
		old := now.Add(-60 * 24 * time.Hour)
		addRun(t, e, a.ID, "a-old", "succeeded", old, 3, 50)
		addRun(t, e, a.ID, "a-new", "failed", now.Add(-time.Hour), 3, 50)
		addRun(t, e, b.ID, "b-old", "canceled", old, 3, 50)
		// A waiting run keeps everything however old.
		if err := sqlExec(t, e, `INSERT INTO runs (id, workspace_id, workflow_id, workflow_version, definition, status, input, output, error, waiting_node, lease_owner, lease_until, created_at, updated_at, finished_at)
			VALUES ('a-waiting', ?, NULL, 0, '{}', 'waiting', NULL, NULL, '', 'ask', '', NULL, ?, ?, NULL)`, a.ID, ts(e, old), ts(e, old)); err != nil {
			t.Fatal(err)
		}
		if err := sqlExec(t, e, `INSERT INTO run_checkpoints (run_id, key, node_id, output, handle, created_at) VALUES ('a-waiting', 'k', 'n', '{"upload":"up-live"}', '', ?)`, ts(e, old)); err != nil {
			t.Fatal(err)
		}
		// Workspace b keeps its run events forever.
		o := retention.NewOverrides(e.db)
		if err := o.Put(ctx, b.ID, map[retention.Kind]string{retention.RunEvents: "keep", retention.Conversations: "90d"}); err != nil {
			t.Fatal(err)
		}
		if err := o.Put(ctx, b.ID, map[retention.Kind]string{retention.Audit: "30d"}); !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "audit") {
			t.Errorf("Put(audit) = %v, want ErrInvalid naming audit", err)
		}
		if err := o.Put(ctx, "nope", map[retention.Kind]string{retention.Uploads: "1d"}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Put(unknown workspace) = %v, want ErrNotFound", err)
		}
		got, err := o.Get(ctx, b.ID)
		if err != nil || got[retention.RunEvents] != "keep" || got[retention.Conversations] != "90d" || len(got) != 2 {
			t.Errorf("Get = %v, %v", got, err)
		}

		// Conversations: a's old one goes; b's is 60 days old, under its 90d.
		for _, c := range []struct {
			ws string
			id string
			at time.Time
		}{{a.ID, "c-a-old", old}, {a.ID, "c-a-new", now}, {b.ID, "c-b-old", old}} {
			if err := sqlExec(t, e, `INSERT INTO conversations (id, workspace_id, title, owner, agent, external_ref, summary, summarized_through, last_seq, created_at, updated_at)
				VALUES (?, ?, '', 'user:x', 'bot', NULL, '', 0, 1, ?, ?)`, c.id, c.ws, ts(e, c.at), ts(e, c.at)); err != nil {
				t.Fatal(err)
			}
		}
		if err := sqlExec(t, e, `INSERT INTO messages (conversation_id, seq, role, content, tool_calls, tool_call_id, created_at) VALUES ('c-a-new', 1, 'assistant', 'see /api/uploads/up-said', NULL, '', ?)`, ts(e, now)); err != nil {
			t.Fatal(err)
		}
		if err := sqlExec(t, e, `INSERT INTO messages (conversation_id, seq, role, content, tool_calls, tool_call_id, created_at) VALUES ('c-a-old', 1, 'assistant', 'see /api/uploads/up-gone-with-chat', NULL, '', ?)`, ts(e, old)); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"up-live", "up-said", "up-gone-with-chat", "up-plain"} {
			if err := sqlExec(t, e, `INSERT INTO uploads (id, workspace_id, name, content_type, size, data, expires_at, created_at) VALUES (?, ?, 'f', '', 1, ?, ?, ?)`,
				id, a.ID, []byte("x"), ts(e, now.Add(time.Hour)), ts(e, old)); err != nil {
				t.Fatal(err)
			}
		}

		var told []retention.RemovedRow
		p, err := retention.New(e.db, &retention.Options{BatchSize: 1, Policy: retention.Policy{
			retention.RunEvents: 30 * 24 * time.Hour, retention.Checkpoints: 30 * 24 * time.Hour,
			retention.Conversations: 30 * 24 * time.Hour, retention.Uploads: 30 * 24 * time.Hour,
			retention.UsageDetail: 30 * 24 * time.Hour,
		}, ConversationsRemoved: func(_ context.Context, removed []retention.RemovedRow) error {
			told = append(told, removed...)
			return errors.New("the index is down") // logged; the rows stay removed
		}})
		if err != nil {
			t.Fatal(err)
		}
		r, err := p.Run(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		check := func(what, q string, want int64) {
			t.Helper()
			if n := count(t, e, q); n != want {
				t.Errorf("%s: %d, want %d", what, n, want)
			}
		}
		check("events of a-old", `SELECT count(*) FROM run_events WHERE run_id = 'a-old'`, 0)
		check("checkpoints of a-old", `SELECT count(*) FROM run_checkpoints WHERE run_id = 'a-old'`, 0)
		check("events of a-new (recent)", `SELECT count(*) FROM run_events WHERE run_id = 'a-new'`, 3)
		check("events of b-old (b keeps)", `SELECT count(*) FROM run_events WHERE run_id = 'b-old'`, 3)
		check("checkpoints of b-old (server policy)", `SELECT count(*) FROM run_checkpoints WHERE run_id = 'b-old'`, 0)
		check("checkpoints of the waiting run", `SELECT count(*) FROM run_checkpoints WHERE run_id = 'a-waiting'`, 1)
		check("run rows", `SELECT count(*) FROM runs`, 4)
		check("conversations", `SELECT count(*) FROM conversations WHERE id IN ('c-a-new', 'c-b-old')`, 2)
		check("old conversation of a", `SELECT count(*) FROM conversations WHERE id = 'c-a-old'`, 0)
		check("its messages", `SELECT count(*) FROM messages WHERE conversation_id = 'c-a-old'`, 0)
		if want := []retention.RemovedRow{{WorkspaceID: a.ID, ID: "c-a-old"}}; !slices.Equal(told, want) {
			t.Errorf("ConversationsRemoved was told %v, want %v", told, want)
		}
		check("uploads kept (live run, kept chat)", `SELECT count(*) FROM uploads WHERE id IN ('up-live', 'up-said')`, 2)
		check("uploads removed", `SELECT count(*) FROM uploads WHERE id IN ('up-gone-with-chat', 'up-plain')`, 0)
		if len(r.Skipped) != 1 || r.Skipped[0].Kind != retention.UsageDetail {
			t.Errorf("Skipped = %+v, want usage_detail without a rollup", r.Skipped)
		}
		var text strings.Builder
		r.WriteText(&text)
		if !strings.Contains(text.String(), "run_events") || !strings.Contains(text.String(), "usage rollup") {
			t.Errorf("report:\n%s", text.String())
		}
	})
}

func TestUsageRollupHook(t *testing.T) {
	e := openSQLite(t)
	var got time.Time
	p, err := retention.New(e.db, &retention.Options{
		Policy: retention.Policy{retention.UsageDetail: 90 * 24 * time.Hour},
		UsageRollup: func(_ context.Context, before time.Time) (int64, error) {
			got = before
			return 7, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Run(t.Context(), false)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Now().Add(-90 * 24 * time.Hour); got.Sub(want).Abs() > time.Minute || r.Rows(retention.UsageDetail) != 7 {
		t.Errorf("rollup called with %v (want about %v), report %d rows", got, want, r.Rows(retention.UsageDetail))
	}
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{"30d": 30 * 24 * time.Hour, "2w": 14 * 24 * time.Hour, "12h": 12 * time.Hour,
		"keep": 0, "": 0, "1h30m": 90 * time.Minute, "1.5d": 36 * time.Hour} {
		if got, err := retention.ParseAge(in); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"30", "-1d", "0d", "soon", "d"} {
		if _, err := retention.ParseAge(in); err == nil {
			t.Errorf("ParseAge(%q) = nil error", in)
		}
	}
	if _, err := retention.ParsePolicy(map[string]string{"run_event": "1d"}); err == nil || !strings.Contains(err.Error(), "run_event") {
		t.Errorf("ParsePolicy(unknown kind) = %v", err)
	}
	if _, err := retention.ParsePolicy(map[string]string{"audit": "2h"}); err == nil || !strings.Contains(err.Error(), "audit") {
		t.Errorf("ParsePolicy(audit: 2h) = %v", err)
	}
}

// TestServiceSchedule: the service prunes on its interval and reports
// what it removed.
func TestServiceSchedule(t *testing.T) {
	e := openSQLite(t)
	ws, _ := e.st.Workspaces().GetOrCreate(t.Context(), "team")
	addRun(t, e, ws.ID, "old", "succeeded", time.Now().Add(-48*time.Hour), 2, 10)
	p, err := retention.New(e.db, &retention.Options{Policy: retention.Policy{retention.RunEvents: 24 * time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	reports := make(chan retention.Report, 10)
	svc := retention.NewService(p, &retention.ServiceOptions{Interval: 20 * time.Millisecond, Reported: func(r retention.Report) { reports <- r }})
	if err := svc.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer svc.Stop()
	select {
	case r := <-reports:
		if r.Rows(retention.RunEvents) != 2 {
			t.Errorf("first scheduled prune removed %d events, want 2", r.Rows(retention.RunEvents))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the service did not prune")
	}
	svc.Stop()
	svc.Stop() // idempotent
}

// TestOnePrunerAtATime: on PostgreSQL a pruner whose advisory lock
// another process holds skips the round.
func TestOnePrunerAtATime(t *testing.T) {
	e := openPostgres(t)
	p, err := retention.New(e.db, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := e.db.Pool().Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(t.Context(), `SELECT pg_advisory_lock($1)`, int64(0x61635f7265746e)); err != nil {
		t.Fatal(err)
	}
	if _, ran, err := retention.RunLocked(t.Context(), p, false); ran || err != nil {
		t.Errorf("RunLocked while another holds the lock = ran %v, %v; want skipped", ran, err)
	}
	conn.Exec(t.Context(), `SELECT pg_advisory_unlock($1)`, int64(0x61635f7265746e))
	if _, ran, err := retention.RunLocked(t.Context(), p, false); !ran || err != nil {
		t.Errorf("RunLocked with the lock free = ran %v, %v; want run", ran, err)
	}
}
