package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

// countingHasher counts the password hashes checked, to prove a throttled
// sign-in costs none.
type countingHasher struct {
	identity.Hasher
	verifies atomic.Int64
}

func (c *countingHasher) Verify(pw, enc string) (bool, bool, error) {
	c.verifies.Add(1)
	return c.Hasher.Verify(pw, enc)
}

// testClock is a settable clock that only moves forward from now (the
// store filters sessions by real time too).
type testClock struct {
	mu sync.Mutex // guards t
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

const annPassword = "correct horse battery staple"

type peopleEnv struct {
	*servertest.Env
	hasher *countingHasher
	clock  *testClock
	ann    store.User
}

// newPeopleEnv is a server with sign-in, and ann, owner of the default
// workspace, with a password.
func newPeopleEnv(t testing.TB, o *servertest.Options) *peopleEnv {
	t.Helper()
	if o == nil {
		o = &servertest.Options{}
	}
	pe := &peopleEnv{hasher: &countingHasher{Hasher: identity.Argon2id{Memory: 64, Time: 1, Threads: 1, KeyLen: 32, SaltLen: 16}},
		clock: &testClock{t: time.Now()}}
	if o.Identity == nil {
		o.Identity = &identity.Options{}
	}
	o.Identity.Hasher, o.Identity.Now = pe.hasher, pe.clock.Now
	pe.Env = servertest.New(t, o)
	ctx := t.Context()
	u, err := pe.Identity.CreateUser(ctx, identity.NewUser{Email: "ann@example.com", Password: annPassword})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pe.Identity.AddMember(ctx, identity.CLI, pe.Workspace.ID, u.ID, identity.RoleOwner); err != nil {
		t.Fatal(err)
	}
	pe.ann = u
	return pe
}

// browser is a cookie-keeping client that does not follow redirects.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
	csrf string
}

