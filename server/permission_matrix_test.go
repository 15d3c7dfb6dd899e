package server_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/run"
	"github.com/agentcraftlab/agentcraft/secret"
	"github.com/agentcraftlab/agentcraft/server"
	"github.com/agentcraftlab/agentcraft/server/a2aserver"
	"github.com/agentcraftlab/agentcraft/server/aguiserver"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/task"
	"github.com/agentcraftlab/agentcraft/tool"
	"github.com/agentcraftlab/agentcraft/trigger"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/workflowtest"
)

// The permission matrix of issue 14: every route of the route table ×
// every credential (each role as a session and as an API key, narrowed
// keys, a key acting for a user, a revoked, an unknown and no key, an
// expired session) × the caller's own workspace, a foreign one (named by
// header, by path, by name and by id) and the foreign workspace's object
// ids in the caller's own. The expected answer comes from the route's
// Access and Permission and identity.Allows/ScopeAllows, never from the
// Authenticator.

// matrixClock is the identity service's clock; moving it back signs a
// session in long ago (the expired session).
type matrixClock struct {
	mu  sync.Mutex // guards off
	off time.Duration
}

func (c *matrixClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *matrixClock) set(d time.Duration) {
	c.mu.Lock()
	c.off = d
	c.mu.Unlock()
}

// Credential kinds.
const (
	credNone    = "none"
	credKey     = "key"
	credSession = "session"
)

// matrixCred is one way of calling the API.
type matrixCred struct {
	name string
	kind string
	// key is the bearer token of a key (or of an unknown/revoked one).
	key string
	// email and password sign a session in, afresh for every request, so
	// that a sign-out route cannot end the credential of a later case;
	// token is a fixed session token (the expired session).
	email, password, token string
	// valid is false for credentials that must get 401.
	valid bool
	// home is the workspace the credential belongs to; role and scope
	// what it holds there.
	home  store.Workspace
	role  identity.Role
	scope string
	// person: a session, or a key acting for a user (AccessUser routes).
	person bool
}

// matrixTarget is which workspace a call is for.
type matrixTarget struct {
	name string
	// foreign: the call is for a workspace the credential is not of.
	foreign bool
	// foreignIDs: the caller's own workspace, with the other workspace's
	// object ids in the path.
	foreignIDs bool
	// pathWS is {workspace}; header is X-Workspace ("" sends none); ids
	// is the workspace whose objects fill the other path parameters.
	pathWS, header string
	ids            store.Workspace
}

// matrixWorld is the server under test with its two workspaces.
type matrixWorld struct {
	t     *testing.T
	env   *servertest.Env
	srv   *server.Server
	ids   *identity.Service
	clock *matrixClock
	url   string
	a, b  store.Workspace
	// params holds each workspace's value of each path parameter, keyed
	// by the literal segment before it and the parameter's name
	// ("agents/id").
	params map[string]map[string]string
	// login is a user whose address and password fill the sign-in route's
	// body.
	loginEmail string
	creds      []matrixCred
}

const matrixPassword = "correct horse battery staple"

// cheapHasher keeps the hundreds of sign-ins of the matrix fast.
var cheapHasher = identity.Argon2id{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}

