package cli

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/database"
	"github.com/agentcraftlab/agentcraft/memory"
	agentrun "github.com/agentcraftlab/agentcraft/run"
	sqlitesearch "github.com/agentcraftlab/agentcraft/search/sqlite"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
)

// TestDBPruneAndStats: db prune counts in a dry run, then removes what
// the configured policy no longer keeps and says so; db stats names the
// tables with their rows.
func TestDBPruneAndStats(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile("agentcraft.yaml", []byte("retention:\n  run_events: 30d\n  checkpoints: 30d\n  queue_jobs: 7d\n  usage_detail: 30d\nlog: {level: warn}\n"), 0o600)
	if code, _, errOut := run(t, "keys", "create", "--workspace", "default"); code != 0 {
		t.Fatalf("keys create: %s", errOut)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "data", "agentcraft.db"))
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-40 * 24 * time.Hour).UnixMicro()
	for _, q := range []string{
		`INSERT INTO runs (id, workspace_id, workflow_id, workflow_version, definition, status, input, output, error, waiting_node, lease_owner, lease_until, created_at, updated_at, finished_at)
			SELECT 'r1', id, NULL, 0, '{}', 'succeeded', NULL, NULL, '', '', '', NULL, ?1, ?1, ?1 FROM workspaces LIMIT 1`,
		`INSERT INTO run_events (run_id, seq, type, data, created_at) VALUES ('r1', 1, 'a', NULL, ?1), ('r1', 2, 'b', NULL, ?1)`,
		`INSERT INTO run_checkpoints (run_id, key, node_id, output, handle, created_at) VALUES ('r1', 'k', 'n', NULL, '', ?1)`,
		// A usage record of 40 days ago: folded into its day's totals by
		// the store's rollup, then deleted.
		`INSERT INTO usage_records (id, workspace_id, api_key_id, agent, model, provider, end_user, input_tokens, output_tokens, cached_tokens,
			latency_ms, upstream_ms, status, error_kind, created_at, cost, unpriced)
			SELECT 'u1', id, '', 'a', 'gpt-4o', 'openai', '', 1000, 100, 0, 5, 4, 'ok', '', ?1, 3500000, 0 FROM workspaces LIMIT 1`,
		// River's jobs as riversqlite writes them: one finished long ago,
		// one just now, one waiting.
		`INSERT INTO river_job (kind, max_attempts, state, finalized_at) VALUES ('workflow_run', 5, 'completed', datetime('now', '-10 days', 'subsec')),
			('workflow_run', 5, 'discarded', datetime('now', 'subsec')), ('workflow_run', 5, 'available', NULL)`,
	} {
		if _, err := db.Exec(q, old); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	code, out, errOut := run(t, "db", "prune", "--dry-run")
	if code != 0 || !strings.Contains(out, "WOULD REMOVE") || !strings.Contains(out, "total 5 rows") {
		t.Fatalf("db prune --dry-run: %d %q %s", code, out, errOut)
	}
	code, out, errOut = run(t, "db", "prune", "--json")
	if code != 0 {
		t.Fatalf("db prune: %d %s", code, errOut)
	}
	var report struct {
		Removed []struct {
			Kind string
			Rows int64
		}
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("db prune --json: %v\n%s", err, out)
	}
	rows := map[string]int64{}
	for _, r := range report.Removed {
		rows[r.Kind] += r.Rows
	}
	if rows["run_events"] != 2 || rows["checkpoints"] != 1 || rows["queue_jobs"] != 1 || rows["usage_detail"] != 1 {
		t.Errorf("db prune removed %v, want 2 events, 1 checkpoint, 1 job and 1 usage record", rows)
	}
	db, err = sql.Open("sqlite", filepath.Join(dir, "data", "agentcraft.db"))
	if err != nil {
		t.Fatal(err)
	}
	var detail, dailyTokens, dailyCost int64
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM usage_records), (SELECT coalesce(sum(input_tokens), 0) FROM usage_daily),
		(SELECT coalesce(sum(cost), 0) FROM usage_daily)`).Scan(&detail, &dailyTokens, &dailyCost); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if detail != 0 || dailyTokens != 1000 || dailyCost != 3500000 {
		t.Errorf("after prune: %d usage records, daily totals %d input tokens and cost %d; want 0, 1000 and 3500000", detail, dailyTokens, dailyCost)
	}
	if code, out, _ := run(t, "db", "prune", "--dry-run"); code != 0 || !strings.Contains(out, "total 0 rows") {
		t.Errorf("second dry run: %q", out)
	}

	code, out, errOut = run(t, "db", "stats")
	if code != 0 || !strings.Contains(out, "api_keys") || !strings.Contains(out, "auto_vacuum incremental") || !strings.Contains(out, "TABLE") {
		t.Errorf("db stats: %d %q %s", code, out, errOut)
	}
	code, out, _ = run(t, "db", "stats", "--json")
	var stats struct {
		Tables []struct {
			Name string
			Rows int64
		}
		PageCount int64 `json:"page_count"`
	}
	if err := json.Unmarshal([]byte(out), &stats); err != nil || code != 0 || stats.PageCount == 0 {
		t.Fatalf("db stats --json: %d %v %q", code, err, out)
	}
	found := false
	for _, tb := range stats.Tables {
		if tb.Name == "runs" && tb.Rows == 1 {
			found = true
		}
	}
	if !found {
		t.Errorf("db stats --json does not list runs with 1 row: %+v", stats.Tables)
	}
	if code, out, errOut := run(t, "db", "vacuum"); code != 0 || !strings.Contains(out, "auto_vacuum incremental") {
		t.Errorf("db vacuum: %d %q %s", code, out, errOut)
	}
}

// TestDBPruneDropsConversationMemories: a conversation the retention
// policy removes takes the search index of its memories along, so that
// what it said is no longer in the database at all (the memory rows went
// by cascade; the index kept the text once).
func TestDBPruneDropsConversationMemories(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile("agentcraft.yaml", []byte("retention:\n  conversations: 30d\nlog: {level: warn}\n"), 0o600)
	if code, _, errOut := run(t, "keys", "create", "--workspace", "default"); code != 0 {
		t.Fatalf("keys create: %s", errOut)
	}
	const secret = "zebrawood cabinet code 4417"
	path := filepath.Join(dir, "data", "agentcraft.db")
	func() {
		ctx := t.Context()
		db, err := database.OpenSQLite(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		st, err := sqlite.New(db, nil)
		if err != nil {
			t.Fatal(err)
		}
		eng, err := sqlitesearch.New(ctx, db, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer eng.Close()
		mem, err := memory.NewMemories(st, eng, nil)
		if err != nil {
			t.Fatal(err)
		}
		ws, err := st.Workspaces().GetOrCreate(ctx, "default")
		if err != nil {
			t.Fatal(err)
		}
		p := agentrun.Principal{WorkspaceID: ws.ID, Actor: agentrun.ActorUser, ActorID: "u1", UserID: "u1"}
		for _, title := range []string{"old", "new"} {
			cv, err := st.Conversations().Create(ctx, store.Conversation{WorkspaceID: ws.ID, Title: title, Owner: memory.Owner(p)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := mem.Remember(ctx, p, memory.Note{Scope: store.MemoryConversation, ConversationID: cv.ID, Text: title + ": " + secret}, nil); err != nil {
				t.Fatal(err)
			}
			if title == "old" {
				if _, err := db.Writer().ExecContext(ctx, `UPDATE conversations SET updated_at = ? WHERE id = ?`,
					time.Now().Add(-40*24*time.Hour).UnixMicro(), cv.ID); err != nil {
					t.Fatal(err)
				}
			}
		}
	}()
	indexed := func() []string {
		t.Helper()
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		rows, err := db.Query(`SELECT body FROM search_docs WHERE body LIKE ?`, "%"+secret+"%")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var b string
			if err := rows.Scan(&b); err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
		return out
	}
	if got := indexed(); len(got) != 2 {
		t.Fatalf("before prune the index holds %q; want both memories", got)
	}
	if code, out, errOut := run(t, "db", "prune"); code != 0 || !strings.Contains(out, "conversations") {
		t.Fatalf("db prune: %d %q %s", code, out, errOut)
	}
	if got := indexed(); len(got) != 1 || !strings.HasPrefix(got[0], "new: ") {
		t.Errorf("after prune the index holds %q; want only the kept conversation's memory", got)
	}
}
