package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/autonomous"
	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/memory"
	agentrun "github.com/agentcraftlab/agentcraft/run"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
)

// postJSON posts body to url and decodes the JSON answer into out.
func postJSON(t *testing.T, url, body string, out any) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("POST %s: decode: %v", url, err)
		}
	}
	return resp
}

// sessionCookie is the agentcraft_session cookie resp sets, or fails.
func sessionCookie(t *testing.T, resp *http.Response) *http.Cookie {
	t.Helper()
	for _, c := range resp.Cookies() {
		if c.Name == "agentcraft_session" && c.Value != "" && c.HttpOnly {
			return c
		}
	}
	t.Fatalf("no HttpOnly agentcraft_session cookie in %v", resp.Header["Set-Cookie"])
	return nil
}

// meOf is GET /api/me with the session cookie c.
func meOf(t *testing.T, base string, c *http.Cookie) (int, map[string]string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/api/me", nil)
	req.AddCookie(c)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var me struct {
		Workspaces []struct{ Name, Role string } `json:"workspaces"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&me); err != nil {
		t.Fatal(err)
	}
	roles := map[string]string{}
	for _, w := range me.Workspaces {
		roles[w.Name] = w.Role
	}
	return resp.StatusCode, roles
}

var setupLinkLine = regexp.MustCompile(`msg=setup_link url=(\S+) expires_at=(\S+)`)

// TestServeSetupLinkCreatesFirstOwner: a fresh install logs a setup link;
// opening it tells what it is for, signing up through it makes the
// first owner of the default workspace, signed in; the link works once,
// and a second start, with a user now, logs no link.
func TestServeSetupLinkCreatesFirstOwner(t *testing.T) {
	t.Chdir(t.TempDir())
	base, logs, stop := startServe(t)
	m := setupLinkLine.FindStringSubmatch(logs.String())
	if m == nil {
		stop()
		t.Fatalf("a fresh serve logged no setup_link:\n%s", logs)
	}
	link := m[1]
	token, ok := strings.CutPrefix(link, base+"/auth/invite/")
	if !ok || token == "" {
		t.Fatalf("setup link %q is not %s/auth/invite/TOKEN", link, base)
	}
	if i, l := strings.Index(logs.String(), "msg=listening"), strings.Index(logs.String(), "msg=setup_link"); i < 0 || l < i {
		t.Errorf("setup_link is logged before listening:\n%s", logs)
	}
	if !strings.Contains(logs.String(), "create the first owner") {
		t.Errorf("the setup_link line does not say what the link does:\n%s", logs)
	}

	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	var info struct{ Workspace, Role string }
	err = json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || info.Workspace != "default" || info.Role != "owner" {
		t.Fatalf("GET setup link = %d %+v (%v), want 200 for owner of default", resp.StatusCode, info, err)
	}

	signup := base + "/api/invitations/" + token + "/signup"
	body := `{"email":"ann@example.com","password":"correct horse battery staple","display_name":"Ann"}`
	var in struct {
		CSRFToken string `json:"csrf_token"`
	}
	resp = postJSON(t, signup, body, &in)
	if resp.StatusCode != http.StatusCreated || in.CSRFToken == "" {
		t.Fatalf("sign-up = %d, csrf_token %q; want 201 with a token", resp.StatusCode, in.CSRFToken)
	}
	cookie := sessionCookie(t, resp)
	if code, roles := meOf(t, base, cookie); code != http.StatusOK || roles["default"] != "owner" {
		t.Fatalf("GET /api/me = %d %v, want owner of default", code, roles)
	}
	if resp := postJSON(t, signup, `{"email":"eve@example.com","password":"correct horse battery staple"}`, nil); resp.StatusCode == http.StatusCreated {
		t.Error("the setup link signed up a second person")
	}
	stop()

	_, logs, stop = startServe(t)
	stop()
	if strings.Contains(logs.String(), "setup_link") {
		t.Errorf("a serve with users logged a setup link:\n%s", logs)
	}
}

// TestServeSignsInUserFromCLI: a user made with `agentcraft users create`
// signs in to serve with the piped password; serve logs no setup link;
// a failed sign-in of an unknown address lands in the default
// workspace's audit log (serve's AuditWorkspaceID).
func TestServeSignsInUserFromCLI(t *testing.T) {
	t.Chdir(t.TempDir())
	const pw = "correct horse battery staple"
	if code, _, errOut := runUsers(t, pw+"\n", "users", "create", "--email", "a@example.com", "--owner"); code != 0 {
		t.Fatalf("users create: %s", errOut)
	}
	base, logs, stop := startServe(t)
	var in struct {
		CSRFToken string `json:"csrf_token"`
	}
	resp := postJSON(t, base+"/api/auth/login", `{"email":"a@example.com","password":"`+pw+`"}`, &in)
	if resp.StatusCode != http.StatusOK || in.CSRFToken == "" {
		stop()
		t.Fatalf("login = %d, csrf_token %q; want 200", resp.StatusCode, in.CSRFToken)
	}
	cookie := sessionCookie(t, resp)
	if code, roles := meOf(t, base, cookie); code != http.StatusOK || roles["default"] != "owner" {
		t.Errorf("GET /api/me = %d %v, want owner of default", code, roles)
	}
	if resp := postJSON(t, base+"/api/auth/login", `{"email":"nobody@example.com","password":"`+pw+`"}`, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("login of an unknown address = %d, want 401", resp.StatusCode)
	}
	stop() // stops the platform, which flushes the audit recorder
	if strings.Contains(logs.String(), "setup_link") {
		t.Errorf("serve logged a setup link although a user exists:\n%s", logs)
	}

	st, err := sqlite.Open(context.Background(), filepath.Join("data", "agentcraft.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws, err := st.Workspaces().GetByName(t.Context(), "default")
	if err != nil {
		t.Fatal(err)
	}
	page, err := st.AuditLog().List(t.Context(), store.AuditFilter{WorkspaceID: ws.ID, Action: "auth.login"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 1 {
		t.Errorf("auth.login events in the default workspace = %d, want 1", len(page.Events))
	}
	page, err = st.AuditLog().List(t.Context(), store.AuditFilter{WorkspaceID: ws.ID, Action: "auth.login_failed"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 1 {
		t.Errorf("failed sign-ins of unknown addresses in the default workspace = %d, want 1", len(page.Events))
	}
}

const oidcConfig = `
workspaces: [{name: support}]
auth:
  oidc:
    - name: corp
      issuer: http://127.0.0.1:1/realms/corp
      client_id: agentcraft
      client_secret: "${CORP_SECRET}"
      redirect_url: http://127.0.0.1:8080/api/auth/oidc/corp/callback
      workspace: WORKSPACE
      role: member
`

// TestServeOIDCProviders: the configured providers are offered at
// /api/auth/providers (nothing reaches the provider before a sign-in
// starts), and a provider's workspace that does not exist stops serve
// with the path to fix.
func TestServeOIDCProviders(t *testing.T) {
	t.Chdir(t.TempDir())
	writeFiles(t, ".", map[string]string{"agentcraft.yaml": strings.ReplaceAll(oidcConfig, "WORKSPACE", "support")})
	base, _, stop := startServe(t)
	resp, err := http.Get(base + "/api/auth/providers")
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Providers []string }
	err = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	stop()
	if err != nil || resp.StatusCode != http.StatusOK || len(got.Providers) != 1 || got.Providers[0] != "corp" {
		t.Fatalf("GET /api/auth/providers = %d %+v (%v), want [corp]", resp.StatusCode, got, err)
	}

	writeFiles(t, ".", map[string]string{"agentcraft.yaml": strings.ReplaceAll(oidcConfig, "WORKSPACE", "sales")})
	cfg, err := config.Load("", []string{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Server.Addr = "127.0.0.1:0"
	f := false
	cfg.DetectProviders = &f
	err = serve(t.Context(), cfg, newLogger(io.Discard, cfg.Log), nil)
	if err == nil || !strings.Contains(err.Error(), `auth.oidc[0].workspace: "sales"`) {
		t.Fatalf("serve with an unknown workspace = %v, want an error naming auth.oidc[0].workspace", err)
	}
}

// TestDeleteWorkspaceDropsKnowledgeIndexes: deleting a workspace through
// serve's identity service drops the search index of each of its
// knowledge bases, of its memories and of its remembered plans, which the
// store's cascade cannot reach: none of their text is left in the
// database.
func TestDeleteWorkspaceDropsKnowledgeIndexes(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg, err := config.Load("", []string{})
	if err != nil {
		t.Fatal(err)
	}
	f := false
	cfg.DetectProviders = &f
	logger := newLogger(io.Discard, cfg.Log)
	ctx := t.Context()
	stk, err := openPlatform(ctx, cfg, logger, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer stk.close()
	counter, ok := stk.eng.(interface {
		Len(ctx context.Context, index string) (int, error)
	})
	if !ok {
		t.Fatalf("the search engine %T cannot count an index's documents", stk.eng)
	}
	ws, err := stk.st.Workspaces().GetOrCreate(ctx, "doomed")
	if err != nil {
		t.Fatal(err)
	}
	base, err := stk.knowledge.Create(ctx, ws.ID, "manuals", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stk.knowledge.Ingest(ctx, base, "refunds.txt", []byte("Refunds are paid within 14 days of the request.")); err != nil {
		t.Fatal(err)
	}
	if n, err := counter.Len(ctx, base.IndexName); err != nil || n == 0 {
		t.Fatalf("index %s holds %d documents (%v) after ingest, want some", base.IndexName, n, err)
	}
	p := agentrun.Principal{WorkspaceID: ws.ID, Actor: agentrun.ActorUser, ActorID: "u1", UserID: "u1"}
	for _, n := range []memory.Note{{Text: "personal: parcel locker 5512"}, {Text: "shared: parcel locker 5512", Scope: store.MemoryWorkspace}} {
		if _, err := stk.memories.Remember(ctx, p, n, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := stk.plans.Remember(ctx, ws.ID, autonomous.FlowPlan{Goal: "open parcel locker 5512", Nodes: []autonomous.FlowNode{{ID: "a", Kind: "agent"}}}); err != nil {
		t.Fatal(err)
	}
	left := func() int {
		t.Helper()
		var n int
		if err := stk.db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM search_docs WHERE body LIKE '%5512%' OR title LIKE '%5512%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := left(); n != 3 {
		t.Fatalf("%d indexed documents name the locker before the delete, want 3 (two memories, one plan)", n)
	}
	si, err := openSignIn(ctx, cfg, stk, logger)
	if err != nil {
		t.Fatal(err)
	}
	if err := si.ids.DeleteWorkspace(ctx, identity.CLI, ws.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := counter.Len(ctx, base.IndexName); err != nil || n != 0 {
		t.Errorf("index %s holds %d documents (%v) after its workspace was deleted, want none", base.IndexName, n, err)
	}
	if n := left(); n != 0 {
		t.Errorf("%d indexed memories or plans of the deleted workspace are left, want none", n)
	}
	if _, err := stk.st.Workspaces().Get(ctx, ws.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("workspace after delete: %v, want not found", err)
	}
}
