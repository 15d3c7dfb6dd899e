package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestAuthDefaults(t *testing.T) {
	cfg, err := Load(write(t, "server: {addr: '127.0.0.1:1'}"), []string{})
	if err != nil {
		t.Fatal(err)
	}
	want := Auth{IdleTimeout: 12 * time.Hour, AbsoluteTimeout: 168 * time.Hour}
	if diff := cmp.Diff(want, cfg.Auth); diff != "" {
		t.Errorf("auth defaults (-want +got):\n%s", diff)
	}
}

func TestAuthSection(t *testing.T) {
	p := write(t, `
auth:
  idle_timeout: 2h
  absolute_timeout: 24h
  secure_cookies: true
  oidc:
    - name: corp
      issuer: https://idp.example.com/realms/corp
      client_id: agentcraft
      client_secret: "${CORP_SECRET}"
      redirect_url: https://agents.example.com/api/auth/oidc/corp/callback
      scopes: [email, groups]
      allowed_domains: [example.com, "@example.org"]
      workspace: support
      role: guest
`)
	cfg, err := Load(p, []string{"CORP_SECRET=s3cret", "AGENTCRAFT_AUTH_IDLE_TIMEOUT=90m"})
	if err != nil {
		t.Fatal(err)
	}
	want := Auth{IdleTimeout: 90 * time.Minute, AbsoluteTimeout: 24 * time.Hour, SecureCookies: true, OIDC: []OIDCProvider{{
		Name: "corp", Issuer: "https://idp.example.com/realms/corp", ClientID: "agentcraft", ClientSecret: "s3cret",
		RedirectURL: "https://agents.example.com/api/auth/oidc/corp/callback", Scopes: []string{"email", "groups"},
		AllowedDomains: []string{"example.com", "@example.org"}, Workspace: "support", Role: "guest",
	}}}
	if diff := cmp.Diff(want, cfg.Auth); diff != "" {
		t.Errorf("auth (-want +got):\n%s", diff)
	}
}

func TestAuthValidation(t *testing.T) {
	const ok = "{name: corp, issuer: 'https://idp.example.com', client_id: c, redirect_url: 'https://a.example.com/api/auth/oidc/corp/callback'"
	for _, tc := range []struct{ body, want string }{
		{"auth: {idle_timeout: -1s}", "auth.idle_timeout: -1s must be a positive duration"},
		{"auth: {absolute_timeout: -1h}", "auth.absolute_timeout: -1h0m0s must be a positive duration"},
		{"auth: {idle_timeout: 200h}", "auth.idle_timeout: 200h0m0s is longer than auth.absolute_timeout (168h0m0s)"},
		{"auth: {idle_timout: 1h}", "auth.idle_timout: unknown key"},
		{"auth: {oidc: [{name: corp, client_id: c, redirect_url: 'https://a.example.com/api/auth/oidc/corp/callback'}]}", "auth.oidc[0].issuer: is empty"},
		{"auth: {oidc: [{name: corp, issuer: 'idp.example.com', client_id: c, redirect_url: 'https://a.example.com/api/auth/oidc/corp/callback'}]}", `auth.oidc[0].issuer: "idp.example.com" is not an http:// or https:// URL`},
		{"auth: {oidc: [{name: Corp, issuer: 'https://idp.example.com', client_id: c, redirect_url: 'https://a.example.com/api/auth/oidc/Corp/callback'}]}", `auth.oidc[0].name: "Corp" must be lower case`},
		{"auth: {oidc: [{name: corp, issuer: 'https://idp.example.com', redirect_url: 'https://a.example.com/api/auth/oidc/corp/callback'}]}", "auth.oidc[0].client_id: is empty"},
		{"auth: {oidc: [{name: corp, issuer: 'https://idp.example.com', client_id: c}]}", "auth.oidc[0].redirect_url: is empty"},
		{"auth: {oidc: [{name: corp, issuer: 'https://idp.example.com', client_id: c, redirect_url: 'https://a.example.com/callback'}]}", "auth.oidc[0].redirect_url: \"https://a.example.com/callback\" must end in /api/auth/oidc/corp/callback"},
		{"auth: {oidc: [" + ok + "}, " + ok + "}]}", `auth.oidc[1].name: "corp" is defined twice`},
		{"auth: {oidc: [" + ok + ", role: owner, workspace: w}]}", "auth.oidc[0].role: owner is not given by a first sign-in"},
		{"auth: {oidc: [" + ok + ", role: boss, workspace: w}]}", `auth.oidc[0].role: "boss" is not admin, member or guest`},
		{"auth: {oidc: [" + ok + ", role: admin}]}", "auth.oidc[0].workspace: is empty while role is set"},
		{"auth: {oidc: [" + ok + ", allowed_domains: ['ann@example.com']}]}", `auth.oidc[0].allowed_domains[0]: "ann@example.com" is not an e-mail domain`},
		{"auth: {oidc: [" + ok + ", scopes: ['email profile']}]}", `auth.oidc[0].scopes[0]: "email profile" is not a scope`},
		{"auth: {oidc: [" + ok + ", tenant: x}]}", "auth.oidc[0].tenant: unknown key"},
	} {
		_, err := Load(write(t, tc.body), []string{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want mention of %s", tc.body, err, tc.want)
		}
	}
	if _, err := Load(write(t, "auth: {oidc: ["+ok+", workspace: w}]}"), []string{}); err != nil {
		t.Errorf("a minimal provider: %v, want valid", err)
	}
}
