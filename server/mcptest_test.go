package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentcraftlab/agentcraft/server/servertest"
)

// mcpTestResult is the answer of POST /api/mcp/servers/{name}/test.
type mcpTestResult struct {
	Name      string `json:"name"`
	Source    string `json:"source"`
	Connected bool   `json:"connected"`
	Error     string `json:"error"`
	Tools     []struct {
		Name        string `json:"name"`
		MCPName     string `json:"mcp_name"`
		Description string `json:"description"`
	} `json:"tools"`
}

// TestMCPServerTest: testing a stored server connects afresh with its
// sealed bearer and lists its tools; a server that stopped answering
// gives connected false and why, not a 5xx; an unknown name is a 404, as
// is another workspace's server.
func TestMCPServerTest(t *testing.T) {
	t.Parallel()
	url := servertest.EchoMCP(t, "s3cret-token")
	target, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	// A front that can be switched off, to test a server that went away.
	// Made before the server, so that the server (and its standing MCP
	// connection through the front) stops first.
	var down atomic.Bool
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }, FlushInterval: -1}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "gone", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	env, _, c := newEnv(t)
	ctx := context.Background()
	c.json("POST", "/api/mcp/servers", `{"name":"echo","url":"`+front.URL+`","bearer":"s3cret-token"}`, http.StatusCreated, nil)

	var res mcpTestResult
	c.json("POST", "/api/mcp/servers/echo/test", "", http.StatusOK, &res)
	if !res.Connected || res.Source != "api" || len(res.Tools) != 1 || res.Tools[0].Name != "echo__echo" || res.Tools[0].MCPName != "echo" || res.Tools[0].Description != "Echo the text." {
		t.Errorf("test of a working server = %+v; want connected, the one tool echo__echo with its description", res)
	}

	down.Store(true)
	res = mcpTestResult{}
	c.json("POST", "/api/mcp/servers/echo/test", "", http.StatusOK, &res)
	if res.Connected || res.Error == "" || len(res.Tools) != 0 {
		t.Errorf("test of a server answering 503 = %+v; want not connected, with the reason and no tools", res)
	}
	if strings.Contains(res.Error, "s3cret-token") {
		t.Errorf("the test's error %q reveals the bearer token", res.Error)
	}

	if resp, body := c.do("POST", "/api/mcp/servers/nope/test", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("test of an unknown server = %d %s; want 404", resp.StatusCode, body)
	}
	wsB, err := env.Store.Workspaces().GetOrCreate(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	cb := client{t: t, base: env.URL, key: servertest.CreateKey(t, env.Store, wsB.ID)}
	if resp, body := cb.do("POST", "/api/mcp/servers/echo/test", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("workspace b testing a's server = %d %s; want 404", resp.StatusCode, body)
	}
}

// TestMCPServerErrorsNameTheirField: a refused server names the field it
// is about as error.param, for the studio's add form.
func TestMCPServerErrorsNameTheirField(t *testing.T) {
	t.Parallel()
	url := servertest.EchoMCP(t, "tok")
	_, _, c := newEnv(t)
	c.json("POST", "/api/mcp/servers", `{"name":"echo","url":"`+url+`","bearer":"tok"}`, http.StatusCreated, nil)
	for _, tc := range []struct{ name, body, param, says string }{
		{"bad name", `{"name":"a__b","url":"` + url + `"}`, "name", "server name"},
		{"bad url", `{"name":"x","url":"ftp://x"}`, "url", "http://"},
		{"no url", `{"name":"x"}`, "url", "url is required"},
		{"name taken", `{"name":"echo","url":"` + url + `"}`, "name", "echo"},
	} {
		resp, body := c.do("POST", "/api/mcp/servers", tc.body)
		if resp.StatusCode/100 != 4 || !strings.Contains(string(body), `"param":"`+tc.param+`"`) || !strings.Contains(string(body), tc.says) {
			t.Errorf("%s: POST /api/mcp/servers = %d %s; want 4xx with param %s saying %q", tc.name, resp.StatusCode, body, tc.param, tc.says)
		}
	}
}
