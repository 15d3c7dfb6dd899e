package cli

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestVersion(t *testing.T) {
	code, out, _ := run(t, "version")
	if code != 0 || !strings.HasPrefix(out, "agentcraft ") || !strings.Contains(out, " commit ") || !strings.Contains(out, runtime.Version()) {
		t.Fatalf("version: %d %q", code, out)
	}
	// make build stamps both through -ldflags -X.
	defer func(v, c string) { Version, Commit = v, c }(Version, Commit)
	Version, Commit = "v1.2.3", "0123456789ab"
	if _, out, _ = run(t, "version"); !strings.HasPrefix(out, "agentcraft v1.2.3 commit 0123456789ab ") {
		t.Fatalf("version with build stamps = %q", out)
	}
}

func TestUnknownCommandFails(t *testing.T) {
	code, _, errOut := run(t, "frobnicate")
	if code == 0 || !strings.Contains(errOut, "unknown command") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

func TestBadConfigFailsWithPath(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "agentcraft.yaml")
	os.WriteFile(p, []byte("server:\n  adr: x\n"), 0o600)
	code, _, errOut := run(t, "--config", p, "migrate")
	if code == 0 || !strings.Contains(errOut, "server.adr: unknown key") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

func TestKeysCreateListRevoke(t *testing.T) {
	t.Chdir(t.TempDir())
	code, key, _ := run(t, "keys", "create", "--workspace", "team", "--create-workspace", "--name", "ci")
	key = strings.TrimSpace(key)
	if code != 0 || !strings.HasPrefix(key, "ac_") || len(key) < 40 {
		t.Fatalf("keys create: %d %q", code, key)
	}
	code, list, _ := run(t, "keys", "list", "--workspace", "team")
	if code != 0 || !strings.Contains(list, key[:9]) || strings.Contains(list, key) {
		t.Fatalf("keys list must show the prefix, never the key: %d\n%s", code, list)
	}
	id := strings.Fields(strings.Split(list, "\n")[1])[0]
	if code, _, errOut := run(t, "keys", "revoke", id, "--workspace", "team"); code != 0 {
		t.Fatalf("revoke: %s", errOut)
	}
	if code, _, _ := run(t, "keys", "revoke", "no-such-id", "--workspace", "team"); code == 0 {
		t.Fatal("revoking an unknown key succeeded")
	}
	db, err := os.ReadFile(filepath.Join("data", "agentcraft.db"))
	if err == nil && bytes.Contains(db, []byte(key)) {
		t.Fatal("the key is stored in clear")
	}
}

// TestServeZeroConfig starts the server as a newcomer would, with no file
// and no environment, and checks /health and /ready.
func TestServeZeroConfig(t *testing.T) {
	t.Chdir(t.TempDir())
	base, _, stop := startServe(t)
	for _, path := range []string{"/health", "/ready"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s = %d", path, resp.StatusCode)
		}
	}
	stop()
	if _, err := os.Stat(filepath.Join("data", "agentcraft.db")); err != nil {
		t.Errorf("zero config did not create ./data/agentcraft.db: %v", err)
	}
	if fi, err := os.Stat(filepath.Join("data", "master.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("master key file: %v %v", fi, err)
	}
}

// syncWriter is a log buffer safe to read while serve writes to it.
type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func newSyncWriter() *syncWriter { return &syncWriter{w: new(bytes.Buffer)} }

// String is what was written so far.
func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}

// TestDatabaseBesideConfigFile: a command given --config from another
// directory opens the default ./data beside the file, creates nothing in
// the working directory, and says which database it opened.
func TestDatabaseBesideConfigFile(t *testing.T) {
	confDir := t.TempDir()
	p := filepath.Join(confDir, "agentcraft.yaml")
	if err := os.WriteFile(p, []byte("detect_providers: false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	t.Chdir(elsewhere)
	db := filepath.Join(confDir, "data", "agentcraft.db")
	code, _, errOut := run(t, "--config", p, "keys", "create", "--workspace", "default")
	if code != 0 {
		t.Fatalf("keys create: %s", errOut)
	}
	if !strings.Contains(errOut, "database="+db) {
		t.Errorf("stderr does not name the database %s:\n%s", db, errOut)
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("no database beside the config file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "data")); err == nil {
		t.Error("a second data/ was created in the working directory")
	}
	code, _, errOut = run(t, "--config", p, "keys", "list")
	if code != 0 || !strings.Contains(errOut, "msg=database_opened database="+db) {
		t.Errorf("keys list: exit %d, stderr:\n%s", code, errOut)
	}
}

// TestKeysCreateNeedsExistingWorkspace: a mistyped workspace is an error
// that creates nothing; --create-workspace creates one on purpose; the
// configured default workspace works on a database serve never opened
// (the README's quick start).
func TestKeysCreateNeedsExistingWorkspace(t *testing.T) {
	t.Chdir(t.TempDir())
	code, out, errOut := run(t, "keys", "create", "--workspace", "defualt")
	if code == 0 || out != "" || !strings.Contains(errOut, `workspace "defualt" does not exist`) || !strings.Contains(errOut, "--create-workspace") {
		t.Fatalf("keys create on a typo: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if code, _, _ := run(t, "keys", "list", "--workspace", "defualt"); code == 0 {
		t.Fatal("the mistyped workspace was created")
	}
	if code, _, errOut := run(t, "keys", "create", "--workspace", "default"); code != 0 {
		t.Fatalf("keys create --workspace default on a fresh database: %s", errOut)
	}
	if code, _, errOut := run(t, "keys", "create", "--workspace", "team", "--create-workspace"); code != 0 {
		t.Fatalf("keys create --create-workspace: %s", errOut)
	}
	if code, list, _ := run(t, "keys", "list", "--workspace", "team"); code != 0 || !strings.Contains(list, "ac_") {
		t.Fatalf("keys list of the created workspace: %d\n%s", code, list)
	}
}

// TestMigrateSaysWhatItDid: the first migrate reports the migrations it
// applied, also under log.level warn; the second says up to date.
func TestMigrateSaysWhatItDid(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("AGENTCRAFT_LOG_LEVEL", "warn")
	code, out, errOut := run(t, "migrate")
	if code != 0 || !strings.HasPrefix(out, "applied ") || strings.Contains(out, "up to date") {
		t.Fatalf("first migrate: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	code, out, _ = run(t, "migrate")
	if code != 0 || !strings.HasPrefix(out, "database is up to date:") {
		t.Fatalf("second migrate: exit %d, stdout %q", code, out)
	}
}

// TestUnknownSubcommandFails: a mistyped subcommand of a group fails with
// a suggestion instead of printing the group's help and exiting 0; the
// bare group still prints its help.
func TestUnknownSubcommandFails(t *testing.T) {
	code, out, errOut := run(t, "keys", "craete")
	if code == 0 || !strings.Contains(errOut, `unknown command "craete" for "agentcraft keys"`) || !strings.Contains(errOut, "create") {
		t.Errorf("keys craete: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, _ := run(t, "mcp", "clients", "frob"); code == 0 {
		t.Error("mcp clients frob exited 0")
	}
	if code, out, _ := run(t, "keys"); code != 0 || !strings.Contains(out, "Available Commands") {
		t.Errorf("bare keys: exit %d, stdout %q", code, out)
	}
}
