package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/tool"
)

// The integration tests run the reference MCP servers from npm. The first
// run installs them into os.UserCacheDir()/agentcraft-npm (outside the
// repository; AGENTCRAFT_NPM_DIR overrides it) and later runs reuse them.
// CI can install them ahead of the tests with:
//
//	npm install --prefix "${XDG_CACHE_HOME:-$HOME/.cache}/agentcraft-npm" --no-audit --no-fund \
//	    @modelcontextprotocol/server-everything @modelcontextprotocol/server-memory
//
// Without node and npm the tests skip, saying so; a failed install skips
// too, except when CI is set.
var npmPackages = []string{"@modelcontextprotocol/server-everything", "@modelcontextprotocol/server-memory"}

var (
	npmOnce sync.Once
	npmDir  string
	npmErr  error
)

// npmServers returns the directory holding node_modules with the npm MCP
// servers, installing them on first use, or skips t when node or npm is
// missing (outside CI, also when the install fails).
func npmServers(tb testing.TB) (node, dir string) {
	tb.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		tb.Skip("node is not installed: skipping the integration tests with the npm MCP servers")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		tb.Skip("npm is not installed: skipping the integration tests with the npm MCP servers")
	}
	npmOnce.Do(func() {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		npmDir = filepath.Join(base, "agentcraft-npm")
		if v := os.Getenv("AGENTCRAFT_NPM_DIR"); v != "" {
			npmDir = v
		}
		missing := false
		for _, p := range npmPackages {
			if _, err := os.Stat(filepath.Join(npmDir, "node_modules", p, "package.json")); err != nil {
				missing = true
			}
		}
		if !missing {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		args := append([]string{"install", "--prefix", npmDir, "--no-audit", "--no-fund", "--prefer-offline"}, npmPackages...)
		out, err := exec.CommandContext(ctx, npm, args...).CombinedOutput()
		if err != nil {
			npmErr = fmt.Errorf("npm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	})
	if npmErr != nil {
		if os.Getenv("CI") != "" {
			tb.Fatal(npmErr)
		}
		tb.Skipf("cannot install the npm MCP servers (set CI to make this fail): %v", npmErr)
	}
	return node, npmDir
}

func serverScript(dir, pkg string) string {
	return filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
}

// startEverythingHTTP runs server-everything's streamable HTTP mode on a
// free port and returns its endpoint once it accepts connections.
func startEverythingHTTP(tb testing.TB) string {
	tb.Helper()
	node, dir := npmServers(tb)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(node, serverScript(dir, "server-everything"), "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	var stderr tailWriter
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			tb.Fatalf("server-everything did not listen on %s: %s", addr, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "http://" + addr + "/mcp"
}

func TestMCPNpmEverythingStdio(t *testing.T) {
	node, dir := npmServers(t)
	m := startManager(t, []ServerConfig{{Name: "everything", Command: node,
		Args: []string{serverScript(dir, "server-everything"), "stdio"}, Env: map[string]string{"AGENTCRAFT_MCP_TEST": "forty-two"}}}, nil, nil)
	if st := m.Status()[0]; !st.Connected {
		t.Fatalf("not connected: %s", st.Error)
	}
	echo := resolveOne(t, m, "everything__echo")
	if echo.Capability() != tool.CapabilityLow {
		t.Errorf("echo is read-only, capability = %v", echo.Capability())
	}
	res, err := echo.Call(t.Context(), json.RawMessage(`{"message":"hello from agentcraft"}`))
	if err != nil || res.IsError || !strings.Contains(res.Content, "hello from agentcraft") {
		t.Errorf("echo = %+v, %v", res, err)
	}
	env := resolveOne(t, m, "everything__get-env")
	res, err = env.Call(t.Context(), nil)
	if err != nil || !strings.Contains(res.Content, "forty-two") {
		t.Errorf("get-env does not show the configured env: %+v, %v", res, err)
	}
	res, err = echo.Call(t.Context(), json.RawMessage(`{"wrong":1}`))
	if err != nil || !res.IsError {
		t.Errorf("echo with bad arguments = %+v, %v; want an error result", res, err)
	}
}

func TestMCPNpmEverythingHTTP(t *testing.T) {
	url := startEverythingHTTP(t)
	m := startManager(t, []ServerConfig{{Name: "everything", URL: url}}, nil, nil)
	if st := m.Status()[0]; !st.Connected {
		t.Fatalf("not connected: %s", st.Error)
	}
	res, err := resolveOne(t, m, "everything__echo").Call(t.Context(), json.RawMessage(`{"message":"over http"}`))
	if err != nil || res.IsError || !strings.Contains(res.Content, "over http") {
		t.Errorf("echo = %+v, %v", res, err)
	}
	res, err = resolveOne(t, m, "everything__get-tiny-image").Call(t.Context(), nil)
	if err != nil || !strings.Contains(res.Content, "[image image/png") {
		t.Errorf("image content must be summarised: %+v, %v", res, err)
	}
}

func TestMCPNpmMemoryStdio(t *testing.T) {
	node, dir := npmServers(t)
	mem := filepath.Join(t.TempDir(), "memory.jsonl")
	m := startManager(t, []ServerConfig{{Name: "memory", Command: node,
		Args: []string{serverScript(dir, "server-memory")}, Env: map[string]string{"MEMORY_FILE_PATH": mem}}}, nil, nil)
	if st := m.Status()[0]; !st.Connected {
		t.Fatalf("not connected: %s", st.Error)
	}
	res, err := resolveOne(t, m, "memory__create_entities").Call(t.Context(), json.RawMessage(
		`{"entities":[{"name":"Ada Lovelace","entityType":"person","observations":["wrote the first program"]}]}`))
	if err != nil || res.IsError {
		t.Fatalf("create_entities = %+v, %v", res, err)
	}
	res, err = resolveOne(t, m, "memory__read_graph").Call(t.Context(), nil)
	if err != nil || res.IsError || !strings.Contains(res.Content, "Ada Lovelace") || !strings.Contains(res.Content, "wrote the first program") {
		t.Errorf("read_graph = %+v, %v; want the entity just created", res, err)
	}
}
