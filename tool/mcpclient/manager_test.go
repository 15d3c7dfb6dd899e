package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentcraftlab/agentcraft/tool"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

// newTestServer is an MCP server with a read-only echo, a destructive
// wipe, a tool that fails, and one that returns an image.
func newTestServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echo text.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	yes := true
	mcp.AddTool(srv, &mcp.Tool{Name: "wipe", Description: "Delete everything.", Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "wiped"}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "fail", Description: "Always fails."},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "quota exceeded"}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "picture", Description: "Returns an image and a caption."},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "a red dot"},
				&mcp.ImageContent{MIMEType: "image/png", Data: []byte{1, 2, 3}},
			}}, nil, nil
		})
	return srv
}

// memDial connects each attempt to srv over in-memory transports; while
// down is set, attempts fail. sessions receives the server sessions.
type memDial struct {
	srv      *mcp.Server
	down     atomic.Bool
	mu       sync.Mutex
	sessions []*mcp.ServerSession
}

func (d *memDial) dial(ctx context.Context, cfg ServerConfig) (mcp.Transport, error) {
	if d.down.Load() {
		return nil, errors.New("connection refused")
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := d.srv.Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.sessions = append(d.sessions, ss)
	d.mu.Unlock()
	return ct, nil
}

func (d *memDial) closeSessions() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, ss := range d.sessions {
		ss.Close()
	}
	d.sessions = nil
}

// logBuffer collects log records for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func startManager(t *testing.T, servers []ServerConfig, dial func(context.Context, ServerConfig) (mcp.Transport, error), logs *logBuffer) *Manager {
	t.Helper()
	opts := &Options{MinBackoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, ConnectTimeout: 5 * time.Second}
	if logs != nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	m, err := New(servers, opts)
	if err != nil {
		t.Fatal(err)
	}
	m.dial = dial
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	return m
}

// eventually polls cond for up to 5s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func resolveOne(t *testing.T, m *Manager, name string) tool.Tool {
	t.Helper()
	tools, err := m.Resolve(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 {
		t.Fatalf("Resolve(%q) = %d tools, want 1", name, len(tools))
	}
	return tools[0]
}

func TestMCPListAndCall(t *testing.T) {
	d := &memDial{srv: newTestServer()}
	m := startManager(t, []ServerConfig{{Name: "test", Command: "unused"}}, d.dial, nil)

	all, err := m.Resolve("mcp:test")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]tool.Capability{}
	for _, tl := range all {
		got[tl.Name()] = tl.Capability()
		if err := tool.ValidateName(tl.Name()); err != nil {
			t.Error(err)
		}
	}
	want := map[string]tool.Capability{"test__echo": tool.CapabilityLow, "test__wipe": tool.CapabilityHigh, "test__fail": tool.CapabilityMedium, "test__picture": tool.CapabilityMedium}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	echo := resolveOne(t, m, "test__echo")
	if !strings.Contains(string(echo.Schema()), `"text"`) || echo.Description() != "Echo text." {
		t.Errorf("echo schema %s, description %q", echo.Schema(), echo.Description())
	}

	tests := []struct {
		tool, args string
		want       tool.Result
	}{
		{"test__echo", `{"text":"hi"}`, tool.Result{Content: "echo: hi"}},
		{"test__fail", ``, tool.Result{Content: "quota exceeded", IsError: true}},
		{"test__picture", `null`, tool.Result{Content: "a red dot\n[image image/png, 3 bytes]"}},
		{"test__echo", `[1]`, tool.Result{Content: "arguments must be a JSON object matching the tool's schema", IsError: true}},
	}
	for _, tc := range tests {
		res, err := resolveOne(t, m, tc.tool).Call(t.Context(), json.RawMessage(tc.args))
		if err != nil {
			t.Fatalf("%s: %v", tc.tool, err)
		}
		if res != tc.want {
			t.Errorf("%s(%s) = %+v, want %+v", tc.tool, tc.args, res, tc.want)
		}
	}
	// A schema violation is the server's to report, as an error result.
	res, err := echo.Call(t.Context(), json.RawMessage(`{"text":5}`))
	if err != nil || !res.IsError {
		t.Errorf("echo with a number = %+v, %v; want an error result", res, err)
	}

	st := m.Status()
	if len(st) != 1 || !st[0].Connected || st[0].Tools != 4 || st[0].Transport != "stdio" {
		t.Errorf("Status = %+v", st)
	}
	if _, err := m.Resolve("test__nope"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Resolve(test__nope) = %v, want ErrUnavailable", err)
	}
	if _, err := m.Resolve("other__echo"); !errors.Is(err, tool.ErrUnknownTool) {
		t.Errorf("Resolve(other__echo) = %v, want ErrUnknownTool", err)
	}
	raw, err := m.CallRaw(t.Context(), "test", "echo", json.RawMessage(`{"text":"x"}`))
	if err != nil || raw.IsError || !strings.Contains(string(raw.JSON), `"echo: x"`) {
		t.Errorf("CallRaw = %s, %v, %v", raw.JSON, raw.IsError, err)
	}
}

