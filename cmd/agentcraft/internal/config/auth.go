package config

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Auth configures how people sign in to the browser API (/api/auth/...):
// the sessions an e-mail address and password, a one-time link or an
// OpenID provider start.
type Auth struct {
	// IdleTimeout ends a session unused for that long. Default 12h.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// AbsoluteTimeout ends every session that long after sign-in, used
	// or not. Default 168h (7 days).
	AbsoluteTimeout time.Duration `yaml:"absolute_timeout"`
	// SecureCookies marks the session cookie Secure on plain HTTP too:
	// set it behind a proxy that ends TLS. Cookies are Secure anyway
	// when serve itself answers over TLS. Default false.
	SecureCookies bool `yaml:"secure_cookies"`
	// OIDC are the OpenID Connect providers people may sign in with.
	OIDC []OIDCProvider `yaml:"oidc"`
}

// OIDCProvider is one OpenID Connect provider (Keycloak, Entra ID,
// Google, ...). Sign-in starts at /api/auth/oidc/NAME; the provider
// redirects back to RedirectURL, which must end in
// /api/auth/oidc/NAME/callback.
type OIDCProvider struct {
	// Name identifies the provider in URLs: lower case letters, digits,
	// '-' and '_'.
	Name string `yaml:"name"`
	// Issuer is the provider's issuer URL (discovery reads
	// ISSUER/.well-known/openid-configuration).
	Issuer   string `yaml:"issuer"`
	ClientID string `yaml:"client_id"`
	// ClientSecret, usually "${OIDC_CLIENT_SECRET}"; empty for a public
	// client.
	ClientSecret string `yaml:"client_secret"`
	// RedirectURL is the callback registered at the provider, as
	// browsers reach serve.
	RedirectURL string `yaml:"redirect_url"`
	// Scopes requested besides openid. Default email, profile.
	Scopes []string `yaml:"scopes"`
	// AllowedDomains, when set, are the only e-mail domains whose people
	// get an account at their first sign-in.
	AllowedDomains []string `yaml:"allowed_domains"`
	// Workspace, when set, is the workspace a person created by a first
	// sign-in joins, with Role (admin, member or guest; default member).
	// It must exist when serve starts.
	Workspace string `yaml:"workspace"`
	Role      string `yaml:"role"`
}

// oidcName is identity's rule for provider names.
var oidcName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// validateAuth checks the auth section.
func (a Auth) validateAuth(bad func(path, format string, args ...any)) {
	if a.IdleTimeout < 0 {
		bad("auth.idle_timeout", "%v must be a positive duration such as 12h, or 0 for the default", a.IdleTimeout)
	}
	if a.AbsoluteTimeout < 0 {
		bad("auth.absolute_timeout", "%v must be a positive duration such as 168h, or 0 for the default", a.AbsoluteTimeout)
	}
	if a.IdleTimeout > 0 && a.AbsoluteTimeout > 0 && a.IdleTimeout > a.AbsoluteTimeout {
		bad("auth.idle_timeout", "%v is longer than auth.absolute_timeout (%v), which would end every session first: shorten it or raise absolute_timeout", a.IdleTimeout, a.AbsoluteTimeout)
	}
	names := map[string]bool{}
	for i, p := range a.OIDC {
		path := fmt.Sprintf("auth.oidc[%d]", i)
		switch {
		case !oidcName.MatchString(p.Name):
			bad(path+".name", "%q must be lower case letters, digits, - or _ (it is part of the sign-in URLs)", p.Name)
		case names[p.Name]:
			bad(path+".name", "%q is defined twice", p.Name)
		}
		names[p.Name] = true
		if p.Issuer == "" {
			bad(path+".issuer", "is empty: give the provider's issuer URL, e.g. https://accounts.google.com")
		} else if !httpURL(p.Issuer) {
			bad(path+".issuer", "%q is not an http:// or https:// URL", p.Issuer)
		}
		if p.ClientID == "" {
			bad(path+".client_id", "is empty: copy it from the application registered at the provider")
		}
		callback := "/api/auth/oidc/" + p.Name + "/callback"
		switch {
		case p.RedirectURL == "":
			bad(path+".redirect_url", "is empty: give the callback registered at the provider, e.g. https://agents.example.com%s", callback)
		case !httpURL(p.RedirectURL):
			bad(path+".redirect_url", "%q is not an http:// or https:// URL", p.RedirectURL)
		default:
			if u, _ := url.Parse(p.RedirectURL); !strings.HasSuffix(u.Path, callback) {
				bad(path+".redirect_url", "%q must end in %s, where serve receives the provider's answer", p.RedirectURL, callback)
			}
		}
		for j, s := range p.Scopes {
			if s == "" || strings.ContainsAny(s, " \t") {
				bad(fmt.Sprintf("%s.scopes[%d]", path, j), "%q is not a scope: one word such as email", s)
			}
		}
		for j, d := range p.AllowedDomains {
			if d := strings.TrimPrefix(strings.TrimSpace(d), "@"); d == "" || strings.ContainsAny(d, "@/: \t") {
				bad(fmt.Sprintf("%s.allowed_domains[%d]", path, j), "%q is not an e-mail domain such as example.com", p.AllowedDomains[j])
			}
		}
		switch p.Role {
		case "", "admin", "member", "guest":
		case "owner":
			bad(path+".role", "owner is not given by a first sign-in: use admin, member or guest, and make owners with agentcraft users create --owner or the members API")
		default:
			bad(path+".role", "%q is not admin, member or guest", p.Role)
		}
		if p.Role != "" && strings.TrimSpace(p.Workspace) == "" {
			bad(path+".workspace", "is empty while role is set: name the workspace people join at their first sign-in")
		}
	}
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}
