package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// child is an agentcraft process started by startChild: the test binary
// re-executed as the command line (TestMain).
type child struct {
	cmd  *exec.Cmd
	addr chan string // the address serve logged as listening
	done chan error  // Wait's result
	mu   sync.Mutex  // guards log
	log  bytes.Buffer
}

// startChild runs `agentcraft ARGS...` in dir. Its stderr is collected
// (stderr()) and scanned for the listening address.
func startChild(t *testing.T, dir string, args ...string) *child {
	t.Helper()
	c := &child{addr: make(chan string, 1), done: make(chan error, 1)}
	c.cmd = exec.Command(os.Args[0], args...)
	c.cmd.Dir = dir
	c.cmd.Env = append(os.Environ(), childEnv+"=1")
	c.cmd.Stdout = io.Discard
	pr, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := regexp.MustCompile(`msg=listening addr=(\S+)`)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			c.mu.Lock()
			c.log.WriteString(line + "\n")
			c.mu.Unlock()
			if m := listening.FindStringSubmatch(line); m != nil {
				select {
				case c.addr <- m[1]:
				default:
				}
			}
		}
		c.done <- c.cmd.Wait()
	}()
	t.Cleanup(func() {
		if c.cmd.ProcessState == nil {
			c.cmd.Process.Kill()
			<-c.done
		}
	})
	return c
}

func (c *child) stderr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.log.String()
}

// waitListening returns serve's base URL.
func (c *child) waitListening(t *testing.T) string {
	t.Helper()
	select {
	case a := <-c.addr:
		return "http://" + a
	case err := <-c.done:
		c.done <- err
		t.Fatalf("serve exited (%v) before listening:\n%s", err, c.stderr())
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not listen within 60s:\n%s", c.stderr())
	}
	return ""
}

// waitExit waits for the process to end by itself and returns its error.
func (c *child) waitExit(t *testing.T) error {
	t.Helper()
	select {
	case err := <-c.done:
		c.done <- err
		return err
	case <-time.After(60 * time.Second):
		t.Fatalf("process still running after 60s:\n%s", c.stderr())
	}
	return nil
}

// kill ends the process with SIGKILL, as a crash would.
func (c *child) kill(t *testing.T) {
	t.Helper()
	c.cmd.Process.Signal(syscall.SIGKILL)
	c.waitExit(t)
}

// blockingHook counts requests and holds each open until release, so that
// a run's http-request step stays in flight.
type blockingHook struct {
	srv     *httptest.Server
	hits    atomic.Int32
	arrived chan struct{}
	release chan struct{}
}