func TestMCPToolName(t *testing.T) {
	long := strings.Repeat("x", 70)
	tests := []struct {
		server, tool, want string
	}{
		{"github", "create_issue", "github__create_issue"},
		{"fs", "read.file/v2", "fs__read_file_v2"},
		{"s", "ünï", "s___n_"},
	}
	for _, tc := range tests {
		if got := ToolName(tc.server, tc.tool); got != tc.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tc.server, tc.tool, got, tc.want)
		}
	}
	a, b := ToolName("srv", long+"a"), ToolName("srv", long+"b")
	if len(a) != 64 || len(b) != 64 || a == b {
		t.Errorf("long names %q and %q: want two distinct 64-character names", a, b)
	}
	if err := tool.ValidateName(a); err != nil {
		t.Error(err)
	}
	if ToolName("srv", long+"a") != a {
		t.Error("ToolName is not deterministic")
	}
}

func TestMCPMapNamesCollisions(t *testing.T) {
	long := strings.Repeat("y", 80)
	for _, tools := range [][]string{
		{"a.b", "a_b", "a b", long + "1", long + "2"},
		{"a_b", "a b", "a.b", long + "2", long + "1"},
	} {
		names, reverse := mapNames("srv", tools)
		seen := map[string]bool{}
		for i, n := range names {
			if seen[n] {
				t.Errorf("%v: name %q given twice", tools, n)
			}
			seen[n] = true
			if err := tool.ValidateName(n); err != nil {
				t.Error(err)
			}
			if reverse[n] != tools[i] {
				t.Errorf("reverse[%q] = %q, want %q", n, reverse[n], tools[i])
			}
			if tools[i] == "a_b" && n != "srv__a_b" {
				t.Errorf("a_b mapped to %q: a name that needs no change must keep it", n)
			}
		}
	}
}

func TestMCPServerToolsAreMappedReversibly(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	long := strings.Repeat("z", 70)
	for _, name := range []string{"a.b", "a_b", long + "1", long + "2"} {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "called " + req.Params.Name}}}, nil
		})
	}
	d := &memDial{srv: srv}
	m := startManager(t, []ServerConfig{{Name: "s", Command: "unused"}}, d.dial, nil)
	infos := m.List()
	if len(infos) != 4 {
		t.Fatalf("List = %d tools, want 4", len(infos))
	}
	for _, info := range infos {
		res, err := info.Tool.Call(t.Context(), nil)
		if err != nil || res.Content != "called "+info.MCPName {
			t.Errorf("%s: Call = %+v, %v; want the call to reach %q", info.Tool.Name(), res, err, info.MCPName)
		}
	}
}