func newBrowser(t *testing.T, base string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(method, path, body string, header map[string]string) (*http.Response, []byte) {
	b.t.Helper()
	u := path
	if !strings.HasPrefix(path, "http") {
		u = b.base + path
	}
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, r)
	if err != nil {
		b.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, data
}

// write sends a state-changing request with the session's CSRF token.
func (b *browser) write(method, path, body string) (*http.Response, []byte) {
	b.t.Helper()
	return b.do(method, path, body, map[string]string{httpapi.CSRFHeader: b.csrf})
}

func (b *browser) login(email, password string) (*http.Response, []byte) {
	b.t.Helper()
	resp, data := b.do("POST", "/api/auth/login", `{"email":"`+email+`","password":"`+password+`"}`, nil)
	if resp.StatusCode == http.StatusOK {
		var in struct {
			CSRFToken string `json:"csrf_token"`
		}
		if err := json.Unmarshal(data, &in); err != nil || in.CSRFToken == "" {
			b.t.Fatalf("login body %s has no csrf_token (%v)", data, err)
		}
		b.csrf = in.CSRFToken
	}
	return resp, data
}

func sessionCookie(t *testing.T, resp *http.Response) *http.Cookie {
	t.Helper()
	for _, c := range resp.Cookies() {
		if c.Name == httpapi.SessionCookie {
			return c
		}
	}
	t.Fatalf("no %s cookie in %v", httpapi.SessionCookie, resp.Header.Values("Set-Cookie"))
	return nil
}

func errCode(t *testing.T, data []byte) (code, msg string) {
	t.Helper()
	var e struct {
		Error struct {
			Message string `json:"message"`
			Code    string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatalf("error body %q is not JSON: %v", data, err)
	}
	return e.Error.Code, e.Error.Message
}

func TestSignInSetsAHardenedCookieAndMeListsWorkspaces(t *testing.T) {
	pe := newPeopleEnv(t, nil)
	b := newBrowser(t, pe.URL)
	resp, data := b.login("ann@example.com", annPassword)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login = %d %s", resp.StatusCode, data)
	}
	c := sessionCookie(t, resp)
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Secure {
		t.Errorf("cookie over plain HTTP = %+v; want HttpOnly, SameSite=Lax, Path=/, not Secure", c)
	}
	if exp := time.Until(c.Expires); exp < 6*24*time.Hour || exp > 7*24*time.Hour+time.Minute {
		t.Errorf("cookie expires in %s; want the absolute timeout (7 days)", exp)
	}
	if strings.Contains(string(data), "password") || strings.Contains(string(data), "failed_logins") {
		t.Errorf("login body shows account internals: %s", data)
	}

	resp, data = b.do("GET", "/api/me", "", nil)
	var me struct {
		User       struct{ ID, Email string }
		Workspaces []struct {
			ID, Name, Role string
			Permissions    []string
		}
		Via string
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &me) != nil {
		t.Fatalf("GET /api/me = %d %s", resp.StatusCode, data)
	}
	if me.User.ID != pe.ann.ID || me.User.Email != "ann@example.com" || len(me.Workspaces) != 1 ||
		me.Workspaces[0].ID != pe.Workspace.ID || me.Workspaces[0].Role != "owner" || me.Via != "session" {
		t.Errorf("/api/me = %+v", me)
	}
	// The owner's permissions, for the studio to show controls by.
	if len(me.Workspaces) == 1 && (len(me.Workspaces[0].Permissions) != len(identity.Permissions()) || !slices.Contains(me.Workspaces[0].Permissions, "delete_workspace")) {
		t.Errorf("/api/me permissions = %v, want all %d (owner)", me.Workspaces[0].Permissions, len(identity.Permissions()))
	}

	// A session reaches the workspace API like a key does.
	if resp, data := b.do("GET", "/api/agents", "", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /api/agents with the session = %d %s", resp.StatusCode, data)
	}

	// Behind TLS (a proxy says so through SecureCookies) the cookie is Secure.
	sec := newPeopleEnv(t, &servertest.Options{SecureCookies: true})
	resp, _ = newBrowser(t, sec.URL).login("ann@example.com", annPassword)
	if c := sessionCookie(t, resp); !c.Secure {
		t.Errorf("cookie with SecureCookies = %+v; want Secure", c)
	}
}

func TestCSRFTokenGuardsEveryCookieWrite(t *testing.T) {
	pe := newPeopleEnv(t, nil)
	b := newBrowser(t, pe.URL)
	if resp, data := b.login("ann@example.com", annPassword); resp.StatusCode != http.StatusOK {
		t.Fatalf("login = %d %s", resp.StatusCode, data)
	}
	body := `{"name":"csrf-probe","model":"fake/m","instructions":"x"}`
	for _, tc := range []struct {
		name   string
		header map[string]string
	}{
		{"no token", nil},
		{"wrong token", map[string]string{httpapi.CSRFHeader: "not-the-token"}},
		{"another session's token", map[string]string{httpapi.CSRFHeader: otherCSRF(t, pe)}},
	} {
		for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
			path := "/api/agents"
			if m != "POST" {
				path = "/api/agents/csrf-probe"
			}
			resp, data := b.do(m, path, body, tc.header)
			if code, msg := errCode(t, data); resp.StatusCode != http.StatusForbidden || code != "csrf_token_invalid" || !strings.Contains(msg, httpapi.CSRFHeader) {
				t.Errorf("%s %s with %s = %d %s; want 403 csrf_token_invalid", m, path, tc.name, resp.StatusCode, data)
			}
		}
	}
	if _, err := pe.Platform.Agent(t.Context(), pe.Workspace.ID, "csrf-probe"); err == nil {
		t.Error("a refused write created the agent")
	}
	// Reads need no token; the right token lets the write through.
	if resp, data := b.do("GET", "/api/agents", "", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("GET without token = %d %s", resp.StatusCode, data)
	}
	if resp, data := b.write("POST", "/api/agents", `{"name":"csrf-probe","model":"fake/m"}`); resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized {
		t.Errorf("POST with the token = %d %s", resp.StatusCode, data)
	}
	// An API key needs no CSRF token: it is not sent by a browser on its own.
	key := servertest.Client{T: t, Base: pe.URL, Key: pe.Key}
	if resp, data := key.Do("POST", "/api/conversations", `{"title":"by key"}`); resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized {
		t.Errorf("key POST without CSRF token = %d %s", resp.StatusCode, data)
	}
}

