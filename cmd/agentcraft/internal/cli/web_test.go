package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
)

// TestWebTools: every process that opens the platform (serve, worker,
// run, mcp serve) has web_fetch and browser, and web_search once
// tools.web_search names a back end; web_fetch follows egress.allow.
func TestWebTools(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "intranet page")
	}))
	defer page.Close()
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"results":[{"title":"Found %s","url":"https://example.com/","content":"x"}]}`, r.URL.Query().Get("q"))
	}))
	defer searx.Close()

	open := func(t *testing.T, yaml string) func(name, args string) (string, bool, bool) {
		t.Helper()
		dir := t.TempDir()
		path := filepath.Join(dir, "agentcraft.yaml")
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(path, []string{"AGENTCRAFT_DETECT_PROVIDERS=false"})
		if err != nil {
			t.Fatal(err)
		}
		logger := newLogger(io.Discard, cfg.Log)
		stk, err := openPlatform(t.Context(), cfg, logger, logger)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stk.close)
		return func(name, args string) (string, bool, bool) {
			tl, ok := stk.p.Tools().Get(name)
			if !ok {
				return "", false, false
			}
			res, err := tl.Call(context.Background(), json.RawMessage(args))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return res.Content, res.IsError, true
		}
	}

	call := open(t, "")
	if _, _, ok := call("browser", `{}`); !ok {
		t.Error("browser is not registered")
	}
	if _, _, ok := call("web_search", `{"query":"x"}`); ok {
		t.Error("web_search is registered without tools.web_search")
	}
	out, isErr, ok := call("web_fetch", `{"url":"`+page.URL+`"}`)
	if !ok || !isErr || !strings.Contains(out, "outbound policy") {
		t.Errorf("web_fetch of a loopback page without egress.allow: %q (error %v, registered %v), want a refusal", out, isErr, ok)
	}

	call = open(t, fmt.Sprintf("tools: {web_search: {backend: searxng, base_url: %q}}\negress: {allow: [%q]}\n",
		searx.URL, strings.TrimPrefix(page.URL, "http://")))
	if out, isErr, ok := call("web_search", `{"query":"otters"}`); !ok || isErr || !strings.Contains(out, "1. Found otters") {
		t.Errorf("web_search: %q (error %v, registered %v)", out, isErr, ok)
	}
	if out, isErr, _ := call("web_fetch", `{"url":"`+page.URL+`"}`); isErr || !strings.Contains(out, "intranet page") {
		t.Errorf("web_fetch of an allow-listed page: %q (error %v)", out, isErr)
	}
}
