package mcpserver

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/store"
)

// AgentCraft's own OAuth2 authorization server: machine clients made with
// `agentcraft mcp clients create` trade their id and secret for a signed
// JWT at POST /oauth/token (client-credentials grant, RFC 6749 §4.4) and
// send it to /mcp. Tokens are EdDSA (Ed25519) JWTs whose key is derived
// from the master key (DeriveTokenKey), so they survive restarts and every
// process of one deployment signs and verifies alike without sharing
// state. The public key is served at /.well-known/jwks.json and the
// server's metadata (RFC 8414) at /.well-known/oauth-authorization-server.

// Scopes of /mcp tokens. A token lists the tools it sees and calls:
//
//	docsearch/read     list the docsearch tool
//	docsearch/search   list and call docsearch (knowledge-base search)
//	agents/NAME        list and call the tool of agent NAME (agent_NAME)
//	agents/*           every agent
//	workflows/NAME     list and run workflow NAME (workflow_NAME)
//	workflows/*        every workflow
const (
	ScopeDocsearchRead   = "docsearch/read"
	ScopeDocsearchSearch = "docsearch/search"
	ScopeAgentsAll       = "agents/*"
	ScopeWorkflowsAll    = "workflows/*"
)

// scopesSupported is what the metadata documents advertise.
var scopesSupported = []string{ScopeDocsearchRead, ScopeDocsearchSearch, ScopeAgentsAll, ScopeWorkflowsAll}

// ParseScopes splits a space-separated scope list (as typed after --scopes)
// and checks every scope against the scheme above. Duplicates are dropped;
// the order is kept.
func ParseScopes(s string) ([]string, error) {
	var out []string
	for _, sc := range strings.Fields(s) {
		if err := checkScope(sc); err != nil {
			return nil, err
		}
		if !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no scopes given: list them separated by spaces, e.g. %q", ScopeDocsearchRead+" "+ScopeDocsearchSearch)
	}
	return out, nil
}

func checkScope(sc string) error {
	switch sc {
	case ScopeDocsearchRead, ScopeDocsearchSearch, ScopeAgentsAll, ScopeWorkflowsAll:
		return nil
	}
	for _, prefix := range []string{"agents/", "workflows/"} {
		if name, ok := strings.CutPrefix(sc, prefix); ok && validToolPart(name) {
			return nil
		}
	}
	return fmt.Errorf("unknown scope %q: use %s, %s, agents/NAME, agents/*, workflows/NAME or workflows/*", sc, ScopeDocsearchRead, ScopeDocsearchSearch)
}

// validToolPart reports whether name can follow agent_ or workflow_ in an
// MCP tool name (letters, digits, _ - . and at most 100 characters).
func validToolPart(name string) bool {
	if name == "" || len(name) > 100 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// scopeSet is what a request may do on /mcp.
type scopeSet struct {
	all    bool // mcp.auth none or stdio: everything
	scopes []string
}

func (s scopeSet) has(sc string) bool { return s.all || slices.Contains(s.scopes, sc) }

func (s scopeSet) agent(name string) bool {
	return s.has(ScopeAgentsAll) || s.has("agents/"+name)
}

func (s scopeSet) workflow(name string) bool {
	return s.has(ScopeWorkflowsAll) || s.has("workflows/"+name)
}

// NewClientSecret returns a fresh OAuth client secret and its SHA-256, the
// only form the store keeps (store.OAuthClient.SecretHash).
func NewClientSecret() (secret string, hash []byte) {
	var b [32]byte
	_, _ = rand.Read(b[:])
	secret = "acs_" + base64.RawURLEncoding.EncodeToString(b[:])
	h := sha256.Sum256([]byte(secret))
	return secret, h[:]
}

// tokenKeyInfo separates the token signing key from every other key
// derived from the master key.
const tokenKeyInfo = "agentcraft oauth token signing key v1"

// DeriveTokenKey derives the Ed25519 key that signs /oauth/token tokens
// from the master key (HKDF-SHA-256). Every process with the same master
// key derives the same key, so tokens outlive restarts and any replica
// verifies what another issued; changing the master key invalidates them.
func DeriveTokenKey(masterKey []byte) (ed25519.PrivateKey, error) {
	if len(masterKey) < 32 {
		return nil, fmt.Errorf("mcpserver: derive token key: master key is %d bytes, want at least 32", len(masterKey))
	}
	seed, err := hkdf.Key(sha256.New, masterKey, nil, tokenKeyInfo, ed25519.SeedSize)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: derive token key: %w", err)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// tokenTTL is the lifetime of an issued token.
const tokenTTL = time.Hour

// tokenClaims are the claims of an /mcp token.
type tokenClaims struct {
	jwt.Claims
	// Workspace is the workspace id in AgentCraft's own tokens; in an
	// outside issuer's tokens, a workspace name (default workspace when
	// absent).
	Workspace string `json:"workspace,omitempty"`
	// Scope is space-separated (RFC 9068); Scp is the array form some
	// identity providers send instead.
	Scope string   `json:"scope,omitempty"`
	Scp   []string `json:"scp,omitempty"`
}

func (c tokenClaims) scopes() []string {
	return append(strings.Fields(c.Scope), c.Scp...)
}

// issuer signs tokens and answers the token endpoint.
type issuer struct {
	key        ed25519.PrivateKey
	jwk        jose.JSONWebKey // public
	signer     jose.Signer
	clientRows store.OAuthClients

	mu      sync.Mutex // guards clients
	clients map[string]clientEntry
}

type clientEntry struct {
	client  store.OAuthClient
	fetched time.Time
}

func newIssuer(key ed25519.PrivateKey, clients store.OAuthClients) (*issuer, error) {
	pub := jose.JSONWebKey{Key: key.Public(), Algorithm: string(jose.EdDSA), Use: "sig"}
	tp, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: token key thumbprint: %w", err)
	}
	pub.KeyID = base64.RawURLEncoding.EncodeToString(tp)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: jose.JSONWebKey{Key: key, KeyID: pub.KeyID}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		return nil, fmt.Errorf("mcpserver: token signer: %w", err)
	}
	return &issuer{key: key, jwk: pub, signer: signer, clientRows: clients, clients: map[string]clientEntry{}}, nil
}

