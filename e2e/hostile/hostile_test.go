package hostile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// maxServerRSS bounds the server's peak resident set (VmHWM) over the
// whole test. The server at rest holds about 100 MiB; before the sandbox,
// the code node alone grew it by 3.3 GB and the join by 10 GB.
const maxServerRSS = 300 << 20

// rssMargin is how much the server's peak may pass its size at rest: the
// requests' own buffers, nowhere near the jobs' caps (256 MiB for a code
// node, 1 GiB for a file), which bind the child processes.
const rssMargin = 64 << 20

// server is a running `agentcraft serve`.
type server struct {
	t    *testing.T
	base string
	key  string
	cmd  *exec.Cmd
}

func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "agentcraft")
	out, err := exec.Command("go", "build", "-o", bin, "../../cmd/agentcraft").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// start creates an API key and starts serve in a fresh directory.
func start(t *testing.T, bin string) *server {
	t.Helper()
	dir := t.TempDir()
	addr := freeAddr(t)
	env := append(os.Environ(), "AGENTCRAFT_SERVER_ADDR="+addr, "AGENTCRAFT_DETECT_PROVIDERS=false")
	keys := exec.Command(bin, "keys", "create", "--workspace", "default")
	keys.Dir, keys.Env = dir, env
	var stderr bytes.Buffer
	keys.Stderr = &stderr
	out, err := keys.Output()
	if err != nil {
		t.Fatalf("keys create: %v\n%s", err, stderr.String())
	}
	s := &server{t: t, base: "http://" + addr, key: strings.TrimSpace(string(out))}

	s.cmd = exec.Command(bin, "serve")
	s.cmd.Dir, s.cmd.Env = dir, env
	logs, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	var logMu sync.Mutex // guards logText
	var logText strings.Builder
	go func() {
		sc := bufio.NewScanner(logs)
		once := sync.Once{}
		for sc.Scan() {
			logMu.Lock()
			logText.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if strings.Contains(sc.Text(), "listening") {
				once.Do(func() { close(ready) })
			}
		}
	}()
	t.Cleanup(func() {
		_ = s.cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- s.cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = s.cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			logMu.Lock()
			t.Logf("server log:\n%s", logText.String())
			logMu.Unlock()
		}
	})
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not start within 60s")
	}
	return s
}

// call sends a request and decodes a JSON answer into out (when not nil).
func (s *server) call(method, path, contentType string, body io.Reader, out any) int {
	s.t.Helper()
	req, err := http.NewRequest(method, s.base+path, body)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.key)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatalf("%s %s = %d %s: %v", method, path, resp.StatusCode, b, err)
		}
	}
	return resp.StatusCode
}

// peakRSS reads the server's VmHWM, in bytes.
func (s *server) peakRSS() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		s.t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				s.t.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	s.t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

// healthWatch polls /health every 100 ms until stop, counting failures and
// the slowest answer.
type healthWatch struct {
	polls, failures atomic.Int64
	slowest         atomic.Int64 // nanoseconds
	lastErr         atomic.Value // string
	stop            context.CancelFunc
	done            chan struct{}
}

func watchHealth(base string) *healthWatch {
	ctx, cancel := context.WithCancel(context.Background())
	h := &healthWatch{stop: cancel, done: make(chan struct{})}
	client := &http.Client{Timeout: 2 * time.Second}
	go func() {
		defer close(h.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			began := time.Now()
			resp, err := client.Get(base + "/health")
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("status %d", resp.StatusCode)
				}
			}
			h.polls.Add(1)
			if d := int64(time.Since(began)); d > h.slowest.Load() {
				h.slowest.Store(d)
			}
			if err != nil {
				h.failures.Add(1)
				h.lastErr.Store(err.Error())
			}
		}
	}()
	return h
}

func (h *healthWatch) finish() { h.stop(); <-h.done }

func TestHostileInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	s := start(t, build(t))
	rest := s.peakRSS()
	h := watchHealth(s.base)

	// Code nodes whose one built-in call, in process, ran past their 5 s
	// limit: the fill took 12.6 s and 3.3 GB, the join (as the
	// run_javascript tool) grew the server to 10 GB until it was killed.
	// Starlark's one-call bombs: a 512 MiB string, a list of 268 million
	// ints.
	const nodeTimeout = 5 * time.Second
	for i, c := range []struct{ mode, script string }{
		{"javascript", "new Array(40000000).fill(0)"},
		{"javascript", "new Array(4294967295).join('x')"},
		{"starlark", "x = 'a' * (1 << 29)"},
		{"starlark", "x = list(range(1 << 28))"},
	} {
		script := c.script
		def := `{"name":"hostile-` + strconv.Itoa(i) + `","nodes":[{"id":"start","type":"start"},` +
			`{"id":"js","type":"code","config":{"mode":"` + c.mode + `","timeout":"5s","script":"` + script + `"}},` +
			`{"id":"end","type":"end"}],"edges":[{"id":"e1","source":"start","target":"js"},{"id":"e2","source":"js","target":"end"}]}`
		var wf struct{ ID string }
		if code := s.call("POST", "/api/workflows", "application/json", strings.NewReader(def), &wf); code != http.StatusCreated {
			t.Fatalf("create workflow = %d", code)
		}
		began := time.Now()
		var run struct{ ID, Status, Error string }
		if code := s.call("POST", "/api/workflows/"+wf.ID+"/runs", "application/json", strings.NewReader(`{"input":"x"}`), &run); code != http.StatusAccepted {
			t.Fatalf("start run = %d", code)
		}
		for run.Status != "failed" && run.Status != "succeeded" && run.Status != "cancelled" {
			if time.Since(began) > nodeTimeout+10*time.Second {
				t.Fatalf("%s: run still %s after %v", script, run.Status, time.Since(began))
			}
			time.Sleep(50 * time.Millisecond)
			s.call("GET", "/api/runs/"+run.ID, "", nil, &run)
		}
		wall := time.Since(began)
		t.Logf("code node %s: run %s after %v: %s", script, run.Status, wall.Round(time.Millisecond), run.Error)
		if run.Status != "failed" || !strings.Contains(run.Error, "memory than its cap of 256 MiB") && !strings.Contains(run.Error, "script ran longer than 5s") {
			t.Errorf("%s: run %s with error %q, want failed with the 256 MiB cap or the 5s limit", script, run.Status, run.Error)
		}
		// The status poll and the queue's pick-up add to the node's limit.
		if limit := nodeTimeout + 3*time.Second; wall > limit {
			t.Errorf("%s: run ended after %v, more than %v", script, wall, limit)
		}
	}

	// The fuzz finding: a PDF whose page tree loops, once hanging its
	// ingest job forever at a core each.
	pdf := cyclePDF(t)
	if code := s.call("POST", "/api/kbs", "application/json", strings.NewReader(`{"name":"docs"}`), nil); code != http.StatusCreated {
		t.Fatalf("create kb = %d", code)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	hdr := textproto.MIMEHeader{}
	hdr.Set("Content-Disposition", `form-data; name="file"; filename="cycle.pdf"`)
	hdr.Set("Content-Type", "application/pdf")
	w, _ := mw.CreatePart(hdr)
	w.Write(pdf)
	mw.Close()
	began := time.Now()
	var job struct {
		ID, Status, Error string
		Files             []struct{ Name, Status, Error string }
	}
	if code := s.call("POST", "/api/kbs/docs/ingest?wait=false", mw.FormDataContentType(), &body, &job); code != http.StatusAccepted {
		t.Fatalf("ingest = %d", code)
	}
	for job.Status != "succeeded" && job.Status != "failed" {
		if time.Since(began) > 30*time.Second {
			t.Fatalf("ingest job still %s after %v", job.Status, time.Since(began))
		}
		time.Sleep(50 * time.Millisecond)
		s.call("GET", "/api/kbs/docs/jobs/"+job.ID, "", nil, &job)
	}
	ingestWall := time.Since(began)
	fileErr := ""
	if len(job.Files) == 1 {
		fileErr = job.Files[0].Error
	}
	t.Logf("cycle.pdf ingest: job %s after %v: %s %s", job.Status, ingestWall.Round(time.Millisecond), job.Error, fileErr)
	if !strings.Contains(job.Error+fileErr, "page tree has a cycle") {
		t.Errorf("ingest job %+v, want an error saying the page tree has a cycle", job)
	}

	h.finish()
	peak := s.peakRSS()
	t.Logf("/health: %d polls, %d failed, slowest %v", h.polls.Load(), h.failures.Load(), time.Duration(h.slowest.Load()).Round(time.Millisecond))
	t.Logf("server peak RSS (VmHWM): %d MiB at rest, %d MiB after the hostile inputs (bound %d MiB, at most %d MiB over rest)", rest>>20, peak>>20, maxServerRSS>>20, rssMargin>>20)
	if n := h.failures.Load(); n > 0 || h.polls.Load() == 0 {
		t.Errorf("/health failed %d of %d times (last: %v)", n, h.polls.Load(), h.lastErr.Load())
	}
	if peak > maxServerRSS || peak > rest+rssMargin {
		t.Errorf("server peak RSS %d MiB, more than %d MiB or %d MiB over its %d MiB at rest", peak>>20, maxServerRSS>>20, rssMargin>>20, rest>>20)
	}
}

// cyclePDF reads the fuzz seed of search/extract: a PDF whose page tree
// lists the root among a child's Kids.
func cyclePDF(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../../search/extract/testdata/fuzz/FuzzExtract/55c14562bdce073c")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[2], "[]byte("), ")"))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(s)
}
