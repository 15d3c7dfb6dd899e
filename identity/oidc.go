package identity

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/agentcraftlab/agentcraft/secret"
	"github.com/agentcraftlab/agentcraft/store"
)

// OIDCProvider is an OpenID provider users may sign in with (Keycloak,
// Entra ID, Google, Cognito, Zitadel, ...), as agentcraft.yaml configures
// it.
type OIDCProvider struct {
	// Name identifies the provider in URLs (/api/auth/oidc/NAME): lower
	// case letters, digits, '-' and '_'.
	Name string
	// IssuerURL is the issuer; discovery reads
	// IssuerURL/.well-known/openid-configuration.
	IssuerURL    string
	ClientID     string
	ClientSecret string
	// RedirectURL is AgentCraft's callback registered at the provider.
	RedirectURL string
	// Scopes requested; default openid, email, profile ("openid" is
	// always added).
	Scopes []string
	// AllowedDomains, when set, are the only e-mail domains whose users
	// may sign in for the first time (an account is created for them).
	AllowedDomains []string
	// WorkspaceID and Role, when set, make a user created by a first
	// sign-in a member of that workspace with that role (default
	// RoleMember).
	WorkspaceID string
	Role        Role
}

// OIDCOptions configure NewOIDC. The zero value (or nil) is the default.
type OIDCOptions struct {
	// HTTPClient reaches the providers (discovery, keys, token
	// endpoint). Default: a client with a 15 s timeout.
	HTTPClient *http.Client
	// Box seals the flow state handed to the browser as a cookie. Pass a
	// Box over the master key so every process opens another's; the
	// default, a random key, works in one process only.
	Box *secret.Box
	// FlowTTL is how long a sign-in may take at the provider. Default 10
	// minutes.
	FlowTTL time.Duration
}

// ErrOIDC is wrapped by every refusal of an OpenID sign-in.
var ErrOIDC = errors.New("identity: OpenID sign-in refused")

// OIDC signs users in through OpenID providers: authorization code flow
// with PKCE (S256) and a nonce. It is safe for concurrent use.
type OIDC struct {
	svc       *Service
	providers map[string]*oidcProvider
	client    *http.Client
	box       *secret.Box
	ttl       time.Duration
	// mu guards used.
	mu sync.Mutex
	// used holds the states exchanged already, until they expire, so a
	// replayed callback is refused even before the provider refuses its
	// code.
	used map[string]time.Time
}

type oidcProvider struct {
	cfg OIDCProvider
	// mu guards disc: discovery runs on first use, and again after it
	// failed, so a provider that is down at start does not stop serve.
	mu   sync.Mutex
	disc *oidc.Provider
}

var providerName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// NewOIDC returns the sign-in of providers for svc. It validates the
// configuration; it does not reach the providers yet.
func NewOIDC(svc *Service, providers []OIDCProvider, opts *OIDCOptions) (*OIDC, error) {
	var o OIDCOptions
	if opts != nil {
		o = *opts
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 15 * time.Second}
	}
	if o.Box == nil {
		key := make([]byte, secret.KeySize)
		rand.Read(key)
		box, err := secret.New(key)
		if err != nil {
			return nil, err
		}
		o.Box = box
	}
	o.FlowTTL = cmp.Or(o.FlowTTL, 10*time.Minute)
	x := &OIDC{svc: svc, providers: map[string]*oidcProvider{}, client: o.HTTPClient, box: o.Box, ttl: o.FlowTTL, used: map[string]time.Time{}}
	for i, p := range providers {
		where := fmt.Sprintf("identity: oidc provider %d (%q)", i, p.Name)
		switch {
		case !providerName.MatchString(p.Name):
			return nil, fmt.Errorf("%s: name must be lower case letters, digits, '-' or '_'", where)
		case x.providers[p.Name] != nil:
			return nil, fmt.Errorf("%s: the name is used twice", where)
		case p.ClientID == "":
			return nil, fmt.Errorf("%s: client_id is empty; copy it from the provider's application settings", where)
		case p.Role != "" && !p.Role.Valid():
			return nil, fmt.Errorf("%s: role %q is not a role; use admin, member or guest", where, p.Role)
		}
		for field, raw := range map[string]string{"issuer": p.IssuerURL, "redirect_url": p.RedirectURL} {
			u, err := url.Parse(raw)
			if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				return nil, fmt.Errorf("%s: %s %q is not an http(s) URL", where, field, raw)
			}
		}
		if !slices.Contains(p.Scopes, oidc.ScopeOpenID) {
			if len(p.Scopes) == 0 {
				p.Scopes = []string{"email", "profile"}
			}
			p.Scopes = append([]string{oidc.ScopeOpenID}, p.Scopes...)
		}
		for j, d := range p.AllowedDomains {
			p.AllowedDomains[j] = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(d), "@"))
		}
		x.providers[p.Name] = &oidcProvider{cfg: p}
	}
	return x, nil
}

