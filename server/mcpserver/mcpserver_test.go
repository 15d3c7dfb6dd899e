package mcpserver_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server"
	"github.com/agentcraftlab/agentcraft/server/mcpserver"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/workflowtest"
)

// mcpEnv is a server with /mcp, knowledge bases, an agent "helper" on a
// fake LLM and workflows whose agents answer scripted turns.
type mcpEnv struct {
	*servertest.Env
	url  string
	fake *llmtest.Server
	c    servertest.Client
}

func newMCPEnv(t *testing.T, mo mcpserver.Options, wfTurns ...llmtest.Turn) mcpEnv {
	t.Helper()
	return newMCPEnvWith(t, servertest.Options{Agents: []platform.AgentSpec{{Name: "helper", Model: "fake/m", Instructions: "Help.", MaxSteps: 3}}}, mo, wfTurns...)
}

// newMCPEnvWith is newMCPEnv with so's agents and options (Knowledge is
// always on, Providers the fake). /mcp runs agents through the server's
// runner and maps outside subjects to users through its store, as
// `agentcraft serve` does.
func newMCPEnvWith(t *testing.T, so servertest.Options, mo mcpserver.Options, wfTurns ...llmtest.Turn) mcpEnv {
	t.Helper()
	fake := llmtest.NewOpenAI(t)
	so.Providers, so.Knowledge = []platform.ProviderConfig{servertest.FakeProvider(fake)}, true
	env := servertest.New(t, &so)
	res := workflowtest.NewResolver(t, wfTurns...)
	runs := controlplane.New(env.Store, workflowtest.Engine(t, workflow.Services{Agents: res}), controlplane.Options{})
	if mo.Auth != mcpserver.AuthNone && mo.TokenKey == nil {
		key, err := mcpserver.DeriveTokenKey([]byte("0123456789abcdef0123456789abcdef"))
		if err != nil {
			t.Fatal(err)
		}
		mo.TokenKey = key
	}
	mo.Runs, mo.Knowledge, mo.OAuthClients, mo.Runner, mo.Users = runs, env.Knowledge, env.Store.OAuthClients(), env.Runner, env.Store
	m, err := mcpserver.New(env.Platform, &mo)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(env.Platform, &server.Options{Runs: runs, Knowledge: env.Knowledge,
		EnqueueIngest: func(context.Context, string, string) error { return nil }, Mounts: m.Mounts()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		runs.Wait()
		srv.Stop()
	})
	return mcpEnv{Env: env, url: hs.URL, fake: fake, c: servertest.Client{T: t, Base: hs.URL, Key: env.Key}}
}