func TestMCPListChanged(t *testing.T) {
	srv := newTestServer()
	d := &memDial{srv: srv}
	m := startManager(t, []ServerConfig{{Name: "test", Command: "unused"}}, d.dial, nil)
	gen := m.Generation()
	mcp.AddTool(srv, &mcp.Tool{Name: "added", Description: "New."},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "new"}}}, nil, nil
		})
	eventually(t, "test__added is listed", func() bool {
		_, err := m.Resolve("test__added")
		return err == nil
	})
	if m.Generation() == gen {
		t.Error("Generation did not change after list_changed")
	}
	srv.RemoveTools("wipe")
	eventually(t, "test__wipe is gone", func() bool {
		_, err := m.Resolve("test__wipe")
		return errors.Is(err, ErrUnavailable)
	})
}

func TestMCPServerDownSkippedThenReconnects(t *testing.T) {
	d := &memDial{srv: newTestServer()}
	d.down.Store(true)
	up := &memDial{srv: newTestServer()}
	logs := &logBuffer{}
	m := startManager(t, []ServerConfig{{Name: "down", Command: "unused"}, {Name: "up", Command: "unused"}},
		func(ctx context.Context, cfg ServerConfig) (mcp.Transport, error) {
			if cfg.Name == "up" {
				return up.dial(ctx, cfg)
			}
			return d.dial(ctx, cfg)
		}, logs)

	st := m.Status()
	if st[0].Connected || !strings.Contains(st[0].Error, "connection refused") || !st[1].Connected {
		t.Fatalf("Status = %+v: want down skipped with its error, up connected", st)
	}
	if !strings.Contains(logs.String(), "mcp_server_unavailable") || !strings.Contains(logs.String(), "server=down") {
		t.Errorf("no warning logged for the server that is down: %s", logs)
	}
	if _, err := m.Resolve("mcp:down"); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("Resolve(mcp:down) = %v, want ErrUnavailable naming the cause", err)
	}
	if _, err := m.Resolve("up__echo"); err != nil {
		t.Errorf("the other server's tools: %v", err)
	}

	d.down.Store(false)
	eventually(t, "the server reconnects", func() bool { return m.Status()[0].Connected })
	echo := resolveOne(t, m, "down__echo")
	if res, _ := echo.Call(t.Context(), json.RawMessage(`{"text":"back"}`)); res.Content != "echo: back" {
		t.Errorf("after reconnect: %+v", res)
	}

	// The server goes away mid-session: the tool the agent holds answers
	// with an error result, and the manager reconnects when it can.
	d.down.Store(true)
	d.closeSessions()
	eventually(t, "the session loss is noticed", func() bool { return !m.Status()[0].Connected })
	res, err := echo.Call(t.Context(), json.RawMessage(`{"text":"x"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "unavailable") {
		t.Errorf("call while down = %+v, %v; want an error result saying the tool is unavailable", res, err)
	}
	d.down.Store(false)
	eventually(t, "the server reconnects again", func() bool { return m.Status()[0].Connected })
	if res, _ := echo.Call(t.Context(), json.RawMessage(`{"text":"again"}`)); res.Content != "echo: again" {
		t.Errorf("the held tool after reconnect: %+v", res)
	}
}

func TestMCPValidate(t *testing.T) {
	tests := []struct {
		cfg  ServerConfig
		want string
	}{
		{ServerConfig{Name: "a", Command: "x"}, ""},
		{ServerConfig{Name: "a-b_c", URL: "https://x/mcp", Bearer: "t"}, ""},
		{ServerConfig{Name: "", Command: "x"}, "1 to 32"},
		{ServerConfig{Name: "a__b", Command: "x"}, "single '_'"},
		{ServerConfig{Name: "a.b", Command: "x"}, "letters"},
		{ServerConfig{Name: "a"}, "set command"},
		{ServerConfig{Name: "a", Command: "x", URL: "http://x"}, "not both"},
		{ServerConfig{Name: "a", URL: "ftp://x"}, "http://"},
		{ServerConfig{Name: "a", Command: "x", Bearer: "t"}, "url servers only"},
		{ServerConfig{Name: "a", URL: "http://x", Bearer: "t", OAuth: &OAuth{ClientID: "i", ClientSecret: "s"}}, "bearer or oauth"},
		{ServerConfig{Name: "a", URL: "http://x", OAuth: &OAuth{ClientID: "i"}}, "client_secret"},
	}
	for _, tc := range tests {
		err := ValidateServer(tc.cfg)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("ValidateServer(%+v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
	if _, err := New([]ServerConfig{{Name: "a", Command: "x"}, {Name: "a", Command: "y"}}, nil); err == nil || !strings.Contains(err.Error(), "used twice") {
		t.Errorf("duplicate names: %v", err)
	}
}

func TestMCPNilManager(t *testing.T) {
	var m *Manager
	if m.Owns("a__b") || m.List() != nil || m.Status() != nil || m.Generation() != 0 {
		t.Error("a nil Manager must have no tools")
	}
	if _, err := m.Resolve("a__b"); !errors.Is(err, tool.ErrUnknownTool) {
		t.Errorf("Resolve on nil = %v", err)
	}
	m.Stop()
}

// httpMCP serves newTestServer over streamable HTTP at /mcp behind an
// optional auth check.
func httpMCP(t *testing.T, mux *http.ServeMux, check func(r *http.Request) bool, challenge string) {
	t.Helper()
	srv := newTestServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if check != nil && !check(r) {
			if challenge != "" {
				w.Header().Set("WWW-Authenticate", challenge)
			}
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func TestMCPHTTPBearer(t *testing.T) {
	mux := http.NewServeMux()
	httpMCP(t, mux, func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer s3cret" }, "")
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)

	m := startManager(t, []ServerConfig{
		{Name: "good", URL: ts.URL + "/mcp", Bearer: "s3cret"},
		{Name: "bad", URL: ts.URL + "/mcp", Bearer: "wrong"},
	}, nil, nil)
	st := m.Status()
	if !st[0].Connected || st[0].Transport != "http" {
		t.Errorf("good token: %+v", st[0])
	}
	if st[1].Connected || !strings.Contains(st[1].Error, "nauthorized") {
		t.Errorf("wrong token: %+v, want not connected with an unauthorized error", st[1])
	}
	res, err := resolveOne(t, m, "good__echo").Call(t.Context(), json.RawMessage(`{"text":"over http"}`))
	if err != nil || res.Content != "echo: over http" {
		t.Errorf("call = %+v, %v", res, err)
	}
}

// authServer is a fake OAuth authorization server and protected MCP
// server with RFC 9728 and RFC 8414 metadata.
type authServer struct {
	mcpURL     string
	tokenHits  atomic.Int64
	expiresIn  int
	tokenDown  atomic.Bool
	wellKnown  bool // serve PRM at the well-known URL; else only via WWW-Authenticate
	lastScopes atomic.Value
}

func newAuthServer(t *testing.T, wellKnown bool, expiresIn int) *authServer {
	t.Helper()
	a := &authServer{wellKnown: wellKnown, expiresIn: expiresIn}
	as := http.NewServeMux()
	asSrv := httptest.NewServer(as)
	t.Cleanup(asSrv.Close)
	as.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": asSrv.URL, "token_endpoint": asSrv.URL + "/oauth/token"})
	})
	as.HandleFunc("POST /oauth/token", func(w http.ResponseWriter, r *http.Request) {
		if a.tokenDown.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = r.FormValue("client_id"), r.FormValue("client_secret")
		}
		if r.FormValue("grant_type") != "client_credentials" || id != "agentcraft" || secret != "shh" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"invalid_client"}`))
			return
		}
		a.lastScopes.Store(r.FormValue("scope"))
		n := a.tokenHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("tok-%d", n), "token_type": "Bearer", "expires_in": a.expiresIn})
	})

	mux := http.NewServeMux()
	rs := httptest.NewServer(mux)
	t.Cleanup(rs.Close)
	a.mcpURL = rs.URL + "/mcp"
	prmPath := "/custom/prm"
	if wellKnown {
		prmPath = "/.well-known/oauth-protected-resource"
	}
	mux.HandleFunc("GET "+prmPath, func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"resource": a.mcpURL, "authorization_servers": []string{asSrv.URL}})
	})
	httpMCP(t, mux, func(r *http.Request) bool { return strings.HasPrefix(r.Header.Get("Authorization"), "Bearer tok-") },
		`Bearer resource_metadata="`+rs.URL+prmPath+`"`)
	return a
}