// Providers returns the names of the configured providers, sorted.
func (x *OIDC) Providers() []string {
	names := make([]string, 0, len(x.providers))
	for n := range x.providers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (x *OIDC) provider(ctx context.Context, name string) (*oidcProvider, *oidc.Provider, error) {
	p := x.providers[name]
	if p == nil {
		return nil, nil, fmt.Errorf("%w: no OpenID provider is named %q", ErrOIDC, name)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.disc == nil {
		d, err := oidc.NewProvider(oidc.ClientContext(ctx, x.client), p.cfg.IssuerURL)
		if err != nil {
			return nil, nil, fmt.Errorf("identity: oidc provider %s: discovery: %w", name, err)
		}
		p.disc = d
	}
	return p, p.disc, nil
}

func (p *oidcProvider) oauth2(d *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret, RedirectURL: p.cfg.RedirectURL,
		Endpoint: d.Endpoint(), Scopes: p.cfg.Scopes}
}

// OIDCStart begins a sign-in: send the browser to URL and set Cookie (a
// sealed value holding the state, PKCE verifier and nonce) as an
// HttpOnly, SameSite=Lax cookie until ExpiresAt; the callback hands it
// back to Exchange.
type OIDCStart struct {
	URL       string
	Cookie    string
	ExpiresAt time.Time
}

// oidcFlow is what the cookie holds.
type oidcFlow struct {
	Provider string `json:"p"`
	State    string `json:"s"`
	Verifier string `json:"v"`
	Nonce    string `json:"n"`
	Expires  int64  `json:"e"`
}

var flowAD = secret.Bind("agentcraft oidc flow v1")

// AuthURL starts a sign-in with the provider.
func (x *OIDC) AuthURL(ctx context.Context, provider string) (OIDCStart, error) {
	p, d, err := x.provider(ctx, provider)
	if err != nil {
		return OIDCStart{}, err
	}
	exp := x.svc.now().Add(x.ttl)
	f := oidcFlow{Provider: provider, State: randomToken(), Verifier: oauth2.GenerateVerifier(), Nonce: randomToken(), Expires: exp.Unix()}
	plain, _ := json.Marshal(f)
	sealed, err := x.box.Seal(plain, flowAD)
	if err != nil {
		return OIDCStart{}, fmt.Errorf("identity: oidc: seal flow: %w", err)
	}
	u := p.oauth2(d).AuthCodeURL(f.State, oauth2.S256ChallengeOption(f.Verifier), oidc.Nonce(f.Nonce))
	return OIDCStart{URL: u, Cookie: base64.RawURLEncoding.EncodeToString(sealed), ExpiresAt: exp}, nil
}

// claims are the ID token claims the sign-in reads. email_verified is a
// string in some providers (Cognito).
type claims struct {
	Email         string `json:"email"`
	EmailVerified any    `json:"email_verified"`
	Name          string `json:"name"`
}

func (c claims) verified() bool {
	switch v := c.EmailVerified.(type) {
	case bool:
		return v
	case string:
		return strings.EqualFold(v, "true")
	}
	return false
}

// Exchange finishes a sign-in at the callback: code and state are the
// callback's query parameters, cookie the value AuthURL gave. It checks the
// state against the cookie (once: a replayed state is refused), redeems
// the code with the PKCE verifier, verifies the ID token (signature,
// issuer, audience = client id, expiry, nonce), and maps (issuer, subject)
// to a user: the linked one, else the user with the token's verified
// address (linked now), else a new user when the address is verified and
// its domain allowed. It returns a new session.
func (x *OIDC) Exchange(ctx context.Context, provider, code, state, cookie string, from Client) (SignIn, error) {
	f, err := x.openFlow(cookie)
	if err != nil {
		return SignIn{}, err
	}
	now := x.svc.now()
	switch {
	case f.Provider != provider:
		return SignIn{}, fmt.Errorf("%w: the sign-in was started with another provider", ErrOIDC)
	case now.Unix() > f.Expires:
		return SignIn{}, fmt.Errorf("%w: the sign-in took longer than %s; start again", ErrOIDC, x.ttl)
	case subtle.ConstantTimeCompare([]byte(f.State), []byte(state)) != 1:
		return SignIn{}, fmt.Errorf("%w: the state does not match this browser's sign-in", ErrOIDC)
	}
	if !x.useState(f.State, time.Unix(f.Expires, 0), now) {
		return SignIn{}, fmt.Errorf("%w: this sign-in was completed already (replayed state)", ErrOIDC)
	}
	p, d, err := x.provider(ctx, provider)
	if err != nil {
		return SignIn{}, err
	}
	hctx := oidc.ClientContext(ctx, x.client)
	tok, err := p.oauth2(d).Exchange(hctx, code, oauth2.VerifierOption(f.Verifier))
	if err != nil {
		return SignIn{}, fmt.Errorf("%w: redeem the code at %s: %w", ErrOIDC, provider, err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return SignIn{}, fmt.Errorf("%w: %s returned no ID token; is the openid scope allowed?", ErrOIDC, provider)
	}
	idt, err := d.VerifierContext(hctx, &oidc.Config{ClientID: p.cfg.ClientID, Now: x.svc.now}).Verify(hctx, raw)
	if err != nil {
		return SignIn{}, fmt.Errorf("%w: ID token: %w", ErrOIDC, err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(f.Nonce)) != 1 {
		return SignIn{}, fmt.Errorf("%w: ID token nonce does not match the sign-in", ErrOIDC)
	}
	var c claims
	if err := idt.Claims(&c); err != nil {
		return SignIn{}, fmt.Errorf("%w: ID token claims: %w", ErrOIDC, err)
	}
	u, err := x.userFor(ctx, p.cfg, idt.Issuer, idt.Subject, c)
	if err != nil {
		return SignIn{}, err
	}
	return x.svc.startSession(ctx, u, from, "oidc:"+provider)
}

func (x *OIDC) openFlow(cookie string) (oidcFlow, error) {
	sealed, err := base64.RawURLEncoding.DecodeString(cookie)
	if err != nil || cookie == "" {
		return oidcFlow{}, fmt.Errorf("%w: the sign-in cookie is missing or damaged; start again", ErrOIDC)
	}
	plain, err := x.box.Open(sealed, flowAD)
	if err != nil {
		return oidcFlow{}, fmt.Errorf("%w: the sign-in cookie does not open (%w); start again", ErrOIDC, err)
	}
	var f oidcFlow
	if err := json.Unmarshal(plain, &f); err != nil {
		return oidcFlow{}, fmt.Errorf("%w: the sign-in cookie: %w", ErrOIDC, err)
	}
	return f, nil
}

// useState marks state used and reports whether it was not yet.
func (x *OIDC) useState(state string, expires, now time.Time) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	for s, e := range x.used {
		if now.After(e) {
			delete(x.used, s)
		}
	}
	if _, ok := x.used[state]; ok {
		return false
	}
	x.used[state] = expires
	return true
}

// userFor finds or creates the user of an ID token.
func (x *OIDC) userFor(ctx context.Context, p OIDCProvider, issuer, subject string, c claims) (store.User, error) {
	st := x.svc.st
	id, err := st.UserIdentities().Lookup(ctx, issuer, subject)
	if err == nil {
		return st.Users().Get(ctx, id.UserID)
	}
	if !errors.Is(err, store.ErrNotFound) {
		return store.User{}, fmt.Errorf("identity: oidc: %w", err)
	}
	email := store.NormalizeEmail(c.Email)
	switch {
	case email == "":
		return store.User{}, fmt.Errorf("%w: the provider sent no e-mail address; allow the email scope", ErrOIDC)
	case !c.verified():
		return store.User{}, fmt.Errorf("%w: the provider has not verified this e-mail address; verify it there and sign in again", ErrOIDC)
	}
	u, err := st.Users().GetByEmail(ctx, email)
	switch {
	case errors.Is(err, store.ErrNotFound):
		_, domain, _ := strings.Cut(email, "@")
		if len(p.AllowedDomains) > 0 && !slices.Contains(p.AllowedDomains, domain) {
			return store.User{}, fmt.Errorf("%w: addresses at %s may not sign up through %s", ErrOIDC, domain, p.Name)
		}
		if u, err = x.svc.CreateUser(ctx, NewUser{Email: email, DisplayName: c.Name}); err != nil {
			return store.User{}, err
		}
		if p.WorkspaceID != "" {
			if _, err := st.Members().Add(ctx, store.Member{WorkspaceID: p.WorkspaceID, UserID: u.ID, Role: cmp.Or(p.Role, RoleMember)}); err != nil {
				return store.User{}, fmt.Errorf("identity: oidc: join workspace: %w", err)
			}
		}
	case err != nil:
		return store.User{}, fmt.Errorf("identity: oidc: %w", err)
	}
	if _, err := st.UserIdentities().Link(ctx, store.UserIdentity{Provider: issuer, Subject: subject, UserID: u.ID}); err != nil &&
		!errors.Is(err, store.ErrConflict) {
		return store.User{}, fmt.Errorf("identity: oidc: %w", err)
	}
	x.svc.recordAccount(ctx, UserActorID(u.ID), u.ID, "auth.identity_link", map[string]any{"provider": p.Name})
	return u, nil
}