// issue signs a token for client with scopes, for the resource at aud.
func (is *issuer) issue(iss, aud string, c store.OAuthClient, scopes []string, now time.Time) (string, error) {
	var jti [16]byte
	_, _ = rand.Read(jti[:])
	claims := tokenClaims{
		Claims: jwt.Claims{
			Issuer: iss, Subject: c.ID, Audience: jwt.Audience{aud},
			IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(tokenTTL)),
			ID: base64.RawURLEncoding.EncodeToString(jti[:]),
		},
		Workspace: c.WorkspaceID,
		Scope:     strings.Join(scopes, " "),
	}
	return jwt.Signed(is.signer).Claims(claims).Serialize()
}

// clientTTL is how long an OAuth client is answered from memory: as long
// as an API key (`agentcraft mcp clients revoke` promises 30 seconds).
const clientTTL = httpapi.DefaultKeyTTL

// client returns the OAuth client, from memory for clientTTL, so that /mcp
// notices a revocation made by another process within that time.
func (is *issuer) client(ctx context.Context, id string) (store.OAuthClient, error) {
	is.mu.Lock()
	e, ok := is.clients[id]
	is.mu.Unlock()
	if ok && time.Since(e.fetched) <= clientTTL {
		return e.client, nil
	}
	c, err := is.clientRows.Get(ctx, id)
	if err != nil {
		return c, err
	}
	is.mu.Lock()
	if len(is.clients) > 10000 { // bound memory against a flood of ids
		clear(is.clients)
	}
	is.clients[id] = clientEntry{client: c, fetched: time.Now()}
	is.mu.Unlock()
	return c, nil
}

// tokenError is an error answer of the token endpoint (RFC 6749 §5.2).
type tokenError struct {
	status int
	code   string
	desc   string
}

func (e *tokenError) Error() string { return e.code + ": " + e.desc }

func writeTokenError(w http.ResponseWriter, e *tokenError, basic bool) {
	if e.status == http.StatusUnauthorized && basic {
		w.Header().Set("WWW-Authenticate", `Basic realm="agentcraft"`)
	}
	httpapi.WriteJSON(w, e.status, map[string]string{"error": e.code, "error_description": e.desc})
}

// token serves POST /oauth/token.
func (m *Server) token(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		httpapi.WriteJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "invalid_request", "error_description": "use POST"})
		return
	}
	_, basic := r.Header["Authorization"]
	resp, terr := m.grant(r)
	if terr != nil {
		if terr.status >= 500 {
			m.logger.Error("oauth_token_failed", "error", terr.desc)
			terr.desc = "cannot issue a token now; try again"
		}
		writeTokenError(w, terr, basic)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, resp)
}

