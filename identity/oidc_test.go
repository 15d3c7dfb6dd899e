package identity

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"
)

// wrongAudience is a user whose ID token the real OP signs for another
// client: what a token stolen from another application looks like.
type wrongAudience struct{ *mockoidc.MockUser }

func (u wrongAudience) Claims(scopes []string, base *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	base.Audience = jwt.ClaimStrings{"another-client"}
	return u.MockUser.Claims(scopes, base)
}

type oidcFixture struct {
	*fixture
	op *mockoidc.MockOIDC
	x  *OIDC
}

// newOIDCFixture starts a real OpenID provider (mockoidc: discovery,
// JWKS, authorization code with PKCE, RS256 ID tokens) on a loopback port.
func newOIDCFixture(t *testing.T, p OIDCProvider) *oidcFixture {
	t.Helper()
	op, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { op.Shutdown() })
	f := &oidcFixture{fixture: newFixture(t, nil), op: op}
	cfg := op.Config()
	p.Name, p.IssuerURL, p.ClientID, p.ClientSecret = "mock", cfg.Issuer, cfg.ClientID, cfg.ClientSecret
	p.RedirectURL = "http://127.0.0.1:8080/api/auth/oidc/mock/callback"
	f.x, err = NewOIDC(f.svc, []OIDCProvider{p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// authorize plays the browser at the provider: it follows AuthURL and
// returns the code and state of the redirect to the callback.
func (f *oidcFixture) authorize(t *testing.T, user mockoidc.User) (OIDCStart, string, string) {
	t.Helper()
	start, err := f.x.AuthURL(t.Context(), "mock")
	if err != nil {
		t.Fatalf("AuthURL = %v", err)
	}
	f.op.QueueUser(user)
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := browser.Get(start.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil || !strings.HasPrefix(loc.String(), "http://127.0.0.1:8080/api/auth/oidc/mock/callback") {
		t.Fatalf("authorize: %d to %q (%v)", resp.StatusCode, loc, err)
	}
	return start, loc.Query().Get("code"), loc.Query().Get("state")
}

func TestOIDCSignIn(t *testing.T) {
	f := newOIDCFixture(t, OIDCProvider{WorkspaceID: "", Role: RoleGuest})
	ctx := t.Context()
	ola := &mockoidc.MockUser{Subject: "sub-ola", Email: "Ola@Example.com", EmailVerified: true}
	start, code, state := f.authorize(t, ola)

	// PKCE S256 and a nonce are in the request; the challenge is the
	// verifier's (the OP checks the verifier at the token endpoint).
	q, _ := url.Parse(start.URL)
	flow, err := f.x.openFlow(start.Cookie)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(flow.Verifier))
	if q.Query().Get("code_challenge_method") != "S256" || q.Query().Get("code_challenge") != base64.RawURLEncoding.EncodeToString(sum[:]) ||
		q.Query().Get("nonce") != flow.Nonce || flow.Nonce == "" || state != flow.State {
		t.Fatalf("authorization request %s lacks PKCE S256 or the nonce", start.URL)
	}
	if strings.Contains(start.Cookie, flow.Verifier) || strings.Contains(start.Cookie, flow.State) {
		t.Fatal("the flow cookie shows the verifier or state in clear")
	}

	in, err := f.x.Exchange(ctx, "mock", code, state, start.Cookie, client)
	if err != nil {
		t.Fatalf("Exchange = %v", err)
	}
	if in.User.Email != "ola@example.com" || in.User.PasswordHash != "" {
		t.Errorf("user created by the first sign-in = %+v", in.User)
	}
	if a, err := f.svc.Authenticate(ctx, in.Token); err != nil || a.User.ID != in.User.ID {
		t.Errorf("Authenticate(OIDC session) = %v", err)
	}
	id, err := f.st.UserIdentities().Lookup(ctx, f.op.Issuer(), "sub-ola")
	if err != nil || id.UserID != in.User.ID {
		t.Errorf("identity (issuer, sub) = %+v, %v", id, err)
	}

	// A replayed callback is refused, before the code reaches the OP.
	if _, err := f.x.Exchange(ctx, "mock", code, state, start.Cookie, client); !errors.Is(err, ErrOIDC) || !strings.Contains(err.Error(), "replayed") {
		t.Errorf("replayed state = %v, want refused as replayed", err)
	}

	// The same subject, even with a new address, is the same user.
	start, code, state = f.authorize(t, &mockoidc.MockUser{Subject: "sub-ola", Email: "ola@new.example", EmailVerified: true})
	again, err := f.x.Exchange(ctx, "mock", code, state, start.Cookie, client)
	if err != nil || again.User.ID != in.User.ID || again.Token == in.Token {
		t.Errorf("second sign-in = %+v, %v; want the same user, a new session", again.User, err)
	}
}

func TestOIDCRefusals(t *testing.T) {
	f := newOIDCFixture(t, OIDCProvider{AllowedDomains: []string{"example.com"}})
	ctx := t.Context()

	start, code, _ := f.authorize(t, &mockoidc.MockUser{Subject: "s1", Email: "a@example.com", EmailVerified: true})
	if _, err := f.x.Exchange(ctx, "mock", code, "forged-state", start.Cookie, client); !errors.Is(err, ErrOIDC) || !strings.Contains(err.Error(), "state") {
		t.Errorf("wrong state = %v", err)
	}
	_, _, otherState := f.authorize(t, &mockoidc.MockUser{Subject: "s1", Email: "a@example.com", EmailVerified: true})
	if _, err := f.x.Exchange(ctx, "mock", code, otherState, start.Cookie, client); !errors.Is(err, ErrOIDC) {
		t.Errorf("state of another flow = %v", err)
	}
	if _, err := f.x.Exchange(ctx, "mock", code, otherState, "garbage", client); !errors.Is(err, ErrOIDC) {
		t.Errorf("damaged cookie = %v", err)
	}

	start, code, state := f.authorize(t, wrongAudience{&mockoidc.MockUser{Subject: "s2", Email: "b@example.com", EmailVerified: true}})
	if _, err := f.x.Exchange(ctx, "mock", code, state, start.Cookie, client); !errors.Is(err, ErrOIDC) || !strings.Contains(err.Error(), "audience") {
		t.Errorf("ID token for another audience = %v, want refused naming the audience", err)
	}

	start, code, state = f.authorize(t, &mockoidc.MockUser{Subject: "s3", Email: "c@example.com", EmailVerified: false})
	if _, err := f.x.Exchange(ctx, "mock", code, state, start.Cookie, client); !errors.Is(err, ErrOIDC) || !strings.Contains(err.Error(), "verified") {
		t.Errorf("unverified address = %v", err)
	}
	start, code, state = f.authorize(t, &mockoidc.MockUser{Subject: "s4", Email: "d@elsewhere.test", EmailVerified: true})
	if _, err := f.x.Exchange(ctx, "mock", code, state, start.Cookie, client); !errors.Is(err, ErrOIDC) || !strings.Contains(err.Error(), "elsewhere.test") {
		t.Errorf("domain not allowed = %v", err)
	}
	if n, _ := f.st.Users().Count(ctx); n != 0 {
		t.Errorf("%d users created by refused sign-ins", n)
	}

	// An existing account with the verified address is linked, not doubled;
	// a disabled one is refused.
	u := f.user(t, "e@example.com", "")
	start, code, state = f.authorize(t, &mockoidc.MockUser{Subject: "s5", Email: "E@example.com", EmailVerified: true})
	in, err := f.x.Exchange(ctx, "mock", code, state, start.Cookie, client)
	if err != nil || in.User.ID != u.ID {
		t.Errorf("sign-in with an existing address = %+v, %v; want user %s", in.User, err, u.ID)
	}
	if _, err := f.svc.SetDisabled(ctx, CLI, u.ID, true); err != nil {
		t.Fatal(err)
	}
	start, code, state = f.authorize(t, &mockoidc.MockUser{Subject: "s5", Email: "e@example.com", EmailVerified: true})
	if _, err := f.x.Exchange(ctx, "mock", code, state, start.Cookie, client); !errors.Is(err, ErrDisabled) {
		t.Errorf("disabled user = %v", err)
	}
	if _, err := f.x.AuthURL(ctx, "nope"); !errors.Is(err, ErrOIDC) {
		t.Errorf("unknown provider = %v", err)
	}
	if n := f.audit.count("auth.login"); n != 1 {
		t.Errorf("auth.login events = %d, want 1", n)
	}
}

func TestOIDCJoinsWorkspace(t *testing.T) {
	f := newOIDCFixture(t, OIDCProvider{})
	f.x.providers["mock"].cfg.WorkspaceID = f.ws.ID
	f.x.providers["mock"].cfg.Role = RoleGuest
	start, code, state := f.authorize(t, &mockoidc.MockUser{Subject: "s", Email: "g@example.com", EmailVerified: true})
	in, err := f.x.Exchange(t.Context(), "mock", code, state, start.Cookie, client)
	if err != nil {
		t.Fatal(err)
	}
	if g, err := f.svc.GrantOf(t.Context(), f.ws.ID, in.User.ID); err != nil || g.Role != RoleGuest {
		t.Errorf("new OIDC user's role = %+v, %v; want guest of the configured workspace", g, err)
	}
}

func TestNewOIDCValidates(t *testing.T) {
	ok := OIDCProvider{Name: "corp", IssuerURL: "https://idp.example.com", ClientID: "c", RedirectURL: "https://ac.example.com/cb"}
	for name, mutate := range map[string]func(*OIDCProvider){
		"bad name":     func(p *OIDCProvider) { p.Name = "Corp SSO" },
		"no client id": func(p *OIDCProvider) { p.ClientID = "" },
		"bad issuer":   func(p *OIDCProvider) { p.IssuerURL = "idp.example.com" },
		"bad redirect": func(p *OIDCProvider) { p.RedirectURL = "" },
		"bad role":     func(p *OIDCProvider) { p.Role = "root" },
	} {
		p := ok
		mutate(&p)
		if _, err := NewOIDC(nil, []OIDCProvider{p}, nil); err == nil {
			t.Errorf("%s: NewOIDC = nil error", name)
		}
	}
	if _, err := NewOIDC(nil, []OIDCProvider{ok, ok}, nil); err == nil {
		t.Error("two providers of one name accepted")
	}
	x, err := NewOIDC(nil, []OIDCProvider{ok}, nil)
	if err != nil || x.providers["corp"].cfg.Scopes[0] != "openid" {
		t.Errorf("NewOIDC = %v; want openid scope added", err)
	}
}
