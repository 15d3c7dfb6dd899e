package cli

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/secret"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
	"github.com/agentcraftlab/agentcraft/store/storetest"
)

// restoreConfig writes a configuration whose data directory is dir and
// returns "--config PATH".
func restoreConfig(t *testing.T, dir string) []string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "restore.yaml")
	body := "database:\n  url: sqlite://" + filepath.ToSlash(filepath.Join(dir, "agentcraft.db")) +
		"\nsecrets:\n  master_key_file: " + filepath.ToSlash(filepath.Join(dir, "master.key")) + "\ndetect_providers: false\nlog: {level: warn}\n"
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--config", p}
}

// TestBackupRestoreRules is acceptance item 4: restore refuses a
// non-empty data directory and a file that is not an AgentCraft
// database, and the master key travels with a backup only with
// --with-master-key.
func TestBackupRestoreRules(t *testing.T) {
	t.Setenv(secret.EnvMasterKey, "")
	newest, down := newestMigrationDown(t)
	dir := t.TempDir()
	t.Chdir(dir)
	if code, _, errOut := run(t, "migrate"); code != 0 {
		t.Fatalf("migrate: %s", errOut)
	}
	key, err := secret.LoadMasterKey("", filepath.Join("data", "master.key"))
	if err != nil {
		t.Fatal(err)
	}

	code, out, errOut := run(t, "backup", "plain.db")
	if code != 0 {
		t.Fatalf("backup: %d %s", code, errOut)
	}
	if _, err := os.Stat("plain.db.key"); err == nil {
		t.Error("backup without --with-master-key wrote plain.db.key")
	}
	if !strings.Contains(out, "master key is not in the backup") {
		t.Errorf("backup output does not warn about the key: %q", out)
	}
	if code, _, errOut := run(t, "backup", "plain.db"); code == 0 || !strings.Contains(errOut, "--force") {
		t.Errorf("backup over an existing file: %d %q, want a refusal naming --force", code, errOut)
	}
	if code, _, errOut := run(t, "backup", "--force", "plain.db"); code != 0 {
		t.Errorf("backup --force: %s", errOut)
	}

	if code, _, errOut := run(t, "backup", "--with-master-key", "keyed.db"); code != 0 {
		t.Fatalf("backup --with-master-key: %s", errOut)
	}
	fi, err := os.Stat("keyed.db.key")
	if err != nil {
		t.Fatalf("backup --with-master-key wrote no keyed.db.key: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("keyed.db.key mode = %v, want 0600", fi.Mode().Perm())
	}
	if got, err := secret.ReadMasterKey("", "keyed.db.key"); err != nil || !bytes.Equal(got, key) {
		t.Errorf("keyed.db.key holds another key (%v)", err)
	}

	// Into the live, non-empty data directory: refused.
	code, _, errOut = run(t, append(restoreConfig(t, filepath.Join(dir, "data")), "restore", "keyed.db")...)
	if code == 0 || !strings.Contains(errOut, "is not empty") {
		t.Errorf("restore into a non-empty directory: %d %q, want a refusal", code, errOut)
	}
	// Not a database, and a SQLite database that is not AgentCraft's.
	os.WriteFile("notes.txt", []byte(strings.Repeat("hello ", 1000)), 0o600)
	other, _ := sql.Open("sqlite", filepath.Join(dir, "other.db"))
	other.Exec(`CREATE TABLE t (x)`)
	other.Close()
	for file, want := range map[string]string{"notes.txt": "not a SQLite database", "other.db": "not AgentCraft's", "missing.db": "no such file"} {
		target := filepath.Join(t.TempDir(), "data")
		code, _, errOut := run(t, append(restoreConfig(t, target), "restore", file)...)
		if code == 0 || !strings.Contains(errOut, want) {
			t.Errorf("restore %s: %d %q, want %q", file, code, errOut, want)
		}
		if _, err := os.Stat(filepath.Join(target, "agentcraft.db")); err == nil {
			t.Errorf("restore %s left a database in place", file)
		}
	}

	// A good restore: database in place, key installed, migrated.
	target := filepath.Join(t.TempDir(), "data")
	code, out, errOut = run(t, append(restoreConfig(t, target), "restore", "keyed.db")...)
	if code != 0 {
		t.Fatalf("restore: %d %s", code, errOut)
	}
	if got, err := secret.ReadMasterKey("", filepath.Join(target, "master.key")); err != nil || !bytes.Equal(got, key) {
		t.Errorf("restore did not install the backup's master key: %v\n%s", err, out)
	}
	target = filepath.Join(t.TempDir(), "data")
	code, out, _ = run(t, append(restoreConfig(t, target), "restore", "plain.db")...)
	if code != 0 || !strings.Contains(out, "need the original master key") {
		t.Errorf("restore without a key file: %d %q, want it to say the key is needed", code, out)
	}
	if _, err := os.Stat(filepath.Join(target, "master.key")); err == nil {
		t.Error("restore of a backup without a key created a master key")
	}

	// A backup of an older version is migrated forward: take the newest
	// migration back out of a copy, as a backup made before it would be.
	data, _ := os.ReadFile("plain.db")
	os.WriteFile("older.db", data, 0o600)
	older, err := sql.Open("sqlite", filepath.Join(dir, "older.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := older.Exec(down); err != nil {
		t.Fatalf("migration %d down: %v", newest, err)
	}
	if _, err := older.Exec(`DELETE FROM goose_db_version WHERE version_id = ?`, newest); err != nil {
		t.Fatal(err)
	}
	older.Close()
	target = filepath.Join(t.TempDir(), "data")
	code, out, errOut = run(t, append(restoreConfig(t, target), "restore", "older.db")...)
	if code != 0 || !strings.Contains(out, "migrated forward: 1 migration applied") {
		t.Errorf("restore of an older backup: %d %q %s", code, out, errOut)
	}
}

// newestMigrationDown returns the version of the newest SQLite migration
// and its Down statements, without goose's annotations.
func newestMigrationDown(t *testing.T) (int64, string) {
	t.Helper()
	files, err := filepath.Glob("../../../../store/sqlite/migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations found: %v", err)
	}
	slices.Sort(files)
	last := files[len(files)-1]
	version, err := strconv.ParseInt(strings.SplitN(filepath.Base(last), "_", 2)[0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	_, down, ok := strings.Cut(string(b), "-- +goose Down")
	if !ok {
		t.Fatalf("%s has no Down section", last)
	}
	var stmts []string
	for line := range strings.Lines(down) {
		if !strings.HasPrefix(strings.TrimSpace(line), "-- +goose") {
			stmts = append(stmts, line)
		}
	}
	return version, strings.Join(stmts, "")
}

// TestBackupDuringRuns is acceptance item 3: a backup taken while serve
// executes 50 workflow runs through its queue restores into a database
// that passes storetest.ReadCheck and holds, finished, every run that had
// finished before the backup began.
func TestBackupDuringRuns(t *testing.T) {
	t.Setenv(secret.EnvMasterKey, "")
	dir := t.TempDir()
	t.Chdir(dir)
	// Two workers, so the 50 runs take a while and the backup lands
	// among them.
	os.WriteFile("agentcraft.yaml", []byte("workflows:\n  workers: 2\nlog: {level: warn}\n"), 0o600)
	code, key, errOut := run(t, "keys", "create", "--workspace", "default")
	if code != 0 {
		t.Fatalf("keys create: %s", errOut)
	}
	key = strings.TrimSpace(key)
	base, _, stop := startServe(t)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	call := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return resp.StatusCode, m
	}
	// A chain of 12 code nodes: a checkpoint and events per node.
	var nodes, edges []string
	nodes = append(nodes, `{"id":"start","type":"start"}`)
	prev := "start"
	for i := range 12 {
		id := fmt.Sprintf("step%d", i)
		nodes = append(nodes, fmt.Sprintf(`{"id":%q,"type":"code","config":{"mode":"template","template":"%d: {{input}}"}}`, id, i))
		edges = append(edges, fmt.Sprintf(`{"id":"e%d","source":%q,"target":%q}`, i, prev, id))
		prev = id
	}
	nodes = append(nodes, `{"id":"end","type":"end"}`)
	edges = append(edges, fmt.Sprintf(`{"id":"last","source":%q,"target":"end"}`, prev))
	def := `{"name":"chain","nodes":[` + strings.Join(nodes, ",") + `],"edges":[` + strings.Join(edges, ",") + `]}`
	code, wf := call("POST", "/api/workflows", def)
	if code != http.StatusCreated {
		t.Fatalf("create workflow: %d %v", code, wf)
	}
	const n = 50
	ids := make([]string, n)
	for i := range n {
		code, r := call("POST", "/api/workflows/"+wf["id"].(string)+"/runs", fmt.Sprintf(`{"input":"run %d"}`, i))
		if code != http.StatusAccepted {
			t.Fatalf("start run %d: %d %v", i, code, r)
		}
		ids[i] = r["id"].(string)
	}
	finished := func() map[string]bool {
		out := map[string]bool{}
		for _, id := range ids {
			_, r := call("GET", "/api/runs/"+id, "")
			if s, _ := r["status"].(string); store.RunStatus(s).Final() {
				if s != "succeeded" {
					t.Fatalf("run %s %s: %v", id, s, r["error"])
				}
				out[id] = true
			}
		}
		return out
	}
	// Mid-way: some runs finished, not all.
	deadline := time.Now().Add(60 * time.Second)
	var before map[string]bool
	for {
		before = finished()
		if len(before) >= 5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("%d of %d runs finished when the backup began", len(before), n)
	if len(before) == 0 || len(before) == n {
		t.Logf("the backup did not land mid-way (%d finished); the check still holds but is weaker", len(before))
	}
	// Serve's two workers keep writing checkpoints during the backup.
	start := time.Now()
	code, out, errOut := run(t, "backup", "mid.db")
	took := time.Since(start)
	if code != 0 {
		t.Fatalf("backup while serve runs: %d %s", code, errOut)
	}
	after := finished()
	t.Logf("backup took %s (%s); %d runs finished by its end", took.Round(time.Millisecond), strings.TrimSpace(out), len(after))
	for time.Now().Before(deadline) && len(after) < n {
		time.Sleep(50 * time.Millisecond)
		after = finished()
	}
	if len(after) < n {
		t.Fatalf("only %d of %d runs finished", len(after), n)
	}
	stop()
	stopped = true

	target := filepath.Join(t.TempDir(), "data")
	if code, _, errOut := run(t, append(restoreConfig(t, target), "restore", "mid.db")...); code != 0 {
		t.Fatalf("restore: %s", errOut)
	}
	st, err := sqlite.Open(t.Context(), filepath.Join(target, "agentcraft.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs := storetest.ReadCheck(t, st)
	restored := map[string]store.Run{}
	for _, rs := range runs {
		for _, r := range rs {
			restored[r.ID] = r
		}
	}
	for id := range before {
		r, ok := restored[id]
		switch {
		case !ok:
			t.Errorf("run %s finished before the backup but is not in it", id)
		case r.Status != store.RunSucceeded:
			t.Errorf("run %s finished before the backup but is %s in it", id, r.Status)
		}
	}
	t.Logf("the restored database holds %d runs, %d of them finished before the backup", len(restored), len(before))
}