func newMatrixWorld(t *testing.T) *matrixWorld {
	t.Helper()
	ctx := t.Context()
	fake := llmtest.NewOpenAI(t)
	env := servertest.New(t, &servertest.Options{Knowledge: true, Memory: true,
		Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)}})
	clock := &matrixClock{}
	ids, err := identity.New(env.Store, &identity.Options{Hasher: cheapHasher, Now: clock.Now, Audit: env.Platform.RecordAudit})
	if err != nil {
		t.Fatal(err)
	}
	res := workflowtest.NewResolver(t)
	ledger := task.NewLedger(env.Store, noTools{}, nil)
	var tasks *task.Service
	runs := controlplane.New(env.Store, workflowtest.Engine(t, workflow.Services{Agents: res, Actions: ledger}), controlplane.Options{Audit: env.Platform.RecordAudit,
		Changed: func(ctx context.Context, r store.Run) { tasks.Changed(ctx, r) }})
	tasks, err = task.New(env.Store, runs, ledger, &task.Options{Audit: env.Platform.RecordAudit})
	if err != nil {
		t.Fatal(err)
	}
	runner := run.New(env.Platform, &run.Options{Conversations: env.Conversations, Memory: env.Memories})
	triggerKey := make([]byte, secret.KeySize)
	rand.Read(triggerKey)
	triggerBox, err := secret.New(triggerKey)
	if err != nil {
		t.Fatal(err)
	}
	triggers, err := trigger.New(env.Store, runs, triggerBox, &trigger.Options{Agents: env.Platform, Audit: env.Platform.RecordAudit})
	if err != nil {
		t.Fatal(err)
	}
	a2a, err := a2aserver.New(env.Platform, &a2aserver.Options{Runner: runner, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	agui, err := aguiserver.New(env.Platform, &aguiserver.Options{Runner: runner, Conversations: env.Conversations, Runs: runs})
	if err != nil {
		t.Fatal(err)
	}
	var jobs sync.WaitGroup
	srv, err := server.New(env.Platform, &server.Options{
		Runs: runs, Tasks: tasks, Triggers: triggers, Knowledge: env.Knowledge, Runner: runner, Conversations: env.Conversations, Memories: env.Memories,
		Identity: ids, Mounts: append(a2a.Mounts(), agui.Mounts()...), Version: "test",
		// Every request reads the key and the member's role, so that a
		// demotion is seen by the next request.
		KeyTTL: -1,
		EnqueueIngest: func(_ context.Context, workspaceID, jobID string) error {
			jobs.Go(func() { _ = env.Knowledge.RunJob(context.Background(), workspaceID, jobID, nil) })
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		runs.Wait()
		jobs.Wait()
		a2a.Stop()
		srv.Stop()
	})
	w := &matrixWorld{t: t, env: env, srv: srv, ids: ids, clock: clock, url: hs.URL, a: env.Workspace,
		params: map[string]map[string]string{}}
	w.b, err = ids.CreateWorkspace(ctx, identity.CLI, "beta")
	if err != nil {
		t.Fatal(err)
	}
	w.loginEmail = w.user("login@example.com", w.a, identity.RoleGuest).Email
	w.seedCreds()
	w.seed(w.a, "a")
	w.seed(w.b, "b")
	return w
}

// user creates a user who is role in ws.
func (w *matrixWorld) user(email string, ws store.Workspace, role identity.Role) store.User {
	w.t.Helper()
	u, err := w.ids.CreateUser(w.t.Context(), identity.NewUser{Email: email, Password: matrixPassword})
	if err != nil {
		w.t.Fatal(err)
	}
	if _, err := w.ids.AddMember(w.t.Context(), identity.CLI, ws.ID, u.ID, role); err != nil {
		w.t.Fatal(err)
	}
	return u
}

// key creates an API key of ws; actingFor "" makes a key of no user.
func (w *matrixWorld) key(ws store.Workspace, role identity.Role, scope, actingFor string) (string, store.APIKey) {
	w.t.Helper()
	a := identity.CLI
	a.UserID = actingFor
	token, k, err := w.ids.CreateAPIKey(w.t.Context(), a, ws.ID, identity.NewAPIKey{Name: "matrix", Role: role, Scope: scope})
	if err != nil {
		w.t.Fatal(err)
	}
	return token, k
}

// seedCreds makes the credentials, least powerful first.
func (w *matrixWorld) seedCreds() {
	t := w.t
	ctx := t.Context()
	revoked, rk := w.key(w.a, identity.RoleOwner, "", "")
	if err := w.ids.RevokeAPIKey(ctx, identity.CLI, w.a.ID, rk.ID); err != nil {
		t.Fatal(err)
	}
	expiredUser := w.user("expired@example.com", w.a, identity.RoleOwner)
	// Signed in 13 hours ago and idle since: past the 12 h idle timeout.
	w.clock.set(-13 * time.Hour)
	old, err := w.ids.Login(ctx, expiredUser.Email, matrixPassword, identity.Client{})
	w.clock.set(0)
	if err != nil {
		t.Fatal(err)
	}
	w.creds = append(w.creds,
		matrixCred{name: "no-credentials", kind: credNone},
		matrixCred{name: "unknown-key", kind: credKey, key: identity.NewAPIKeyToken()},
		matrixCred{name: "revoked-owner-key", kind: credKey, key: revoked},
		matrixCred{name: "expired-owner-session", kind: credSession, token: old.Token, email: expiredUser.Email},
	)
	readKey, _ := w.key(w.a, identity.RoleOwner, store.APIKeyScopeRead, "")
	chatKey, _ := w.key(w.a, identity.RoleOwner, store.APIKeyScopeChat, "")
	w.creds = append(w.creds,
		matrixCred{name: "read-scope-owner-key", kind: credKey, key: readKey, valid: true, home: w.a, role: identity.RoleOwner, scope: store.APIKeyScopeRead},
		matrixCred{name: "chat-scope-owner-key", kind: credKey, key: chatKey, valid: true, home: w.a, role: identity.RoleOwner, scope: store.APIKeyScopeChat},
	)
	roles := slices.Clone(identity.Roles())
	slices.Reverse(roles) // guest first
	for _, role := range roles {
		k, _ := w.key(w.a, role, "", "")
		u := w.user(string(role)+"@example.com", w.a, role)
		w.creds = append(w.creds,
			matrixCred{name: string(role) + "-key", kind: credKey, key: k, valid: true, home: w.a, role: role},
			matrixCred{name: string(role) + "-session", kind: credSession, email: u.Email, password: matrixPassword, valid: true, home: w.a, role: role, person: true})
		if role == identity.RoleMember {
			// An owner-role key acting for a member holds a member's power.
			uk, _ := w.key(w.a, identity.RoleOwner, "", u.ID)
			w.creds = append(w.creds, matrixCred{name: "owner-key-for-member-user", kind: credKey, key: uk, valid: true, home: w.a, role: identity.RoleMember, person: true})
		}
	}
	ownerB := w.user("owner-b@example.com", w.b, identity.RoleOwner)
	bk, _ := w.key(w.b, identity.RoleOwner, "", ownerB.ID)
	w.creds = append(w.creds,
		matrixCred{name: "beta-owner-key", kind: credKey, key: bk, valid: true, home: w.b, role: identity.RoleOwner, person: true},
		matrixCred{name: "beta-owner-session", kind: credSession, email: ownerB.Email, password: matrixPassword, valid: true, home: w.b, role: identity.RoleOwner, person: true})
}

// seed stores one object of each kind in ws and records the path
// parameter values that reach them; suffix keeps names apart.
func (w *matrixWorld) seed(ws store.Workspace, suffix string) {
	t := w.t
	ctx := t.Context()
	owner, _ := w.key(ws, identity.RoleOwner, "", "")
	c := servertest.Client{T: t, Base: w.url, Key: owner}
	var agent, wf, conv, mem struct {
		ID   string          `json:"id"`
		Def  json.RawMessage `json:"definition"`
		Name string          `json:"name"`
	}
	c.JSON("POST", "/api/agents", `{"name":"helper-`+suffix+`","model":"fake/m"}`, http.StatusCreated, &agent)
	c.JSON("POST", "/api/workflows", strings.Replace(simpleFlow, `"memo"`, `"memo-`+suffix+`"`, 1), http.StatusCreated, &wf)
	c.JSON("POST", "/api/conversations", `{"title":"talk `+suffix+`"}`, http.StatusCreated, &conv)
	c.JSON("POST", "/api/memories", `{"text":"the office of `+suffix+` is on floor 2","scope":"workspace"}`, http.StatusCreated, &mem)
	c.JSON("POST", "/api/credentials", `{"provider":"fake","api_key":"sk-`+suffix+`"}`, http.StatusOK, nil)
	c.JSON("POST", "/api/kbs", `{"name":"docs-`+suffix+`"}`, http.StatusCreated, nil)
	c.JSON("POST", "/api/skills", `{"name":"notes-`+suffix+`","description":"Take notes.","instructions":"Write notes.","files":[{"path":"a.md","content":"A"}]}`, http.StatusCreated, nil)
	var tg struct {
		ID string `json:"id"`
	}
	c.JSON("POST", "/api/triggers", `{"name":"hook-`+suffix+`","kind":"webhook","workflow":"`+wf.ID+`"}`, http.StatusCreated, &tg)
	r, err := w.env.Store.Runs().Create(ctx, store.Run{WorkspaceID: ws.ID, WorkflowID: wf.ID, WorkflowVersion: 1,
		Definition: wf.Def, Status: store.RunFailed, Input: json.RawMessage(`{}`), Error: "seeded"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.env.Store.MCPServers().Create(ctx, store.MCPServer{WorkspaceID: ws.ID, Name: "mcp" + suffix, URL: "http://127.0.0.1:1/mcp"}); err != nil {
		t.Fatal(err)
	}
	// A task waiting for a high-capability approval: only an owner (and
	// not its requester) may decide it.
	tk, err := w.env.Store.Tasks().Create(ctx, store.Task{WorkspaceID: ws.ID, Title: "publish " + suffix, Source: "api",
		Status: store.TaskAwaitingApproval, Capability: store.CapabilityHigh, CreatedBy: "system:seed"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.env.Store.Approvals().Create(ctx, store.Approval{WorkspaceID: ws.ID, TaskID: tk.ID, StepKey: "seed/publish",
		Capability: store.CapabilityHigh, Summary: "publish the press release of " + suffix, RequestedBy: "system:seed"}); err != nil {
		t.Fatal(err)
	}
	up, err := w.env.Store.Uploads().Put(ctx, store.Upload{WorkspaceID: ws.ID, Name: "pic-" + suffix + ".png", ContentType: "image/png",
		Data: []byte("png of " + suffix), Size: int64(len("png of " + suffix)), ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	inv, err := w.ids.Invite(ctx, identity.CLI, ws.ID, identity.RoleGuest, "")
	if err != nil {
		t.Fatal(err)
	}
	// The targets of the member and key routes are a bystander guest and
	// a guest key, never a credential of the matrix.
	bystander := w.user("bystander-"+suffix+"@example.com", ws, identity.RoleGuest)
	_, victim := w.key(ws, identity.RoleGuest, "", "")
	w.params[ws.ID] = map[string]string{
		"agents/id":        agent.ID,
		"workflows/id":     wf.ID,
		"versions/version": "1",
		"runs/id":          r.ID,
		"conversations/id": conv.ID,
		"memories/id":      mem.ID,
		"kbs/id":           "docs-" + suffix,
		"uploads/id":       up.ID,
		// No ingest job is seeded (it would need an upload); an unknown
		// job still reaches the handler once authorized.
		"jobs/job":             "no-such-job",
		"credentials/provider": "fake",
		"openapi/name":         "openapi" + suffix,
		"servers/name":         "mcp" + suffix,
		"members/user":         bystander.ID,
		"invitations/id":       inv.Invitation.ID,
		"keys/id":              victim.ID,
		"models/id...":         "fake/m",
		"oidc/provider":        "none",
		"agui/agent":           agent.Name,
		"workflows/name":       wf.Name,
		"tasks/id":             tk.ID,
		"skills/name":          "notes-" + suffix,
		"triggers/id":          tg.ID,
		"hooks/id":             tg.ID,
		"files/path...":        "a.md",
		// Unknown tokens: a real invitation accepted by the matrix's
		// users would change who is a member of what.
		"link/token":        "unknown-token",
		"invite/token":      "unknown-token",
		"invitations/token": "unknown-token",
	}
}

var paramRE = regexp.MustCompile(`\{([A-Za-z_]+)(\.\.\.)?\}`)

// splitPattern returns the method (POST for a mount of every method)
// and path of a ServeMux pattern.
func splitPattern(p string) (method, path string) {
	if m, rest, ok := strings.Cut(p, " "); ok {
		return m, rest
	}
	return http.MethodPost, p
}

// fill replaces the path parameters of path: {workspace} by ws, the
// others by the values of the ids workspace. ok is false, with the
// parameter, when the table has no value.
func (w *matrixWorld) fill(path, ws string, ids store.Workspace) (string, string, bool) {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		m := paramRE.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		if m[1] == "workspace" {
			segs[i] = ws
			continue
		}
		key := segs[i-1] + "/" + m[1] + m[2]
		v, ok := w.params[ids.ID][key]
		if !ok {
			return "", key, false
		}
		segs[i] = v
	}
	return strings.Join(segs, "/"), "", true
}

// differs reports whether path has a parameter besides {workspace} whose
// value differs between the workspaces: a foreign-ids case is then a
// different request than the own one.
func (w *matrixWorld) differs(path string) bool {
	pa, _, okA := w.fill(path, "", w.a)
	pb, _, okB := w.fill(path, "", w.b)
	return okA && okB && pa != pb
}

// matrixBodies are the bodies of the writes that need more than {} to
// get past validation with the authorization it checks; every other
// write sends {}.
func (w *matrixWorld) body(pattern string) string {
	switch pattern {
	case "POST /api/auth/login":
		return fmt.Sprintf(`{"email":%q,"password":%q}`, w.loginEmail, matrixPassword)
	case "PATCH /api/workspaces/{workspace}":
		return fmt.Sprintf(`{"name":%q}`, w.a.Name) // the same name: X-Workspace by name keeps working
	case "POST /api/workspaces":
		return `{"name":"made-by-matrix"}`
	case "POST /api/workspaces/{workspace}/members":
		return `{"email":"bystander-a@example.com","role":"guest"}`
	case "PATCH /api/workspaces/{workspace}/members/{user}":
		return `{"role":"guest"}`
	case "POST /api/workspaces/{workspace}/invitations":
		return `{"role":"guest"}`
	case "POST /api/workspaces/{workspace}/keys":
		return `{"name":"made-by-matrix","role":"guest"}`
	}
	return "{}"
}

// matrixAnswer is a response, its body read unless it is an event
// stream (the status is all the matrix needs, and a stream may not end).
type matrixAnswer struct {
	status int
	body   []byte
	err    struct {
		Error struct {
			Message string `json:"message"`
			Code    string `json:"code"`
			Param   string `json:"param"`
		} `json:"error"`
	}
}

var matrixHTTP = &http.Client{Timeout: 20 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// CSRF header modes of send.
const (
	csrfValid = "valid" // the session's own token
	csrfNone  = "none"  // no X-CSRF-Token header
	csrfWrong = "wrong" // another session's token
)

// send makes one request as cred; csrf says what a session sends as
// X-CSRF-Token.
func (w *matrixWorld) send(cred matrixCred, method, path, header, body, csrf string) matrixAnswer {
	t := w.t
	var rd io.Reader
	if method != http.MethodGet && method != http.MethodHead {
		rd = strings.NewReader(body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, w.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if header != "" {
		req.Header.Set(httpapi.WorkspaceHeader, header)
	}
	switch cred.kind {
	case credKey:
		req.Header.Set("Authorization", "Bearer "+cred.key)
	case credSession:
		token, csrfToken := cred.token, "not-the-token"
		if token == "" {
			in, err := w.ids.Login(t.Context(), cred.email, cred.password, identity.Client{})
			if err != nil {
				t.Fatalf("sign %s in: %v", cred.email, err)
			}
			token, csrfToken = in.Token, in.CSRFToken
		}
		req.AddCookie(&http.Cookie{Name: httpapi.SessionCookie, Value: token})
		switch csrf {
		case csrfValid:
			req.Header.Set(httpapi.CSRFHeader, csrfToken)
		case csrfWrong:
			other, err := w.ids.Login(t.Context(), cred.email, cred.password, identity.Client{})
			if err != nil {
				t.Fatalf("sign %s in: %v", cred.email, err)
			}
			req.Header.Set(httpapi.CSRFHeader, other.CSRFToken)
		}
	}
	resp, err := matrixHTTP.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	a := matrixAnswer{status: resp.StatusCode}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		a.body, _ = io.ReadAll(resp.Body)
		_ = json.Unmarshal(a.body, &a.err)
	}
	return a
}

// matrixWant is the oracle's answer: allowed (the authorization layer
// lets the call through), or a status and error code, with the
// permission a refusal must name.
type matrixWant struct {
	allowed bool
	status  int
	codes   []string
	perm    identity.Permission
	// mention is what a foreign-workspace refusal's message must name.
	mention string
}

func (m matrixWant) String() string {
	if m.allowed {
		return "allowed"
	}
	return fmt.Sprintf("%d %v %s", m.status, m.codes, m.perm)
}

// expect is the oracle: the route's Access and Permission and the
// credential's role and scope, through identity.Allows and
// identity.ScopeAllows.
func expect(rt httpapi.Route, c matrixCred, tg matrixTarget) matrixWant {
	switch {
	case rt.Access == httpapi.AccessPublic:
		return matrixWant{allowed: true}
	case !c.valid:
		return matrixWant{status: http.StatusUnauthorized, codes: []string{"missing_api_key", "invalid_api_key", "session_expired"}}
	case rt.Access == httpapi.AccessUser:
		if !c.person {
			return matrixWant{status: http.StatusForbidden, codes: []string{"user_required"}}
		}
		return matrixWant{allowed: true}
	case tg.foreign:
		code := "not_a_member"
		if c.kind == credKey {
			code = "wrong_workspace"
		}
		return matrixWant{status: http.StatusForbidden, codes: []string{code}, mention: cmpOr(tg.pathWS, tg.header)}
	case !identity.Allows(c.role, rt.Permission) || !identity.ScopeAllows(c.scope, rt.Permission):
		return matrixWant{status: http.StatusForbidden, codes: []string{"permission_denied"}, perm: rt.Permission}
	}
	return matrixWant{allowed: true}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// handlerRefusals are the 403s a handler gives after the authorization
// layer let the call through, for a rule about one object rather than
// the route: a memory is changed or forgotten only by the principal who
// wrote it (package memory), whatever their role. Any other 403 of an
// allowed call fails the matrix.
// An approval is decided only by a role allowed its capability
// (approve_medium, approve_high), which the route cannot know: the
// handler refuses with approval_not_allowed (or self_approval).
var handlerRefusals = map[string]bool{"not_owner": true, "approval_not_allowed": true, "self_approval": true}

// check fails the test unless got is what want says.
func check(t *testing.T, want matrixWant, got matrixAnswer) {
	t.Helper()
	if want.allowed {
		if got.status == http.StatusUnauthorized || (got.status == http.StatusForbidden && !handlerRefusals[got.err.Error.Code]) {
			t.Errorf("= %d %s, want the call let through", got.status, got.body)
		}
		return
	}
	if got.status != want.status {
		t.Errorf("= %d %s, want %s", got.status, got.body, want)
		return
	}
	e := got.err.Error
	if !slices.Contains(want.codes, e.Code) || e.Message == "" {
		t.Errorf("= %d %s, want a JSON error with code %v and a message", got.status, got.body, want.codes)
	}
	if want.perm != "" && (e.Param != string(want.perm) || !strings.Contains(e.Message, string(want.perm))) {
		t.Errorf("= %s, want param %q and a message naming it", got.body, want.perm)
	}
	if want.mention != "" && !strings.Contains(e.Message, want.mention) {
		t.Errorf("= %s, want a message naming workspace %q", got.body, want.mention)
	}
}

// targets returns the targets of a route for a credential.
func (w *matrixWorld) targets(rt httpapi.Route, c matrixCred, path string) []matrixTarget {
	if rt.Access != httpapi.AccessWorkspace || !c.valid {
		// No workspace is involved, or the credential is refused before
		// any is looked at: one target, the A workspace of the table.
		return []matrixTarget{{name: "none", pathWS: w.a.ID, ids: w.a}}
	}
	own, other := c.home, w.a
	if own.ID == w.a.ID {
		other = w.b
	}
	var out []matrixTarget
	byPath := strings.Contains(path, "{workspace}")
	if own.ID == w.a.ID {
		// Credentials of B call only A, so that B's objects stay as seeded.
		out = append(out, matrixTarget{name: "own", pathWS: own.ID, ids: own})
		if !byPath {
			out = append(out, matrixTarget{name: "own-by-header-name", header: own.Name, ids: own})
		}
		if w.differs(path) {
			out = append(out, matrixTarget{name: "own-with-foreign-ids", foreignIDs: true, pathWS: own.ID, ids: other})
		}
	}
	if byPath {
		out = append(out,
			matrixTarget{name: "foreign-path-id", foreign: true, pathWS: other.ID, ids: other},
			matrixTarget{name: "foreign-path-name", foreign: true, pathWS: other.Name, ids: other},
			matrixTarget{name: "foreign-path-own-header", foreign: true, pathWS: other.ID, header: own.ID, ids: other})
	} else {
		out = append(out,
			matrixTarget{name: "foreign-header-id", foreign: true, header: other.ID, ids: other},
			matrixTarget{name: "foreign-header-name", foreign: true, header: other.Name, ids: other})
	}
	return out
}

// snapshot is what a workspace holds, without what changes by itself
// (timestamps, run and job progress, key use): a refused call must leave
// it as it was.
func (w *matrixWorld) snapshot(ws store.Workspace) map[string][]string {
	t := w.t
	ctx := context.Background()
	st := w.env.Store
	out := map[string][]string{}
	add := func(kind string, err error, items ...string) {
		if err != nil {
			t.Fatalf("snapshot %s: %v", kind, err)
		}
		slices.Sort(items)
		out[kind] = append(out[kind], items...)
	}
	wsNow, err := st.Workspaces().Get(ctx, ws.ID)
	add("workspace", err, wsNow.Name)
	agents, err := st.Agents().List(ctx, ws.ID)
	add("agents", err, mapf(agents, func(a store.Agent) string { return a.ID + " " + a.Name })...)
	wfs, err := st.Workflows().List(ctx, ws.ID)
	add("workflows", err, mapf(wfs, func(x store.Workflow) string { return fmt.Sprintf("%s %s v%d", x.ID, x.Name, x.Version) })...)
	runs, err := st.Runs().List(ctx, ws.ID, store.RunFilter{})
	add("runs", err, mapf(runs, func(x store.Run) string { return x.ID })...)
	// Conversations are listed per owner: every member and key of the
	// workspace (memory.Owner).
	members, err := st.Members().List(ctx, ws.ID)
	add("members", err, mapf(members, func(x store.Member) string { return x.UserID + " " + string(x.Role) })...)
	keys, err := st.APIKeys().List(ctx, ws.ID)
	add("api_keys", err, mapf(keys, func(x store.APIKey) string {
		return fmt.Sprintf("%s %s %q %v", x.ID, x.Role, x.Scope, x.RevokedAt != nil)
	})...)
	owners := append(mapf(members, func(x store.Member) string { return "user:" + x.UserID }),
		mapf(keys, func(x store.APIKey) string { return "apikey:" + x.ID })...)
	for _, o := range owners {
		convs, err := st.Conversations().List(ctx, store.ConversationFilter{WorkspaceID: ws.ID, Owner: o, Limit: 1000})
		add("conversations", err, mapf(convs.Conversations, func(x store.Conversation) string { return x.ID + " " + x.Title })...)
	}
	slices.Sort(out["conversations"])
	mems, err := st.Memories().List(ctx, store.MemoryFilter{WorkspaceID: ws.ID, Limit: 1000})
	add("memories", err, mapf(mems.Memories, func(x store.Memory) string { return x.ID + " " + x.Text })...)
	creds, err := st.Credentials().List(ctx, ws.ID)
	add("credentials", err, mapf(creds, func(x store.Credential) string { return x.Provider })...)
	kbs, err := st.KnowledgeBases().List(ctx, ws.ID)
	add("kbs", err, mapf(kbs, func(x store.KnowledgeBase) string { return x.ID + " " + x.Name + " " + x.Description })...)
	mcps, err := st.MCPServers().List(ctx, ws.ID)
	add("mcp_servers", err, mapf(mcps, func(x store.MCPServer) string { return x.Name + " " + x.URL })...)
	imps, err := st.OpenAPIImports().List(ctx, ws.ID)
	add("openapi", err, mapf(imps, func(x store.OpenAPIImport) string { return x.Name })...)
	tasks, err := st.Tasks().List(ctx, ws.ID, store.TaskFilter{Limit: store.MaxListLimit})
	add("tasks", err, mapf(tasks.Tasks, func(x store.Task) string { return x.ID + " " + string(x.Status) })...)
	approvals, err := st.Approvals().List(ctx, ws.ID, store.ApprovalFilter{Limit: 1000})
	add("approvals", err, mapf(approvals, func(x store.Approval) string { return x.ID + " " + string(x.Status) + " " + x.ApproverUserID })...)
	invs, err := st.Invitations().List(ctx, ws.ID)
	add("invitations", err, mapf(invs, func(x store.Invitation) string { return fmt.Sprintf("%s %s %v", x.ID, x.Role, x.AcceptedAt != nil) })...)
	return out
}

func mapf[T any](xs []T, f func(T) string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, f(x))
	}
	return out
}

// TestPermissionMatrix walks the route table with every credential and
// target and checks each answer against the oracle; refused writes must
// change nothing, and the foreign workspace must end as it was seeded.
func TestPermissionMatrix(t *testing.T) {
	w := newMatrixWorld(t)
	routes := w.srv.Routes()
	beforeB := w.snapshot(w.b)
	cases, writesChecked := 0, 0
	for _, rt := range routes {
		method, path := splitPattern(rt.Pattern)
		t.Run(rt.Pattern, func(t *testing.T) {
			type matrixCase struct {
				c    matrixCred
				tg   matrixTarget
				path string
				want matrixWant
			}
			var refused, allowed []matrixCase
			for _, c := range w.creds {
				if rt.Access == httpapi.AccessPublic && c.kind != credNone {
					continue // public routes ignore credentials: no credentials is their case
				}
				for _, tg := range w.targets(rt, c, path) {
					p, missing, ok := w.fill(path, tg.pathWS, tg.ids)
					if !ok {
						t.Fatalf("no value for path parameter %s of %s: add it to the table in seed", missing, rt.Pattern)
					}
					mc := matrixCase{c: c, tg: tg, path: p, want: expect(rt, c, tg)}
					if mc.want.allowed {
						allowed = append(allowed, mc)
					} else {
						refused = append(refused, mc)
					}
				}
			}
			run := func(mc matrixCase) {
				cases++
				t.Run(mc.c.name+"/"+mc.tg.name, func(t *testing.T) {
					got := w.send(mc.c, method, mc.path, mc.tg.header, w.body(rt.Pattern), csrfValid)
					check(t, mc.want, got)
					if mc.tg.foreignIDs && mc.want.allowed && got.status < 400 {
						t.Errorf("%s %s with the other workspace's ids = %d %s, want an error: a cross-workspace read or write", method, mc.path, got.status, got.body)
					}
				})
			}
			// The refused cases run first, so that a refused delete
			// still finds its object; together they must leave A as
			// it was (B is checked once, at the end).
			var beforeA map[string][]string
			if method != http.MethodGet {
				beforeA = w.snapshot(w.a)
			}
			for _, mc := range refused {
				run(mc)
			}
			if beforeA != nil {
				writesChecked += len(refused)
				if d := cmp.Diff(beforeA, w.snapshot(w.a)); d != "" {
					t.Errorf("refused calls of %s changed workspace %s (-before +after):\n%s", rt.Pattern, w.a.Name, d)
				}
			}
			for _, mc := range allowed {
				run(mc)
			}
		})
	}
	if d := cmp.Diff(beforeB, w.snapshot(w.b)); d != "" {
		t.Errorf("the foreign workspace changed during the matrix (-before +after):\n%s", d)
	}
	t.Logf("permission matrix: %d routes × %d credentials → %d cases; %d refused writes checked to change nothing",
		len(routes), len(w.creds), cases, writesChecked)
}

// cred returns the matrix credential called name.
func (w *matrixWorld) cred(name string) matrixCred {
	w.t.Helper()
	for _, c := range w.creds {
		if c.name == name {
			return c
		}
	}
	w.t.Fatalf("no credential %q", name)
	return matrixCred{}
}

// TestPermissionMatrixCSRF: a signed-in browser's write without its
// CSRF token, or with another session's, is refused with 403
// csrf_token_invalid on every state-changing route that needs a
// credential, before anything is done.
func TestPermissionMatrixCSRF(t *testing.T) {
	w := newMatrixWorld(t)
	owner := w.cred("owner-session")
	before := w.snapshot(w.a)
	cases := 0
	for _, rt := range w.srv.Routes() {
		method, path := splitPattern(rt.Pattern)
		if rt.Access == httpapi.AccessPublic || method == http.MethodGet {
			continue
		}
		p, missing, ok := w.fill(path, w.a.ID, w.a)
		if !ok {
			t.Fatalf("no value for path parameter %s of %s", missing, rt.Pattern)
		}
		for _, mode := range []string{csrfNone, csrfWrong} {
			cases++
			t.Run(rt.Pattern+"/"+mode, func(t *testing.T) {
				got := w.send(owner, method, p, "", w.body(rt.Pattern), mode)
				check(t, matrixWant{status: http.StatusForbidden, codes: []string{"csrf_token_invalid"}}, got)
				if !strings.Contains(got.err.Error.Message, httpapi.CSRFHeader) {
					t.Errorf("= %s, want a message naming %s", got.body, httpapi.CSRFHeader)
				}
			})
		}
	}
	if d := cmp.Diff(before, w.snapshot(w.a)); d != "" {
		t.Errorf("writes without a CSRF token changed the workspace (-before +after):\n%s", d)
	}
	t.Logf("CSRF: %d cases", cases)
}

// TestPermissionMatrixEscalation: nobody hands out more than they hold,
// and a key acting for a person loses what the person loses.
func TestPermissionMatrixEscalation(t *testing.T) {
	w := newMatrixWorld(t)
	ctx := t.Context()
	keysPath := "/api/workspaces/" + w.a.ID + "/keys"
	ownerKeys := func() int {
		ks, err := w.env.Store.APIKeys().List(ctx, w.a.ID)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, k := range ks {
			if k.Role == identity.RoleOwner {
				n++
			}
		}
		return n
	}
	roleOf := func(email string) identity.Role {
		u, err := w.ids.UserByEmail(ctx, email)
		if err != nil {
			t.Fatal(err)
		}
		g, err := w.ids.GrantOf(ctx, w.a.ID, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		return g.Role
	}
	forbidden := func(t *testing.T, got matrixAnswer, codes []string, perm identity.Permission, mention string) {
		t.Helper()
		check(t, matrixWant{status: http.StatusForbidden, codes: codes, perm: perm}, got)
		if mention != "" && !strings.Contains(got.err.Error.Message, mention) {
			t.Errorf("= %s, want a message naming %q", got.body, mention)
		}
	}

	t.Run("no key above the maker's role", func(t *testing.T) {
		n := ownerKeys()
		body := `{"name":"escalate","role":"owner"}`
		forbidden(t, w.send(w.cred("admin-session"), "POST", keysPath, "", body, csrfValid), []string{"forbidden"}, "", "owner")
		forbidden(t, w.send(w.cred("admin-key"), "POST", keysPath, "", body, csrfValid), []string{"forbidden"}, "", "owner")
		forbidden(t, w.send(w.cred("member-session"), "POST", keysPath, "", body, csrfValid), []string{"permission_denied"}, identity.PermManageKeys, "")
		forbidden(t, w.send(w.cred("owner-key-for-member-user"), "POST", keysPath, "", body, csrfValid), []string{"permission_denied"}, identity.PermManageKeys, "")
		if got := ownerKeys(); got != n {
			t.Errorf("owner keys = %d after the refusals, want %d", got, n)
		}
		// The admin's own rank is allowed: the refusal above is the rank.
		if got := w.send(w.cred("admin-session"), "POST", keysPath, "", `{"name":"fine","role":"admin"}`, csrfValid); got.status != http.StatusCreated {
			t.Errorf("admin creates an admin key = %d %s, want 201", got.status, got.body)
		}
	})

	t.Run("a narrowed key makes no key", func(t *testing.T) {
		for _, name := range []string{"chat-scope-owner-key", "read-scope-owner-key"} {
			forbidden(t, w.send(w.cred(name), "POST", keysPath, "", `{"name":"wider","role":"guest"}`, csrfValid), []string{"permission_denied"}, identity.PermManageKeys, "scope")
		}
	})

	t.Run("only an owner grants or takes the owner role", func(t *testing.T) {
		admin := w.cred("admin-session")
		bystander, err := w.ids.UserByEmail(ctx, "bystander-a@example.com")
		if err != nil {
			t.Fatal(err)
		}
		owner, err := w.ids.UserByEmail(ctx, "owner@example.com")
		if err != nil {
			t.Fatal(err)
		}
		fresh := w.user("fresh@example.com", w.b, identity.RoleGuest) // a user not yet in A
		members := "/api/workspaces/" + w.a.ID + "/members"
		forbidden(t, w.send(admin, "PATCH", members+"/"+bystander.ID, "", `{"role":"owner"}`, csrfValid), []string{"permission_denied"}, identity.PermManageOwners, "")
		forbidden(t, w.send(admin, "PATCH", members+"/"+owner.ID, "", `{"role":"guest"}`, csrfValid), []string{"permission_denied"}, identity.PermManageOwners, "")
		forbidden(t, w.send(admin, "DELETE", members+"/"+owner.ID, "", "", csrfValid), []string{"permission_denied"}, identity.PermManageOwners, "")
		forbidden(t, w.send(admin, "POST", members, "", fmt.Sprintf(`{"email":%q,"role":"owner"}`, fresh.Email), csrfValid), []string{"permission_denied"}, identity.PermManageOwners, "")
		forbidden(t, w.send(admin, "POST", "/api/workspaces/"+w.a.ID+"/invitations", "", `{"role":"owner"}`, csrfValid), []string{"permission_denied"}, identity.PermManageOwners, "")
		forbidden(t, w.send(w.cred("admin-key"), "PATCH", members+"/"+bystander.ID, "", `{"role":"owner"}`, csrfValid), []string{"permission_denied"}, identity.PermManageOwners, "")
		if r := roleOf(bystander.Email); r != identity.RoleGuest {
			t.Errorf("bystander is %s, want guest", r)
		}
		if r := roleOf(owner.Email); r != identity.RoleOwner {
			t.Errorf("owner is %s, want owner", r)
		}
		if _, err := w.ids.GrantOf(ctx, w.a.ID, fresh.ID); err == nil {
			t.Errorf("the admin made %s a member of %s", fresh.Email, w.a.Name)
		}
	})

	t.Run("a demoted person's key is demoted", func(t *testing.T) {
		u := w.user("demotee@example.com", w.a, identity.RoleAdmin)
		token, _, err := w.ids.CreateAPIKey(ctx, identity.UserActor(u.ID, identity.RoleAdmin), w.a.ID, identity.NewAPIKey{Name: "mine", Role: identity.RoleAdmin})
		if err != nil {
			t.Fatal(err)
		}
		key := matrixCred{name: "demotee-key", kind: credKey, key: token}
		session := matrixCred{name: "demotee-session", kind: credSession, email: u.Email, password: matrixPassword}
		for _, c := range []matrixCred{key, session} {
			if got := w.send(c, "GET", keysPath, "", "", csrfValid); got.status != http.StatusOK {
				t.Fatalf("%s lists keys as admin = %d %s", c.name, got.status, got.body)
			}
		}
		if _, err := w.ids.SetRole(ctx, identity.CLI, w.a.ID, u.ID, identity.RoleGuest); err != nil {
			t.Fatal(err)
		}
		for _, c := range []matrixCred{key, session} {
			forbidden(t, w.send(c, "GET", keysPath, "", "", csrfValid), []string{"permission_denied"}, identity.PermManageKeys, "guest")
			forbidden(t, w.send(c, "POST", "/api/agents", "", `{"name":"nope","model":"fake/m"}`, csrfValid), []string{"permission_denied"}, identity.PermEdit, "guest")
			if got := w.send(c, "GET", "/api/agents", "", "", csrfValid); got.status != http.StatusOK {
				t.Errorf("%s as guest reads agents = %d %s, want 200", c.name, got.status, got.body)
			}
		}
		if err := w.ids.RemoveMember(ctx, identity.CLI, w.a.ID, u.ID); err != nil {
			t.Fatal(err)
		}
		got := w.send(key, "GET", "/api/agents", "", "", csrfValid)
		check(t, matrixWant{status: http.StatusUnauthorized, codes: []string{"invalid_api_key"}}, got)
		got = w.send(session, "GET", "/api/agents", "", "", csrfValid)
		check(t, matrixWant{status: http.StatusForbidden, codes: []string{"no_workspace"}}, got)
	})
}

// noTools is a workspace with no tools for the matrix's task service.
type noTools struct{}

func (noTools) Tool(_ context.Context, _, name string) (tool.Tool, error) {
	return nil, fmt.Errorf("%w: %s", tool.ErrUnknownTool, name)
}