func TestMCPOAuthClientCredentials(t *testing.T) {
	for _, tc := range []struct {
		name      string
		wellKnown bool
	}{{"well-known metadata", true}, {"WWW-Authenticate resource_metadata", false}} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAuthServer(t, tc.wellKnown, 3600)
			m := startManager(t, []ServerConfig{{Name: "secure", URL: a.mcpURL,
				OAuth: &OAuth{ClientID: "agentcraft", ClientSecret: "shh", Scopes: []string{"tools.read", "tools.call"}}}}, nil, nil)
			if st := m.Status()[0]; !st.Connected {
				t.Fatalf("not connected: %s", st.Error)
			}
			echo := resolveOne(t, m, "secure__echo")
			for i := range 3 {
				res, err := echo.Call(t.Context(), json.RawMessage(fmt.Sprintf(`{"text":"%d"}`, i)))
				if err != nil || res.IsError {
					t.Fatalf("call %d = %+v, %v", i, res, err)
				}
			}
			if n := a.tokenHits.Load(); n != 1 {
				t.Errorf("token endpoint hit %d times, want 1: the token must be cached until it expires", n)
			}
			if s := a.lastScopes.Load(); s != "tools.read tools.call" {
				t.Errorf("scope = %v", s)
			}
		})
	}
}