// otherCSRF signs ann in elsewhere and returns that session's CSRF token.
func otherCSRF(t *testing.T, pe *peopleEnv) string {
	in, err := pe.Identity.Login(t.Context(), "ann@example.com", annPassword, identity.Client{RemoteAddr: "192.0.2.9:1"})
	if err != nil {
		t.Fatal(err)
	}
	return in.CSRFToken
}

func TestSignInIssuesAFreshSessionAndSignOutEndsIt(t *testing.T) {
	pe := newPeopleEnv(t, nil)
	b := newBrowser(t, pe.URL)
	// Fixation: a cookie planted before sign-in is replaced, and worth
	// nothing; every sign-in is a new session id.
	base, _ := url.Parse(pe.URL)
	planted := &http.Cookie{Name: httpapi.SessionCookie, Value: "planted-by-an-attacker", Path: "/"}
	b.c.Jar.SetCookies(base, []*http.Cookie{planted})
	if resp, _ := b.do("GET", "/api/me", "", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("planted cookie = %d; want 401", resp.StatusCode)
	}
	resp, _ := b.login("ann@example.com", annPassword)
	first := sessionCookie(t, resp).Value
	if first == planted.Value {
		t.Fatal("sign-in kept the planted session id")
	}
	resp, _ = newBrowser(t, pe.URL).login("ann@example.com", annPassword)
	if second := sessionCookie(t, resp).Value; second == first {
		t.Fatal("two sign-ins share a session id")
	}

	// Sign-out ends this session only; the old cookie is refused.
	other := newBrowser(t, pe.URL)
	other.login("ann@example.com", annPassword)
	stolen := newBrowser(t, pe.URL)
	stolen.c.Jar.SetCookies(base, []*http.Cookie{{Name: httpapi.SessionCookie, Value: first, Path: "/"}})
	if resp, data := b.write("POST", "/api/auth/logout", ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("logout = %d %s", resp.StatusCode, data)
	}
	if resp, data := stolen.do("GET", "/api/me", "", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("signed-out session = %d %s; want 401", resp.StatusCode, data)
	} else if code, _ := errCode(t, data); code != "session_expired" {
		t.Errorf("signed-out session code = %q", code)
	}
	if resp, _ := other.do("GET", "/api/me", "", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("another session after logout = %d; want 200", resp.StatusCode)
	}
	// Sign-out everywhere ends them all.
	if resp, data := other.write("POST", "/api/auth/logout-everywhere", ""); resp.StatusCode != http.StatusOK || !strings.Contains(string(data), `"sessions"`) {
		t.Fatalf("logout-everywhere = %d %s", resp.StatusCode, data)
	}
	if resp, _ := other.do("GET", "/api/me", "", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("session after logout-everywhere = %d; want 401", resp.StatusCode)
	}
}