func newBlockingHook(t *testing.T) *blockingHook {
	h := &blockingHook{arrived: make(chan struct{}, 16), release: make(chan struct{})}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.hits.Add(1)
		h.arrived <- struct{}{}
		select {
		case <-h.release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(func() {
		select {
		case <-h.release:
		default:
			close(h.release)
		}
		h.srv.Close()
	})
	return h
}

func (h *blockingHook) waitArrived(t *testing.T) {
	t.Helper()
	select {
	case <-h.arrived:
	case <-time.After(60 * time.Second):
		t.Fatal("the run's http step never reached the hook")
	}
}

// executingSetup writes an agentcraft.yaml (auth none, no provider
// detection, the hook reachable) into a new directory and returns it.
func executingSetup(t *testing.T, hook *blockingHook) string {
	t.Helper()
	dir := t.TempDir()
	host := strings.TrimPrefix(hook.srv.URL, "http://")
	yaml := fmt.Sprintf("server:\n  auth: none\n  shutdown_timeout: 2s\ndetect_providers: false\negress:\n  allow: [%q]\n", host)
	if err := os.WriteFile(filepath.Join(dir, "agentcraft.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startHookRun creates a workflow whose one step POSTs to the hook and
// starts a run of it on the server at base.
func startHookRun(t *testing.T, base string, hook *blockingHook) string {
	t.Helper()
	def := fmt.Sprintf(`{"name":"hooked","nodes":[{"id":"start","type":"start"},
	{"id":"call","type":"http-request","config":{"method":"POST","url":%q,"timeout":"120s"}},
	{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"call"},{"id":"e2","source":"call","target":"end"}]}`, hook.srv.URL+"/step")
	post := func(path, body string) map[string]any {
		resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil || resp.StatusCode >= 300 {
			t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
		}
		return m
	}
	wf := post("/api/workflows", def)
	run := post("/api/workflows/"+wf["id"].(string)+"/runs", `{"input":"x"}`)
	return run["id"].(string)
}

// TestSecondProcessRefusesLockedSQLite: while one serve executes a run on
// a SQLite database, a second serve or worker on the same file refuses
// to start, names the holder, and repeats none of the first one's
// in-flight steps; `keys create` still works beside it.
func TestSecondProcessRefusesLockedSQLite(t *testing.T) {
	hook := newBlockingHook(t)
	dir := executingSetup(t, hook)
	first := startChild(t, dir, "serve", "--addr", "127.0.0.1:0")
	base := first.waitListening(t)
	startHookRun(t, base, hook)
	hook.waitArrived(t)

	holder := fmt.Sprintf("pid %d (agentcraft serve", first.cmd.Process.Pid)
	for _, args := range [][]string{{"serve", "--addr", "127.0.0.1:0"}, {"worker"}} {
		second := startChild(t, dir, args...)
		if err := second.waitExit(t); err == nil {
			t.Fatalf("a second %s on the same database started:\n%s", args[0], second.stderr())
		}
		if out := second.stderr(); !strings.Contains(out, "database is in use") || !strings.Contains(out, holder) {
			t.Errorf("second %s: stderr does not name the holder %q:\n%s", args[0], holder, out)
		}
	}
	if n := hook.hits.Load(); n != 1 {
		t.Errorf("the in-flight step ran %d times, want 1", n)
	}

	keys := startChild(t, dir, "keys", "create", "--workspace", "default")
	if err := keys.waitExit(t); err != nil {
		t.Errorf("keys create beside a running serve: %v\n%s", err, keys.stderr())
	}
	first.kill(t)
}

// TestServeOnTakenPortResumesNothing: a serve that cannot bind its port
// fails before it resumes the live runs a crashed predecessor left, so
// their in-flight steps are not repeated by a process that then exits;
// a serve that can bind resumes them.
func TestServeOnTakenPortResumesNothing(t *testing.T) {
	hook := newBlockingHook(t)
	dir := executingSetup(t, hook)
	first := startChild(t, dir, "serve", "--addr", "127.0.0.1:0")
	startHookRun(t, first.waitListening(t), hook)
	hook.waitArrived(t)
	first.kill(t) // the run stays live, its step in flight

	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	second := startChild(t, dir, "serve", "--addr", taken.Addr().String())
	if err := second.waitExit(t); err == nil || !strings.Contains(second.stderr(), "listen on") {
		t.Fatalf("serve on a taken port: %v\n%s", err, second.stderr())
	}
	// Give a wrongly resumed step time to reach the hook.
	time.Sleep(300 * time.Millisecond)
	if n := hook.hits.Load(); n != 1 {
		t.Errorf("the step ran %d times by the time the port clash ended serve, want 1", n)
	}

	third := startChild(t, dir, "serve", "--addr", "127.0.0.1:0")
	third.waitListening(t)
	hook.waitArrived(t)
	if n := hook.hits.Load(); n != 2 {
		t.Errorf("after a restart that binds, the step ran %d times in all, want 2", n)
	}
	third.kill(t)
}

// TestDataFilesArePrivate: every file serve creates under data/ (the
// database, its WAL and shared memory, the master key, the lock) is 0600
// whatever the umask, after start and a write. The search index lives in
// the database: no search.db appears.
func TestDataFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022) // the common default, which leaves 0644
	defer syscall.Umask(old)
	hook := newBlockingHook(t)
	dir := executingSetup(t, hook)
	srv := startChild(t, dir, "serve", "--addr", "127.0.0.1:0")
	base := srv.waitListening(t)
	resp, err := http.Post(base+"/api/workflows", "application/json", strings.NewReader(
		`{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"end","type":"end"}],"edges":[{"id":"e1","source":"start","target":"end"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create workflow: %d", resp.StatusCode)
	}
	kb := startChild(t, dir, "kb", "create", "manuals")
	if err := kb.waitExit(t); err != nil {
		t.Fatalf("kb create: %v\n%s", err, kb.stderr())
	}
	var files []string
	err = filepath.WalkDir(filepath.Join(dir, "data"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := os.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s is %v, want %v", path, fi.Mode().Perm(), want)
		}
		files = append(files, d.Name())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"agentcraft.db", "agentcraft.db-wal", "master.key", "agentcraft.db.lock"} {
		if !slices.Contains(files, name) {
			t.Errorf("data/ has no %s: %v", name, files)
		}
	}
	if slices.Contains(files, legacySearchFile) {
		t.Errorf("data/ has a %s: the search index belongs in agentcraft.db (%v)", legacySearchFile, files)
	}
	srv.kill(t)
}