// newClient stores an OAuth client of the default workspace.
func (e mcpEnv) newClient(t *testing.T, scopes ...string) (id, secret string) {
	t.Helper()
	secret, hash := mcpserver.NewClientSecret()
	c, err := e.Store.OAuthClients().Create(t.Context(), store.OAuthClient{WorkspaceID: e.Workspace.ID, Name: "t", SecretHash: hash, Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	return c.ID, secret
}

// postToken posts form to /oauth/token, with HTTP Basic when id is set.
func (e mcpEnv) postToken(t *testing.T, id, secret string, form url.Values) (int, http.Header, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", e.url+"/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if id != "" {
		req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("token answer is not JSON: %v", err)
	}
	return resp.StatusCode, resp.Header, body
}

func (e mcpEnv) token(t *testing.T, scopes ...string) string {
	t.Helper()
	id, secret := e.newClient(t, scopes...)
	status, _, body := e.postToken(t, id, secret, url.Values{"grant_type": {"client_credentials"}})
	tok, _ := body["access_token"].(string)
	if status != http.StatusOK || tok == "" {
		t.Fatalf("token = %d %v", status, body)
	}
	return tok
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (e mcpEnv) session(t *testing.T, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	s, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: e.url + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport{token}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func toolNames(t *testing.T, s *mcp.ClientSession) []string {
	t.Helper()
	res, err := s.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func callText(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func TestMCPToolsOverOAuth(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t, mcpserver.Options{}, llmtest.Turn{Text: "A memo."})
	var wf store.Workflow
	e.c.JSON("POST", "/api/workflows", simpleFlow, http.StatusCreated, &wf)

	s := e.session(t, e.token(t, "docsearch/read", "docsearch/search", "agents/*", "workflows/memo"))
	if got, want := toolNames(t, s), []string{"agent_helper", "docsearch", "workflow_memo"}; !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
	e.fake.Push(llmtest.Turn{Text: "Hello from helper."})
	if text, isErr := callText(t, s, "agent_helper", map[string]any{"message": "hi"}); isErr || text != "Hello from helper." {
		t.Errorf("agent_helper = %q (error %v)", text, isErr)
	}
	if text, isErr := callText(t, s, "workflow_memo", map[string]any{"input": "budget"}); isErr || text != "A memo." {
		t.Errorf("workflow_memo = %q (error %v)", text, isErr)
	}
	if text, isErr := callText(t, s, "docsearch", map[string]any{"query": "pump"}); isErr || !strings.Contains(text, "no knowledge bases") {
		t.Errorf("docsearch with no bases = %q (error %v)", text, isErr)
	}
	if text, isErr := callText(t, s, "docsearch", map[string]any{"query": "pump", "knowledge_base": "nope"}); !isErr || !strings.Contains(text, `"nope" does not exist`) {
		t.Errorf("docsearch of an unknown base = %q (error %v), want a tool error naming it", text, isErr)
	}

	// A new agent appears on the next listing.
	if _, err := e.Platform.CreateAgent(t.Context(), store.Agent{WorkspaceID: e.Workspace.ID, Name: "late", Model: "fake/m"}); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, s); !slices.Contains(got, "agent_late") {
		t.Errorf("tools after creating agent late = %v", got)
	}

	// Scopes narrow the list.
	narrow := e.session(t, e.token(t, "docsearch/read", "agents/helper"))
	if got, want := toolNames(t, narrow), []string{"agent_helper", "docsearch"}; !slices.Equal(got, want) {
		t.Errorf("tools of a narrow token = %v, want %v", got, want)
	}
}

func TestMCPDocsearchFindsPassages(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t, mcpserver.Options{})
	kb, err := e.Knowledge.Create(t.Context(), e.Workspace.ID, "manuals", "")
	if err != nil {
		t.Fatal(err)
	}
	doc := []byte("# Orca pump\n\nThe Orca pump moves 300 litres per minute.")
	up, err := e.Store.Uploads().Put(t.Context(), store.Upload{WorkspaceID: e.Workspace.ID, Name: "pump.md", ContentType: "text/markdown",
		Data: doc, Size: int64(len(doc)), ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	job, err := e.Store.IngestJobs().Create(t.Context(), store.IngestJob{WorkspaceID: e.Workspace.ID, KnowledgeBaseID: kb.ID,
		Files: []store.IngestFile{{UploadID: up.ID, Name: up.Name}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Knowledge.RunJob(t.Context(), e.Workspace.ID, job.ID, nil); err != nil {
		t.Fatal(err)
	}
	s := e.session(t, e.token(t, "docsearch/search"))
	text, isErr := callText(t, s, "docsearch", map[string]any{"query": "Orca litres", "top_k": 3})
	if isErr || !strings.Contains(text, "300 litres per minute") {
		t.Errorf("docsearch = %q (error %v), want the pump passage", text, isErr)
	}
}

func TestOAuthTokenEndpoint(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t, mcpserver.Options{})
	id, secret := e.newClient(t, "docsearch/read", "docsearch/search")
	revokedID, revokedSecret := e.newClient(t, "docsearch/read")
	if err := e.Store.OAuthClients().Revoke(t.Context(), e.Workspace.ID, revokedID); err != nil {
		t.Fatal(err)
	}
	cc := url.Values{"grant_type": {"client_credentials"}}
	with := func(kv ...string) url.Values {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		return v
	}
	for _, tc := range []struct {
		name       string
		id, secret string
		form       url.Values
		status     int
		errCode    string
	}{
		{"basic", id, secret, cc, 200, ""},
		{"post", "", "", with("grant_type", "client_credentials", "client_id", id, "client_secret", secret), 200, ""},
		{"narrowed scope", id, secret, with("grant_type", "client_credentials", "scope", "docsearch/read"), 200, ""},
		{"no grant type", id, secret, url.Values{}, 400, "invalid_request"},
		{"password grant", id, secret, with("grant_type", "password"), 400, "unsupported_grant_type"},
		{"repeated parameter", id, secret, with("grant_type", "client_credentials", "grant_type", "client_credentials"), 400, "invalid_request"},
		{"two auth methods", id, secret, with("grant_type", "client_credentials", "client_secret", secret), 400, "invalid_request"},
		{"scope beyond the client's", id, secret, with("grant_type", "client_credentials", "scope", "docsearch/read agents/*"), 400, "invalid_scope"},
		{"empty scope", id, secret, with("grant_type", "client_credentials", "scope", " "), 400, "invalid_scope"},
		{"no credentials", "", "", cc, 401, "invalid_client"},
		{"wrong secret", id, "acs_wrong", cc, 401, "invalid_client"},
		{"unknown client", "nobody", secret, cc, 401, "invalid_client"},
		{"revoked client", revokedID, revokedSecret, cc, 401, "invalid_client"},
	} {
		status, h, body := e.postToken(t, tc.id, tc.secret, tc.form)
		if status != tc.status || (tc.errCode != "" && body["error"] != tc.errCode) {
			t.Errorf("%s: %d %v, want %d %s", tc.name, status, body, tc.status, tc.errCode)
			continue
		}
		if h.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: Cache-Control %q, want no-store", tc.name, h.Get("Cache-Control"))
		}
		if tc.status == 401 && tc.id != "" && h.Get("WWW-Authenticate") != `Basic realm="agentcraft"` {
			t.Errorf("%s: WWW-Authenticate %q, want the Basic challenge", tc.name, h.Get("WWW-Authenticate"))
		}
		if tc.status != 200 {
			continue
		}
		if body["token_type"] != "Bearer" || body["expires_in"] != float64(3600) {
			t.Errorf("%s: answer %v", tc.name, body)
		}
		// The token carries the documented claims.
		tok, err := jwt.ParseSigned(body["access_token"].(string), []jose.SignatureAlgorithm{jose.EdDSA})
		if err != nil {
			t.Fatalf("%s: token does not parse: %v", tc.name, err)
		}
		var jwks jose.JSONWebKeySet
		e.c.JSON("GET", "/.well-known/jwks.json", "", 200, &jwks)
		if len(jwks.Keys) != 1 || tok.Headers[0].KeyID != jwks.Keys[0].KeyID {
			t.Fatalf("JWKS %+v does not hold the token's key %q", jwks.Keys, tok.Headers[0].KeyID)
		}
		var claims struct {
			jwt.Claims
			Workspace string `json:"workspace"`
			Scope     string `json:"scope"`
		}
		if err := tok.Claims(jwks.Keys[0].Key, &claims); err != nil {
			t.Fatalf("%s: token does not verify against the JWKS: %v", tc.name, err)
		}
		wantScope := "docsearch/read docsearch/search"
		if tc.name == "narrowed scope" {
			wantScope = "docsearch/read"
		}
		if claims.Issuer != e.url || !slices.Equal(claims.Audience, jwt.Audience{e.url + "/mcp"}) || claims.Subject != id ||
			claims.Workspace != e.Workspace.ID || claims.Scope != wantScope || claims.ID == "" ||
			claims.Expiry.Time().Sub(claims.IssuedAt.Time()) != time.Hour {
			t.Errorf("%s: claims %+v", tc.name, claims)
		}
	}

	var meta map[string]any
	e.c.JSON("GET", "/.well-known/oauth-authorization-server", "", 200, &meta)
	if meta["issuer"] != e.url || meta["token_endpoint"] != e.url+"/oauth/token" || meta["jwks_uri"] != e.url+"/.well-known/jwks.json" {
		t.Errorf("authorization server metadata = %v", meta)
	}
}

// mcpPost sends one JSON-RPC message to /mcp.
func mcpPost(t *testing.T, base, token, body string, header map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

const listTools = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`

func callTool(name string) string {
	return `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + name + `","arguments":{"query":"x"}}}`
}

func TestMCP401And403Headers(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t, mcpserver.Options{})
	meta := e.url + "/.well-known/oauth-protected-resource"

	resp := mcpPost(t, e.url, "", listTools, nil)
	want := `Bearer resource_metadata="` + meta + `", scope="docsearch/read docsearch/search agents/* workflows/*", error="invalid_token", error_description="no bearer token: get one from POST /oauth/token (client_credentials) and send Authorization: Bearer <token>"`
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != want {
		t.Errorf("no token: %d\n%s\nwant 401\n%s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
	}
	resp = mcpPost(t, e.url, "not-a-jwt", listTools, nil)
	if h := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || !strings.HasPrefix(h, `Bearer resource_metadata="`+meta+`"`) || !strings.Contains(h, `error="invalid_token"`) {
		t.Errorf("garbage token: %d %s", resp.StatusCode, h)
	}

	tok := e.token(t, "docsearch/read")
	resp = mcpPost(t, e.url, tok, callTool("docsearch"), nil)
	want = `Bearer error="insufficient_scope", scope="docsearch/search", resource_metadata="` + meta + `"`
	if resp.StatusCode != 403 || resp.Header.Get("WWW-Authenticate") != want {
		t.Errorf("call without scope: %d %s, want 403 %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
	}
	resp = mcpPost(t, e.url, tok, "["+callTool("agent_helper")+"]", nil)
	if resp.StatusCode != 403 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `scope="agents/helper"`) {
		t.Errorf("batched agent call without scope: %d %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	if resp := mcpPost(t, e.url, tok, listTools, nil); resp.StatusCode != 200 {
		t.Errorf("tools/list with docsearch/read = %d, want 200", resp.StatusCode)
	}

	// A revoked client's tokens stop working (here at once: nothing cached).
	id, secret := e.newClient(t, "docsearch/read")
	_, _, body := e.postToken(t, id, secret, url.Values{"grant_type": {"client_credentials"}})
	if err := e.Store.OAuthClients().Revoke(t.Context(), e.Workspace.ID, id); err != nil {
		t.Fatal(err)
	}
	if resp := mcpPost(t, e.url, body["access_token"].(string), listTools, nil); resp.StatusCode != 401 {
		t.Errorf("token of a revoked client = %d, want 401", resp.StatusCode)
	}

	var prm map[string]any
	e.c.JSON("GET", "/.well-known/oauth-protected-resource", "", 200, &prm)
	if prm["resource"] != e.url+"/mcp" || !slices.Equal(toStrings(prm["authorization_servers"]), []string{e.url}) ||
		!slices.Equal(toStrings(prm["bearer_methods_supported"]), []string{"header"}) || len(toStrings(prm["scopes_supported"])) != 4 {
		t.Errorf("protected resource metadata = %v", prm)
	}
}

// simpleFlow is a workflow "memo" with one agent node.
const simpleFlow = `{"name":"memo","description":"writes a memo","nodes":[{"id":"start","type":"start"},
{"id":"draft","type":"agent","config":{"model":"m","prompt":"Draft: {{input}}"}},
{"id":"end","type":"end"}],
"edges":[{"id":"e1","source":"start","target":"draft"},{"id":"e2","source":"draft","target":"end"}]}`

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestMCPOriginAndHost(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t, mcpserver.Options{AllowedOrigins: []string{"https://app.example.com"}})
	tok := e.token(t, "docsearch/read")
	hostport := strings.TrimPrefix(e.url, "http://")
	for _, tc := range []struct {
		name   string
		header map[string]string
		status int
	}{
		{"no origin", nil, 200},
		{"own origin", map[string]string{"Origin": e.url}, 200},
		{"allowed origin", map[string]string{"Origin": "https://app.example.com"}, 200},
		{"foreign origin", map[string]string{"Origin": "https://evil.example"}, 403},
		{"localhost host", map[string]string{"Host": "localhost:" + strings.Split(hostport, ":")[1]}, 200},
		{"rebound host", map[string]string{"Host": "evil.example:80"}, 403},
		{"rebound host with its own origin", map[string]string{"Host": "evil.example", "Origin": "http://evil.example"}, 403},
	} {
		tokFor := tok
		if h := tc.header["Host"]; h != "" && tc.status == 200 {
			// The token's audience is the URL it was issued for.
			tokFor = ""
		}
		resp := mcpPost(t, e.url, tokFor, listTools, tc.header)
		got := resp.StatusCode
		if tokFor == "" && got == 401 {
			got = 200 // passed the origin checks, stopped at the token
		}
		if got != tc.status || (tc.status == 403 && resp.Header.Get("Content-Type") != "application/json") {
			t.Errorf("%s: %d %s, want %d", tc.name, resp.StatusCode, resp.Header.Get("Content-Type"), tc.status)
		}
	}
}

// outsideIssuer is an outside authorization server: its key set, served
// at jwksURL, holds the public half of key (id "k1").
type outsideIssuer struct {
	jwksURL string
	key     *ecdsa.PrivateKey
}

func newOutsideIssuer(t *testing.T) outsideIssuer {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &priv.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	}))
	t.Cleanup(jwks.Close)
	return outsideIssuer{jwksURL: jwks.URL, key: priv}
}

// signES256 signs claims and scope with key, naming key id kid.
func signES256(t *testing.T, key *ecdsa.PrivateKey, kid string, c jwt.Claims, scope string) string {
	t.Helper()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jwt.Signed(sig).Claims(c).Claims(map[string]any{"scope": scope}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMCPExternalJWKS(t *testing.T) {
	t.Parallel()
	idp := newOutsideIssuer(t)
	priv := idp.key
	const iss, aud = "https://idp.example.com", "https://agents.example.com/mcp"
	e := newMCPEnv(t, mcpserver.Options{JWKSURL: idp.jwksURL, Issuer: iss, Audience: aud})
	sign := func(key *ecdsa.PrivateKey, kid string, c jwt.Claims, scope string) string {
		return signES256(t, key, kid, c, scope)
	}
	now := time.Now()
	good := jwt.Claims{Issuer: iss, Audience: jwt.Audience{aud}, Subject: "svc", Expiry: jwt.NewNumericDate(now.Add(time.Hour)), IssuedAt: jwt.NewNumericDate(now)}
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)

	s := e.session(t, sign(priv, "k1", good, "agents/helper"))
	if got := toolNames(t, s); !slices.Equal(got, []string{"agent_helper"}) {
		t.Errorf("tools of an outside token = %v", got)
	}
	for _, tc := range []struct {
		name  string
		token string
	}{
		{"wrong issuer", sign(priv, "k1", func() jwt.Claims { c := good; c.Issuer = "https://other.example"; return c }(), "agents/*")},
		{"wrong audience", sign(priv, "k1", func() jwt.Claims { c := good; c.Audience = jwt.Audience{"https://x/mcp"}; return c }(), "agents/*")},
		{"expired", sign(priv, "k1", func() jwt.Claims { c := good; c.Expiry = jwt.NewNumericDate(now.Add(-time.Hour)); return c }(), "agents/*")},
		{"no expiry", sign(priv, "k1", func() jwt.Claims { c := good; c.Expiry = nil; return c }(), "agents/*")},
		{"foreign key", sign(other, "k1", good, "agents/*")},
	} {
		resp := mcpPost(t, e.url, tc.token, listTools, nil)
		if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("%s: %d %s, want 401 invalid_token", tc.name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	var prm map[string]any
	e.c.JSON("GET", "/.well-known/oauth-protected-resource", "", 200, &prm)
	if !slices.Contains(toStrings(prm["authorization_servers"]), iss) {
		t.Errorf("authorization_servers %v lack the outside issuer", prm["authorization_servers"])
	}
}

func TestMCPAuthNone(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t, mcpserver.Options{Auth: mcpserver.AuthNone})
	s := e.session(t, "")
	if got, want := toolNames(t, s), []string{"agent_helper", "docsearch"}; !slices.Equal(got, want) {
		t.Errorf("tools with auth none = %v, want %v", got, want)
	}
	e.fake.Push(llmtest.Turn{Text: "Open answer."})
	if text, isErr := callText(t, s, "agent_helper", map[string]any{"message": "hi"}); isErr || text != "Open answer." {
		t.Errorf("agent_helper = %q (error %v)", text, isErr)
	}
	if resp, err := http.Post(e.url+"/oauth/token", "application/x-www-form-urlencoded", strings.NewReader("grant_type=client_credentials")); err != nil || resp.StatusCode != 404 {
		t.Errorf("POST /oauth/token with auth none = %v %v, want 404 (no tokens are issued)", resp.StatusCode, err)
	}
}

func TestMCPStdio(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t, mcpserver.Options{})
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- mcpserver.ServeStdio(ctx, e.Platform, e.Workspace.ID, sr, sw, &mcpserver.StdioOptions{Knowledge: e.Knowledge})
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, nil)
	s, err := c.Connect(t.Context(), &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := toolNames(t, s), []string{"agent_helper", "docsearch"}; !slices.Equal(got, want) {
		t.Errorf("stdio tools = %v, want %v", got, want)
	}
	if _, err := e.Platform.CreateAgent(t.Context(), store.Agent{WorkspaceID: e.Workspace.ID, Name: "late", Model: "fake/m"}); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, s); !slices.Contains(got, "agent_late") {
		t.Errorf("stdio tools after creating agent late = %v", got)
	}
	s.Close()
	cancel()
	<-done
}

// TestOAuthNeedsClients: the OAuth issuer gets its clients from the
// composition root, and says so when it is given none.
func TestOAuthNeedsClients(t *testing.T) {
	env := servertest.New(t, nil)
	key, err := mcpserver.DeriveTokenKey([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = mcpserver.New(env.Platform, &mcpserver.Options{TokenKey: key})
	if err == nil || !strings.Contains(err.Error(), "OAuthClients") {
		t.Fatalf("New without OAuthClients = %v, want an error naming Options.OAuthClients", err)
	}
	if _, err := mcpserver.New(env.Platform, &mcpserver.Options{TokenKey: key, OAuthClients: env.Store.OAuthClients()}); err != nil {
		t.Fatalf("New with OAuthClients = %v", err)
	}
}

// TestMCPPersonalMemory: an outside issuer's token acts for the AgentCraft
// user its (iss, sub) is linked to (store.UserIdentities), so the recall
// tool of a memory-enabled agent called through agent_<name> shows the
// model that person's personal memory and never another's. A subject
// linked to no user, a linked user who left the workspace, and a token of
// AgentCraft's own issuer (an OAuth client) act for no person and recall
// nobody's personal memory.
func TestMCPPersonalMemory(t *testing.T) {
	t.Parallel()
	idp := newOutsideIssuer(t)
	const iss, aud = "https://idp.example.com", "https://agents.example.com/mcp"
	e := newMCPEnvWith(t, servertest.Options{Memory: true,
		Agents: []platform.AgentSpec{{Name: "rememberer", Model: "fake/m", Memory: &store.AgentMemory{Enabled: true}}}},
		mcpserver.Options{JWKSURL: idp.jwksURL, Issuer: iss, Audience: aud})
	secrets := map[string]string{"A": "Bluebird", "B": "Redwood", "C": "Greenfinch"}
	subjects, userIDs := map[string]string{}, map[string]string{}
	for _, who := range []string{"A", "B", "C"} {
		p := servertest.NewPerson(t, e.Store, e.Workspace.ID, strings.ToLower(who)+"@example.com")
		servertest.Client{T: t, Base: e.URL, Key: p.Key}.JSON("POST", "/api/memories",
			`{"text":"`+who+`'s secret project is `+secrets[who]+`"}`, http.StatusCreated, nil)
		subjects[who], userIDs[who] = "idp-subject-"+who, p.UserID
		if _, err := e.Store.UserIdentities().Link(t.Context(), store.UserIdentity{Provider: iss, Subject: subjects[who], UserID: p.UserID}); err != nil {
			t.Fatal(err)
		}
		if who == "C" {
			// C leaves the workspace; the issuer still signs C's tokens.
			if err := e.Store.Members().Remove(t.Context(), e.Workspace.ID, p.UserID); err != nil {
				t.Fatal(err)
			}
		}
	}
	now := time.Now()
	outside := func(sub string) string {
		return signES256(t, idp.key, "k1", jwt.Claims{Issuer: iss, Audience: jwt.Audience{aud}, Subject: sub,
			Expiry: jwt.NewNumericDate(now.Add(time.Hour)), IssuedAt: jwt.NewNumericDate(now)}, "agents/rememberer")
	}
	recall := llm.ToolCall{ID: "call_recall", Name: "recall", Arguments: `{"query":"secret project"}`}
	for _, tc := range []struct {
		name  string
		token string
		own   string // the secret the model may see; "" none
	}{
		{"A", outside(subjects["A"]), secrets["A"]},
		{"B", outside(subjects["B"]), secrets["B"]},
		{"C, no longer a member", outside(subjects["C"]), ""},
		{"an unlinked subject", outside("idp-subject-nobody"), ""},
		// An unlinked subject that happens to be A's user id is not A.
		{"an unlinked subject equal to A's user id", outside(userIDs["A"]), ""},
		{"an OAuth client", e.token(t, "agents/rememberer"), ""},
	} {
		result := servertest.ScriptToolCall(t, e.fake, recall, "It is secret.")
		s := e.session(t, tc.token)
		if text, isErr := callText(t, s, "agent_rememberer", map[string]any{"message": "What is my secret project?"}); isErr || text != "It is secret." {
			t.Fatalf("%s: agent_rememberer = %q (error %v)", tc.name, text, isErr)
		}
		got := result()
		for who, secret := range secrets {
			if strings.Contains(got, secret) != (secret == tc.own) {
				t.Errorf("%s: the recall result shown to the model is %s; want %q and no other person's memory (found %s's: %v)",
					tc.name, got, tc.own, who, strings.Contains(got, secret))
			}
		}
	}
}