func TestSessionsExpireIdleAndAbsolute(t *testing.T) {
	pe := newPeopleEnv(t, &servertest.Options{Identity: &identity.Options{IdleTimeout: time.Hour, AbsoluteTimeout: 3 * time.Hour, TouchInterval: time.Second}})
	b := newBrowser(t, pe.URL)
	b.login("ann@example.com", annPassword)
	// Used every 50 minutes, the session lives on past its idle timeout...
	for range 3 {
		pe.clock.Add(50 * time.Minute)
		if resp, data := b.do("GET", "/api/me", "", nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("session in use after %s = %d %s", 50*time.Minute, resp.StatusCode, data)
		}
	}
	// ...but not past its absolute timeout.
	pe.clock.Add(40 * time.Minute)
	if resp, _ := b.do("GET", "/api/me", "", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("session past the absolute timeout = %d; want 401", resp.StatusCode)
	}
	// A session left alone for the idle timeout ends.
	b2 := newBrowser(t, pe.URL)
	b2.login("ann@example.com", annPassword)
	pe.clock.Add(61 * time.Minute)
	if resp, _ := b2.do("GET", "/api/me", "", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("idle session = %d; want 401", resp.StatusCode)
	}
}

func TestSixthWrongPasswordIsRefusedWithoutHashing(t *testing.T) {
	pe := newPeopleEnv(t, nil)
	b := newBrowser(t, pe.URL)
	pe.hasher.verifies.Store(0)
	for i := range 5 {
		resp, data := b.login("ann@example.com", "wrong password number")
		// The fifth is checked, and locks the account: it says so.
		want, wantCode := http.StatusUnauthorized, "invalid_credentials"
		if i == 4 {
			want, wantCode = http.StatusTooManyRequests, "sign_in_throttled"
		}
		if code, _ := errCode(t, data); resp.StatusCode != want || code != wantCode {
			t.Fatalf("wrong password %d = %d %s; want %d %s", i+1, resp.StatusCode, data, want, wantCode)
		}
	}
	if n := pe.hasher.verifies.Load(); n != 5 {
		t.Fatalf("%d hashes checked for 5 wrong passwords", n)
	}
	for _, pw := range []string{"wrong password number", annPassword} {
		resp, data := b.login("ann@example.com", pw)
		code, msg := errCode(t, data)
		if resp.StatusCode != http.StatusTooManyRequests || code != "sign_in_throttled" || !strings.Contains(msg, "locked") {
			t.Errorf("6th attempt = %d %s; want 429 naming the lock", resp.StatusCode, data)
		}
		if ra := resp.Header.Get("Retry-After"); ra == "" || ra == "0" {
			t.Errorf("429 without Retry-After (%q)", ra)
		}
	}
	if n := pe.hasher.verifies.Load(); n != 5 {
		t.Errorf("the locked attempts checked %d more hashes; want 0", n-5)
	}
	t.Logf("5 wrong passwords: 5 hashes checked; attempts 6 and 7 within the minute: 429 with 0 hashes")
	// After the lock the right password works again.
	pe.clock.Add(61 * time.Second)
	if resp, data := b.login("ann@example.com", annPassword); resp.StatusCode != http.StatusOK {
		t.Errorf("sign-in after the lock = %d %s", resp.StatusCode, data)
	}
}

// wrongAudience is a user whose ID token the real OP signs for another
// client.
type wrongAudience struct{ *mockoidc.MockUser }

func (u wrongAudience) Claims(scopes []string, base *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	base.Audience = jwt.ClaimStrings{"another-client"}
	return u.MockUser.Claims(scopes, base)
}

