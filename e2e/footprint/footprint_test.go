// Package footprint measures what the release binary costs a machine: its
// size on disk, the time from exec to the first 200 of /health with an
// empty data directory (migrations included) and with the one it left,
// and the resident set of an idle `serve` with zero configuration.
//
// The test builds with `make build` (the release recipe) and so takes a
// few minutes of compiling: it runs when AGENTCRAFT_FOOTPRINT=1.
//
//	AGENTCRAFT_FOOTPRINT=1 go test -count=1 -run TestFootprint -v ./e2e/footprint/
package footprint

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The budgets of issue 18 ("Operate it"): idle RSS and cold start. The
// binary's size is reported, not held: see README "Footprint".
const (
	maxIdleRSS   = 60 << 20
	maxColdStart = time.Second
)

func TestFootprint(t *testing.T) {
	if os.Getenv("AGENTCRAFT_FOOTPRINT") != "1" {
		t.Skip("set AGENTCRAFT_FOOTPRINT=1 to build the release binary and measure it")
	}
	bin := filepath.Join(t.TempDir(), "agentcraft")
	build := exec.Command("make", "-C", "../..", "build", "BIN="+bin)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	st, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.Contains(string(out), " commit ") {
		t.Fatalf("agentcraft version = %q, %v; want the version and commit make build stamps", out, err)
	}
	t.Logf("%s", bytes.TrimSpace(out))
	t.Logf("binary: %.1f MiB (%d bytes), stripped", float64(st.Size())/(1<<20), st.Size())

	dir := t.TempDir()
	first := start(t, bin, dir)
	t.Logf("cold start, empty data directory: %v to the first 200 of /health", first.ready)
	// Idle: past the releaser's first look (at listening) and a while of
	// nothing to do, as an idle server on a machine would be.
	time.Sleep(10 * time.Second)
	rss := first.status(t)
	t.Logf("idle RSS after 10 s: %.1f MiB (anonymous %.1f MiB, file-backed %.1f MiB)",
		mib(rss["VmRSS"]), mib(rss["RssAnon"]), mib(rss["RssFile"]))
	first.stop(t)

	again := start(t, bin, dir)
	t.Logf("start with the data directory it left: %v", again.ready)
	again.stop(t)

	if rss["VmRSS"] > maxIdleRSS {
		t.Errorf("idle RSS %.1f MiB, budget %.0f MiB", mib(rss["VmRSS"]), mib(maxIdleRSS))
	}
	for _, d := range []time.Duration{first.ready, again.ready} {
		if d > maxColdStart {
			t.Errorf("start to /health took %v, budget %v", d, maxColdStart)
		}
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

type proc struct {
	cmd   *exec.Cmd
	ready time.Duration
	done  chan error
}

// start runs `serve` in dir with zero configuration (no agentcraft.yaml, a
// free port) and waits for /health.
func start(t *testing.T, bin, dir string) *proc {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve", "--addr", addr)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	client := &http.Client{Timeout: time.Second}
	for {
		if time.Since(begin) > 30*time.Second {
			t.Fatalf("serve not healthy after 30 s:\n%s", logs.String())
		}
		select {
		case err := <-p.done:
			t.Fatalf("serve exited: %v\n%s", err, logs.String())
		default:
		}
		resp, err := client.Get("http://" + addr + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				p.ready = time.Since(begin)
				return p
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// status reads the memory lines of /proc/<pid>/status, in bytes.
func (p *proc) status(t *testing.T) map[string]int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	m := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		f := strings.Fields(v)
		if !ok || len(f) != 2 || f[1] != "kB" {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err == nil {
			m[k] = n << 10
		}
	}
	return m
}

func (p *proc) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(os.Interrupt)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	select {
	case <-p.done:
	case <-ctx.Done():
		t.Fatal("serve did not stop within 30 s of SIGINT")
	}
}