func TestMCPOAuthTokenRefreshedWhenExpired(t *testing.T) {
	// x/oauth2 treats a token as expired 10s before expires_in, so a
	// 1-second token is fetched anew for every request.
	a := newAuthServer(t, true, 1)
	m := startManager(t, []ServerConfig{{Name: "secure", URL: a.mcpURL,
		OAuth: &OAuth{ClientID: "agentcraft", ClientSecret: "shh"}}}, nil, nil)
	before := a.tokenHits.Load()
	if _, err := resolveOne(t, m, "secure__echo").Call(t.Context(), json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if a.tokenHits.Load() <= before {
		t.Errorf("token endpoint hits %d → %d: an expired token must be replaced", before, a.tokenHits.Load())
	}
}

func TestMCPOAuthTokenEndpointDown(t *testing.T) {
	a := newAuthServer(t, true, 3600)
	a.tokenDown.Store(true)
	logs := &logBuffer{}
	m, err := New([]ServerConfig{
		{Name: "secure", URL: a.mcpURL, OAuth: &OAuth{ClientID: "agentcraft", ClientSecret: "shh"}},
	}, &Options{Logger: slog.New(slog.NewTextHandler(logs, nil)), MinBackoff: 20 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	st := m.Status()[0]
	if st.Connected || !strings.Contains(st.Error, "fetch OAuth token") {
		t.Fatalf("Status = %+v, want skipped because the token cannot be fetched", st)
	}
	if !strings.Contains(logs.String(), "mcp_server_unavailable") {
		t.Errorf("no warning logged: %s", logs)
	}
	a.tokenDown.Store(false)
	eventually(t, "the server connects once tokens can be fetched", func() bool { return m.Status()[0].Connected })
}

func TestMCPDiscoveryFailureNamesTheFix(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(ts.Close)
	m := startManager(t, []ServerConfig{{Name: "s", URL: ts.URL + "/mcp", OAuth: &OAuth{ClientID: "i", ClientSecret: "s"}}}, nil, nil)
	if st := m.Status()[0]; st.Connected || !strings.Contains(st.Error, "token_url") {
		t.Errorf("Status = %+v, want an error suggesting token_url", st)
	}
}