// TestOIDCSignInOverHTTP signs in through a real OpenID provider
// (mockoidc: discovery, JWKS, code flow with PKCE, RS256 ID tokens)
// started in the test, as a browser does: /api/auth/oidc/{provider}
// redirects to the provider, whose redirect to the callback signs in.
func TestOIDCSignInOverHTTP(t *testing.T) {
	op, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { op.Shutdown() })
	cfg := op.Config()
	const redirect = "http://agentcraft.test/api/auth/oidc/mock/callback"
	pe := newPeopleEnv(t, &servertest.Options{OIDC: []identity.OIDCProvider{{Name: "mock", IssuerURL: cfg.Issuer,
		ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, RedirectURL: redirect}}})
	// ann signs in with the provider, whose verified address is hers.
	signIn := func(b *browser, user mockoidc.User) (callback string) {
		t.Helper()
		resp, data := b.do("GET", "/api/auth/oidc/mock", "", nil)
		if resp.StatusCode != http.StatusFound {
			t.Fatalf("start = %d %s", resp.StatusCode, data)
		}
		auth, _ := url.Parse(resp.Header.Get("Location"))
		q := auth.Query()
		if !strings.HasPrefix(auth.String(), op.Issuer()) || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" ||
			q.Get("nonce") == "" || q.Get("state") == "" || q.Get("client_id") != cfg.ClientID {
			t.Fatalf("start redirects to %s; want the provider with PKCE S256, state and nonce", auth)
		}
		op.QueueUser(user)
		resp, _ = b.do("GET", auth.String(), "", nil)
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc.String(), redirect) {
			t.Fatalf("provider answered %d to %s", resp.StatusCode, loc)
		}
		return pe.URL + loc.RequestURI()
	}
	b := newBrowser(t, pe.URL)
	callback := signIn(b, &mockoidc.MockUser{Subject: "sub-ann", Email: "ann@example.com", EmailVerified: true})
	resp, data := b.do("GET", callback, "", nil)
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/" {
		t.Fatalf("callback = %d %s %s", resp.StatusCode, resp.Header.Get("Location"), data)
	}
	if c := sessionCookie(t, resp); !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
		t.Errorf("OIDC session cookie = %+v", c)
	}
	resp, data = b.do("GET", "/api/me", "", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(data), pe.ann.ID) {
		t.Fatalf("/api/me after OIDC = %d %s; want ann", resp.StatusCode, data)
	}
	if id, err := pe.Store.UserIdentities().Lookup(t.Context(), op.Issuer(), "sub-ann"); err != nil || id.UserID != pe.ann.ID {
		t.Errorf("linked identity = %+v, %v", id, err)
	}

	// The same callback again (a replayed state) is refused.
	replay := newBrowser(t, pe.URL)
	base, _ := url.Parse(pe.URL)
	b2 := newBrowser(t, pe.URL)
	cb2 := signIn(b2, &mockoidc.MockUser{Subject: "sub-ann", Email: "ann@example.com", EmailVerified: true})
	flowCookies := b2.c.Jar.Cookies(&url.URL{Scheme: "http", Host: base.Host, Path: "/api/auth/oidc/mock/callback"})
	if resp, data := b2.do("GET", cb2, "", nil); resp.StatusCode != http.StatusFound {
		t.Fatalf("second sign-in = %d %s", resp.StatusCode, data)
	}
	replay.c.Jar.SetCookies(&url.URL{Scheme: "http", Host: base.Host, Path: "/api/auth/oidc/"}, flowCookies)
	if resp, data := replay.do("GET", cb2, "", nil); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(data), "replayed") {
		t.Errorf("replayed callback = %d %s; want 401 naming the replay", resp.StatusCode, data)
	}

	// A state that is not this browser's is refused.
	b3 := newBrowser(t, pe.URL)
	cb3 := signIn(b3, &mockoidc.MockUser{Subject: "sub-ann", Email: "ann@example.com", EmailVerified: true})
	forged := strings.Replace(cb3, "state=", "state=x", 1)
	if resp, data := b3.do("GET", forged, "", nil); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(data), "state") {
		t.Errorf("forged state = %d %s; want 401 naming the state", resp.StatusCode, data)
	}

	// An ID token for another client (wrong audience) is refused.
	b4 := newBrowser(t, pe.URL)
	cb4 := signIn(b4, wrongAudience{&mockoidc.MockUser{Subject: "sub-eve", Email: "eve@example.com", EmailVerified: true}})
	if resp, data := b4.do("GET", cb4, "", nil); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(data), "audience") {
		t.Errorf("wrong audience = %d %s; want 401 naming the audience", resp.StatusCode, data)
	}
	if resp, _ := b4.do("GET", "/api/me", "", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("after a refused sign-in /api/me = %d; want 401", resp.StatusCode)
	}

}
