package crash

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tests of this file run the real `agentcraft` binary, built once
// into a temporary directory, as an operator does: a config file, `serve`
// (or `worker`) started, killed with SIGKILL and started again.

var (
	buildOnce sync.Once
	binDir    string // removed by TestMain
	binPath   string
	buildErr  error
)

// agentcraftBinary builds cmd/agentcraft once per test binary.
func agentcraftBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "agentcraft-crash-bin-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "agentcraft")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/agentcraftlab/agentcraft/cmd/agentcraft").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// freeAddr returns a loopback address nothing listens on (a restarted
// serve reuses its predecessor's).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// binConfig is what a test's agentcraft.yaml says.
type binConfig struct {
	dir    string // data directory (master key)
	dbURL  string
	llmURL string // an llmtest OpenAI fake's root: provider "fake"
	embURL string // optional: an OpenAI-compatible embeddings root
	extra  string // more YAML, appended
}

// write writes the config file and returns its path.
func (c binConfig) write(t *testing.T, addr string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "server: {addr: %q, auth: none, shutdown_timeout: 2s}\n", addr)
	fmt.Fprintf(&b, "database: {url: %q}\n", c.dbURL)
	fmt.Fprintf(&b, "secrets: {master_key_file: %q}\n", filepath.Join(c.dir, "master.key"))
	b.WriteString("detect_providers: false\nlog: {level: info, format: text}\n")
	// Webhook receivers and the fakes listen on loopback.
	b.WriteString("egress: {allow: [\"127.0.0.1\"]}\n")
	if c.llmURL != "" {
		fmt.Fprintf(&b, "providers:\n  - {name: fake, type: openai, base_url: %q, api_key: test, retry: {enabled: false}}\n", c.llmURL+"/v1")
	}
	if c.embURL != "" {
		fmt.Fprintf(&b, "search: {embedder: {base_url: %q, model: fake-embed, dimensions: 4}}\n", c.embURL+"/v1")
	}
	b.WriteString(c.extra)
	path := filepath.Join(c.dir, "agentcraft-"+strings.ReplaceAll(addr, ":", "_")+".yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// proc is one agentcraft process.
type proc struct {
	name   string
	cmd    *exec.Cmd
	logs   *lockedBuffer
	exited chan struct{}
	err    error // set before exited closes
}

// startProc starts `agentcraft --config cfg args...` with env added.
func startProc(t *testing.T, name, cfg string, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(agentcraftBinary(t), append([]string{"--config", cfg}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	p := &proc{name: name, cmd: cmd, logs: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s log:\n%s", p.name, p.logs.String())
		}
	})
	return p
}

// startServe starts `serve` on addr and waits until it answers /health.
func startServe(t *testing.T, name string, c binConfig, addr string, env ...string) *proc {
	t.Helper()
	p := startProc(t, name, c.write(t, addr), env, "serve")
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-p.exited:
			t.Fatalf("%s exited before it served: %v\n%s", name, p.err, p.logs.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer /health within 30s\n%s", name, p.logs.String())
		}
	}
}

// kill sends SIGKILL (a crash: no shutdown code runs) and waits for the
// process to be gone. It does nothing to an exited process.
func (p *proc) kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// api calls the management API of the serve at addr (auth none) and
// decodes the answer into out (when not nil); it fails t unless the
// status is want.
func api(t *testing.T, addr, method, path, body string, want int, out any) {
	t.Helper()
	status, b := apiDo(t, addr, method, path, body)
	if status != want {
		t.Fatalf("%s %s = %d %s, want %d", method, path, status, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
}

func apiDo(t *testing.T, addr, method, path, body string) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, "http://"+addr+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// eventually polls cond every 20ms until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// hookReceiver counts webhook deliveries per path and Idempotency-Key.
type hookReceiver struct {
	mu   sync.Mutex
	hits map[string]int // "path key" → deliveries; guarded by mu
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	h.mu.Lock()
	h.hits[r.URL.Path+" "+r.Header.Get("Idempotency-Key")]++
	h.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// deliveries returns the hits of path, by Idempotency-Key.
func (h *hookReceiver) deliveries(path string) map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{}
	for k, n := range h.hits {
		if p, key, _ := strings.Cut(k, " "); p == path {
			out[key] += n
		}
	}
	return out
}

// jsonString quotes s for a JSON document.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(bytes.TrimSpace(b))
}
