// Package npmtest runs Node.js programs against npm packages in tests
// (@a2a-js/sdk, @ag-ui/client, playwright-core for the studio's browser
// tests): it installs the packages once per set of versions into a cache
// directory outside the repository and starts or runs scripts that import
// them. Tests that use it skip when node or npm is missing.
//
//	dir := npmtest.A2ASDK(t, "1.3.0")
//	dir := npmtest.Packages(t, "playwright", "playwright-core@1.65.1")
//	url := npmtest.Start(t, dir, serverScript) // prints "listening URL"
//	out := npmtest.Run(t, dir, clientScript, args...)
package npmtest

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A2ASDK installs @a2a-js/sdk at version (with express, which its server
// examples need) in a cache directory outside the repository, once, and
// returns the directory holding node_modules. It skips the test when node
// or npm is missing. CI runs the same command:
// npm install --prefix DIR @a2a-js/sdk@VERSION express@4.
func A2ASDK(t testing.TB, version string) string {
	t.Helper()
	sub := filepath.Join("agentcraft-npm-a2a", version)
	// Caches installed before the stamp file existed hold the SDK already.
	if cache, err := os.UserCacheDir(); err == nil {
		if _, err := os.Stat(filepath.Join(cache, sub, "node_modules", "@a2a-js", "sdk", "package.json")); err == nil {
			return filepath.Join(cache, sub)
		}
	}
	return install(t, sub, "@a2a-js/sdk@"+version, "express@4")
}

// Packages installs the npm package specs (name@version; pin exact
// versions, so that the cache stays right) in a cache directory outside
// the repository named for name and the specs, once, and returns the
// directory holding node_modules. It skips the test when node or npm is
// missing. CI runs the same command: npm install --prefix DIR SPECS...
func Packages(t testing.TB, name string, specs ...string) string {
	t.Helper()
	sorted := slices.Clone(specs)
	slices.Sort(sorted)
	sum := sha256.Sum256([]byte(strings.Join(sorted, "\n")))
	return install(t, filepath.Join("agentcraft-npm-"+name, hex.EncodeToString(sum[:6])), specs...)
}

// install runs npm install of specs into the cache subdirectory sub unless
// an earlier install there finished (its stamp file is written last).
func install(t testing.TB, sub string, specs ...string) string {
	t.Helper()
	for _, bin := range []string{"node", "npm"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed: this interop test needs Node.js 20+ and npm (for %s)", bin, strings.Join(specs, " "))
		}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, sub)
	stamp := filepath.Join(dir, ".agentcraft-installed")
	if _, err := os.Stat(stamp); err == nil {
		return dir
	}
	args := append([]string{"install", "--prefix", dir, "--no-audit", "--no-fund"}, specs...)
	if out, err := exec.Command("npm", args...).CombinedOutput(); err != nil {
		t.Fatalf("npm install %s: %v\n%s", strings.Join(specs, " "), err, out)
	}
	if err := os.WriteFile(stamp, []byte(strings.Join(specs, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// AGUIClient installs @ag-ui/client at version (with its @ag-ui/core)
// in a cache directory outside the repository, once, and returns the
// directory holding node_modules; it skips the test when node or npm is
// missing. CI runs the same command:
// npm install --prefix DIR @ag-ui/client@VERSION.
func AGUIClient(t testing.TB, version string) string {
	t.Helper()
	sub := filepath.Join("agentcraft-npm-agui", version)
	// Caches installed before the stamp file was written hold it already.
	if cache, err := os.UserCacheDir(); err == nil {
		if _, err := os.Stat(filepath.Join(cache, sub, "node_modules", "@ag-ui", "client", "package.json")); err == nil {
			return filepath.Join(cache, sub)
		}
	}
	return install(t, sub, "@ag-ui/client@"+version)
}

// writeScript writes script into dir, where node finds node_modules, and
// removes it when the test ends.
func writeScript(t testing.TB, dir, script string) string {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("%s-%d.mjs", strings.ReplaceAll(t.Name(), "/", "_"), time.Now().UnixNano()))
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(path) })
	return path
}

// Start runs the server script (in dir) with a free port as its argument
// and returns the URL it prints as "listening URL". The process is killed
// when the test ends.
func Start(t testing.TB, dir, script string) string {
	t.Helper()
	path := writeScript(t, dir, script)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("node", path, fmt.Sprint(port))
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				lines <- u
				return
			}
		}
		close(lines)
	}()
	select {
	case u, ok := <-lines:
		if !ok {
			t.Fatalf("node server exited: %s", stderr.String())
		}
		return u
	case <-time.After(20 * time.Second):
		t.Fatalf("node server did not start: %s", stderr.String())
	}
	return ""
}

// Run runs the script (in dir) with args, waits up to a minute for it to
// exit and returns its standard output; a failing script fails the test
// with its standard error.
func Run(t testing.TB, dir, script string, args ...string) []byte {
	t.Helper()
	return RunFor(t, time.Minute, dir, script, args...)
}

// RunFor is Run with another time limit, for scripts (such as browser
// tests) that need longer than a minute.
func RunFor(t testing.TB, limit time.Duration, dir, script string, args ...string) []byte {
	t.Helper()
	path := writeScript(t, dir, script)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{path}, args...)...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\nstdout: %s\nstderr: %s", filepath.Base(path), err, out, stderr.String())
	}
	return out
}