func (m *Server) grant(r *http.Request) (map[string]any, *tokenError) {
	badRequest := func(code, format string, args ...any) *tokenError {
		return &tokenError{status: http.StatusBadRequest, code: code, desc: fmt.Sprintf(format, args...)}
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "application/x-www-form-urlencoded" {
		return nil, badRequest("invalid_request", "the body must be application/x-www-form-urlencoded, got %q", r.Header.Get("Content-Type"))
	}
	r.Body = http.MaxBytesReader(nil, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		return nil, badRequest("invalid_request", "cannot read the form body: %v", err)
	}
	form := r.PostForm
	for k, v := range form {
		if len(v) > 1 {
			return nil, badRequest("invalid_request", "parameter %s is repeated; send it once", k)
		}
	}
	switch gt := form.Get("grant_type"); gt {
	case "":
		return nil, badRequest("invalid_request", "grant_type is missing; send grant_type=client_credentials")
	case "client_credentials":
	default:
		return nil, badRequest("unsupported_grant_type", "grant_type %q is not supported; this server issues tokens only for grant_type=client_credentials", gt)
	}

	invalidClient := &tokenError{status: http.StatusUnauthorized, code: "invalid_client",
		desc: "client authentication failed: unknown client, wrong secret or revoked client"}
	id, secret, hasBasic := r.BasicAuth()
	if hasBasic {
		// RFC 6749 §2.3.1: both parts are form-urlencoded before base64.
		var err1, err2 error
		id, err1 = url.QueryUnescape(id)
		secret, err2 = url.QueryUnescape(secret)
		if err1 != nil || err2 != nil {
			return nil, invalidClient
		}
		if form.Has("client_secret") {
			return nil, badRequest("invalid_request", "the client authenticated twice (HTTP Basic and client_secret in the body); use one method")
		}
	} else if _, ok := r.Header["Authorization"]; ok {
		return nil, invalidClient
	} else {
		id, secret = form.Get("client_id"), form.Get("client_secret")
	}
	if id == "" || secret == "" {
		return nil, &tokenError{status: http.StatusUnauthorized, code: "invalid_client",
			desc: "no client credentials: send HTTP Basic auth (client_secret_basic) or client_id and client_secret in the body (client_secret_post)"}
	}
	c, err := m.issuer.clientRows.Get(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, invalidClient
	}
	if err != nil {
		return nil, &tokenError{status: http.StatusInternalServerError, code: "server_error", desc: err.Error()}
	}
	h := sha256.Sum256([]byte(secret))
	if subtle.ConstantTimeCompare(h[:], c.SecretHash) != 1 || c.RevokedAt != nil {
		return nil, invalidClient
	}

	scopes := c.Scopes
	if form.Has("scope") {
		requested := strings.Fields(form.Get("scope"))
		if len(requested) == 0 {
			return nil, badRequest("invalid_scope", "scope is empty; leave it out to get all of the client's scopes")
		}
		scopes = nil
		for _, sc := range requested {
			if !slices.Contains(c.Scopes, sc) {
				return nil, badRequest("invalid_scope", "scope %q is not granted to this client; it may ask for: %s", sc, strings.Join(c.Scopes, " "))
			}
			if !slices.Contains(scopes, sc) {
				scopes = append(scopes, sc)
			}
		}
	}
	base := m.base(r)
	tok, err := m.issuer.issue(base, base+mcpPath, c, scopes, time.Now())
	if err != nil {
		return nil, &tokenError{status: http.StatusInternalServerError, code: "server_error", desc: err.Error()}
	}
	return map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(tokenTTL.Seconds()), "scope": strings.Join(scopes, " ")}, nil
}

// serveJWKS serves GET /.well-known/jwks.json.
func (m *Server) serveJWKS(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=300")
	httpapi.WriteJSON(w, http.StatusOK, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{m.issuer.jwk}})
}

// authServerMetadata serves RFC 8414 metadata.
func (m *Server) authServerMetadata(w http.ResponseWriter, r *http.Request) {
	base := m.base(r)
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{
		"issuer":                                base,
		"token_endpoint":                        base + "/oauth/token",
		"jwks_uri":                              base + "/.well-known/jwks.json",
		"grant_types_supported":                 []string{"client_credentials"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
		"response_types_supported":              []string{},
		"scopes_supported":                      scopesSupported,
	})
}

// jwksCache holds the key set of an outside issuer, fetched on first use,
// again after jwksTTL, and when a token names a key it lacks (key
// rotation) but not more than once per jwksMinRefetch.
type jwksCache struct {
	url    string
	client *http.Client

	mu      sync.Mutex // guards set and fetched; held while fetching, so one fetch runs at a time
	set     jose.JSONWebKeySet
	fetched time.Time
}

const (
	jwksTTL        = 5 * time.Minute
	jwksMinRefetch = 10 * time.Second
)

func (c *jwksCache) key(ctx context.Context, kid string) (jose.JSONWebKey, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	find := func() (jose.JSONWebKey, bool) {
		if kid == "" && len(c.set.Keys) == 1 {
			return c.set.Keys[0], true
		}
		if ks := c.set.Key(kid); len(ks) > 0 && kid != "" {
			return ks[0], true
		}
		return jose.JSONWebKey{}, false
	}
	age := time.Since(c.fetched)
	if k, ok := find(); ok && age < jwksTTL {
		return k, nil
	}
	if !c.fetched.IsZero() && age < jwksMinRefetch {
		return jose.JSONWebKey{}, fmt.Errorf("no key %q in the key set of %s", kid, c.url)
	}
	if err := c.fetch(ctx); err != nil {
		return jose.JSONWebKey{}, err
	}
	if k, ok := find(); ok {
		return k, nil
	}
	return jose.JSONWebKey{}, fmt.Errorf("no key %q in the key set of %s", kid, c.url)
}

func (c *jwksCache) fetch(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return fmt.Errorf("fetch key set: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("fetch key set %s: %w", c.url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetch key set %s: status %s", c.url, resp.Status)
	}
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 1<<20)).Decode(&set); err != nil {
		return fmt.Errorf("decode key set %s: %w", c.url, err)
	}
	c.set, c.fetched = set, time.Now()
	return nil
}
