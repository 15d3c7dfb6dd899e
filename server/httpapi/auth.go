package httpapi

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/store"
)

// Authentication modes (AuthOptions.Mode).
const (
	// AuthAPIKey requires Authorization: Bearer <key> on every call.
	AuthAPIKey = "apikey"
	// AuthNone serves every request as the default workspace. Only for
	// trusted private networks.
	AuthNone = "none"
)

// DefaultKeyTTL is how long a checked API key is answered from memory
// unless AuthOptions.KeyTTL says otherwise.
const DefaultKeyTTL = 30 * time.Second

// Open WebUI names its user in these headers when
// ENABLE_FORWARD_USER_INFO_HEADERS is on; usage is attributed to them.
const (
	headerOWUIUserID    = "X-OpenWebUI-User-Id"
	headerOWUIUserName  = "X-OpenWebUI-User-Name"
	headerOWUIUserEmail = "X-OpenWebUI-User-Email"
)

// SessionCookie is the browser session's cookie; CSRFHeader carries the
// session's CSRF token on every state-changing cookie-authenticated call;
// WorkspaceHeader names the workspace (id or name) a session's call is
// for (default: the user's first workspace).
const (
	SessionCookie   = "agentcraft_session"
	CSRFHeader      = "X-CSRF-Token"
	WorkspaceHeader = "X-Workspace"
)

// Access says what credential a route needs.
type Access int

const (
	// AccessWorkspace (the zero value) needs an API key or a session and
	// the route's Permission in the workspace the call is for.
	AccessWorkspace Access = iota
	// AccessUser needs a person: a browser session, or an API key acting
	// for a user. No workspace is involved (GET /api/me).
	AccessUser
	// AccessPublic needs nothing (sign-in, OIDC callbacks, links).
	AccessPublic
)

func (a Access) String() string {
	switch a {
	case AccessUser:
		return "user"
	case AccessPublic:
		return "public"
	}
	return "workspace"
}

// Route is one entry of the API's route table: the pattern, who may call
// it and the handler. Every route the server serves is one, so that a test
// can walk them all.
type Route struct {
	Pattern    string
	Access     Access
	Permission identity.Permission
	Handler    http.Handler
}

// AuthOptions configure an Authenticator.
type AuthOptions struct {
	// Mode is AuthAPIKey (default) or AuthNone.
	Mode string
	// KeyTTL is how long a checked key is answered from memory, so that
	// the database is not read on every request. Keys are revoked with
	// `agentcraft keys revoke`, another process, so a revocation takes up
	// to KeyTTL to be noticed. Default DefaultKeyTTL; negative: every
	// request reads the store.
	KeyTTL time.Duration
	// Identity signs browser sessions in (the agentcraft_session cookie)
	// and resolves members' roles. Nil: API keys only.
	Identity *identity.Service
	// Logger receives store failures. Default: discard.
	Logger *slog.Logger
}

// Authenticator resolves the caller of a request — an API key, a browser
// session, or (with AuthNone) the default workspace's owner — and checks
// the permission of the route it calls.
type Authenticator struct {
	p      *platform.Platform
	mode   string
	ids    *identity.Service
	logger *slog.Logger
	keys   *keyCache
}

// NewAuthenticator returns an Authenticator over p's API keys. Stop it to
// wait for its bookkeeping of key use.
func NewAuthenticator(p *platform.Platform, opts *AuthOptions) *Authenticator {
	var o AuthOptions
	if opts != nil {
		o = *opts
	}
	if o.Mode == "" {
		o.Mode = AuthAPIKey
	}
	if o.KeyTTL == 0 {
		o.KeyTTL = DefaultKeyTTL
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	var members memberStore
	if o.Identity != nil {
		members = o.Identity
	}
	return &Authenticator{p: p, mode: o.Mode, ids: o.Identity, logger: o.Logger,
		keys: newKeyCache(p.APIKeys(), members, o.KeyTTL, o.Logger)}
}

// Identity is the identity service sessions are checked with; nil when
// only API keys are accepted.
func (a *Authenticator) Identity() *identity.Service { return a.ids }

// Authenticate is Require with AccessWorkspace and no permission beyond
// being a caller of the workspace (PermRead): middleware for handlers that
// check further permissions themselves.
func (a *Authenticator) Authenticate(next http.Handler) http.Handler {
	return a.Require(Route{Access: AccessWorkspace, Permission: identity.PermRead, Handler: next})
}

// Require wraps rt.Handler so that it runs only for a caller rt.Access
// admits holding rt.Permission, with the caller as the request's
// platform.Principal. Refusals: 401 without a valid credential (missing
// or unknown key, no or expired session), 403 naming what is missing
// (the permission, a CSRF token, membership of the workspace asked for),
// 503 when the store cannot be read.
func (a *Authenticator) Require(rt Route) http.Handler {
	next := rt.Handler
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt.Access == AccessPublic {
			next.ServeHTTP(w, r)
			return
		}
		pr, err := a.principal(r, rt)
		if err != nil {
			a.refuse(w, err)
			return
		}
		pr.User = firstNonEmpty(r.Header.Get(headerOWUIUserEmail), r.Header.Get(headerOWUIUserID), r.Header.Get(headerOWUIUserName))
		next.ServeHTTP(w, r.WithContext(platform.WithPrincipal(r.Context(), pr)))
	})
}

// Refusals of principal, which refuse maps to answers.
type (
	unauthorized struct{ code, msg string }
	forbidden    struct{ code, msg string }
)

func (e unauthorized) Error() string { return e.msg }
func (e forbidden) Error() string    { return e.msg }

func (a *Authenticator) refuse(w http.ResponseWriter, err error) {
	var ue unauthorized
	var fe forbidden
	var pe *identity.PermissionError
	switch {
	case errors.As(err, &ue):
		w.Header().Set("WWW-Authenticate", `Bearer realm="agentcraft"`)
		apierr.Write(w, &apierr.Error{Status: http.StatusUnauthorized, Type: apierr.TypeAuthentication, Code: ue.code, Message: ue.msg})
	case errors.As(err, &fe):
		apierr.Write(w, &apierr.Error{Status: http.StatusForbidden, Type: apierr.TypePermission, Code: fe.code, Message: fe.msg})
	case errors.As(err, &pe):
		apierr.Write(w, &apierr.Error{Status: http.StatusForbidden, Type: apierr.TypePermission, Code: "permission_denied",
			Param: string(pe.Permission), Message: strings.TrimPrefix(pe.Error(), "identity: ")})
	default:
		a.logger.Error("auth_check_failed", "error", err)
		apierr.Write(w, &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer, Code: "store_unavailable", Message: "cannot check the credentials now; try again"})
	}
}

// principal resolves the caller of r and checks rt's access.
func (a *Authenticator) principal(r *http.Request, rt Route) (platform.Principal, error) {
	ctx := r.Context()
	// Without authentication every workspace call is the default
	// workspace's owner; a call for a person still needs one.
	if a.mode == AuthNone && rt.Access != AccessUser {
		ws := a.p.DefaultWorkspace()
		return platform.Principal{WorkspaceID: ws.ID, Role: identity.RoleOwner}, nil
	}
	if h := r.Header.Get("Authorization"); h != "" {
		return a.keyPrincipal(r, rt, h)
	}
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" || a.ids == nil {
		return platform.Principal{}, unauthorized{"missing_api_key",
			"missing credentials: send Authorization: Bearer <key> (create one with `agentcraft keys create --workspace NAME`) or sign in (POST /api/auth/login)"}
	}
	auth, err := a.ids.Authenticate(ctx, c.Value)
	if errors.Is(err, identity.ErrUnauthenticated) {
		return platform.Principal{}, unauthorized{"session_expired", "not signed in, or the session has expired or was signed out; sign in again"}
	}
	if err != nil {
		return platform.Principal{}, err
	}
	if !safeMethod(r.Method) && !identity.CheckCSRF(auth.Session, r.Header.Get(CSRFHeader)) {
		return platform.Principal{}, forbidden{"csrf_token_invalid",
			"missing or wrong " + CSRFHeader + " header: a signed-in browser sends the csrf_token it got at sign-in with every " + r.Method}
	}
	pr := platform.Principal{UserID: auth.User.ID}
	if rt.Access == AccessUser {
		return pr, nil
	}
	ws, role, err := a.memberWorkspace(r, auth.User.ID)
	if err != nil {
		return platform.Principal{}, err
	}
	pr.WorkspaceID, pr.Role = ws, role
	return pr, identity.Grant{Role: role}.Check(rt.Permission)
}

// memberWorkspace is the workspace a session's call is for — the path's
// {workspace}, else the X-Workspace header, else the user's first — and
// the user's role in it. A workspace the user is not a member of is
// refused alike whether it exists or not.
func (a *Authenticator) memberWorkspace(r *http.Request, userID string) (string, identity.Role, error) {
	ctx := r.Context()
	want := firstNonEmpty(r.PathValue("workspace"), r.Header.Get(WorkspaceHeader))
	if want == "" {
		ms, err := a.ids.Memberships(ctx, userID)
		if err != nil {
			return "", "", err
		}
		if len(ms) == 0 {
			return "", "", forbidden{"no_workspace", "you are a member of no workspace: ask for an invitation, or create one with POST /api/workspaces"}
		}
		return ms[0].Workspace.ID, ms[0].Role, nil
	}
	ws, err := a.lookupWorkspace(ctx, want)
	if err == nil {
		var g identity.Grant
		g, err = a.ids.GrantOf(ctx, ws.ID, userID)
		if err == nil {
			return ws.ID, g.Role, nil
		}
	}
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, identity.ErrNotMember) {
		return "", "", forbidden{"not_a_member", fmt.Sprintf("you are not a member of workspace %q", want)}
	}
	return "", "", err
}

func (a *Authenticator) lookupWorkspace(ctx context.Context, idOrName string) (store.Workspace, error) {
	ws, err := a.p.Workspace(ctx, idOrName)
	if errors.Is(err, store.ErrNotFound) {
		ws, err = a.p.WorkspaceByName(ctx, idOrName)
	}
	return ws, err
}

// keyPrincipal checks the API key of the Authorization header h.
func (a *Authenticator) keyPrincipal(r *http.Request, rt Route, h string) (platform.Principal, error) {
	token, ok := Bearer(h)
	if !ok {
		return platform.Principal{}, unauthorized{"missing_api_key", "the Authorization header is not \"Bearer <key>\""}
	}
	k, err := a.keys.lookup(r.Context(), token)
	if errors.Is(err, store.ErrNotFound) {
		return platform.Principal{}, unauthorized{"invalid_api_key", "invalid API key: it is unknown or revoked"}
	}
	if errors.Is(err, identity.ErrNotMember) {
		return platform.Principal{}, unauthorized{"invalid_api_key", "invalid API key: the user it acts for is no longer a member of its workspace"}
	}
	if err != nil {
		return platform.Principal{}, err
	}
	pr := platform.Principal{WorkspaceID: k.WorkspaceID, APIKeyID: k.ID, UserID: k.UserID, Role: k.Role, Scope: k.Scope}
	if rt.Access == AccessUser {
		if k.UserID == "" {
			return platform.Principal{}, forbidden{"user_required", "this call is for a person: sign in, or use an API key made by a signed-in user"}
		}
		pr.WorkspaceID, pr.Role, pr.Scope = "", "", ""
		return pr, nil
	}
	if want := firstNonEmpty(r.PathValue("workspace"), r.Header.Get(WorkspaceHeader)); want != "" && want != k.WorkspaceID {
		ws, err := a.lookupWorkspace(r.Context(), want)
		if err != nil || ws.ID != k.WorkspaceID {
			return platform.Principal{}, forbidden{"wrong_workspace", fmt.Sprintf("this API key belongs to another workspace than %q; use a key of that workspace", want)}
		}
	}
	return pr, identity.Grant{Role: k.Role, Scope: k.Scope}.Check(rt.Permission)
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// ForgetKey drops the key with id from the cache of checked keys, so that
// a key revoked through this process is refused at its next request
// rather than up to KeyTTL later. A revocation elsewhere (`agentcraft keys
// revoke`, another replica) still waits for KeyTTL.
func (a *Authenticator) ForgetKey(id string) { a.keys.forget(id) }

// Stop waits for the background bookkeeping of key use. Idempotent.
func (a *Authenticator) Stop() { a.keys.stop() }

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// keyStore is what keyCache needs of store.APIKeys.
type keyStore interface {
	GetByHash(ctx context.Context, hash []byte) (store.APIKey, error)
	Touch(ctx context.Context, workspaceID, id string, at time.Time) error
}

// memberStore is what keyCache needs to cap a user's key at the user's
// role.
type memberStore interface {
	GrantOf(ctx context.Context, workspaceID, userID string) (identity.Grant, error)
}

// keyCache answers API key checks from memory for ttl, and records key
// use at most once a minute per key. A key acting for a user holds at
// most the user's current role in the key's workspace, and nothing once
// the user has left it: demoting a person demotes their keys.
type keyCache struct {
	keys    keyStore
	members memberStore
	ttl     time.Duration
	logger  *slog.Logger
	now     func() time.Time

	mu      sync.Mutex // guards entries and touched
	entries map[[sha256.Size]byte]keyEntry
	touched map[string]time.Time
	wg      sync.WaitGroup
}

type keyEntry struct {
	key     store.APIKey
	fetched time.Time
}

const touchInterval = time.Minute

func newKeyCache(keys keyStore, members memberStore, ttl time.Duration, logger *slog.Logger) *keyCache {
	return &keyCache{keys: keys, members: members, ttl: ttl, logger: logger, now: time.Now,
		entries: map[[sha256.Size]byte]keyEntry{}, touched: map[string]time.Time{}}
}

func (c *keyCache) lookup(ctx context.Context, token string) (store.APIKey, error) {
	h := sha256.Sum256([]byte(token))
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[h]
	c.mu.Unlock()
	if !ok || c.ttl < 0 || now.Sub(e.fetched) > c.ttl {
		k, err := c.keys.GetByHash(ctx, h[:])
		if err == nil && k.UserID != "" && c.members != nil {
			var g identity.Grant
			if g, err = c.members.GrantOf(ctx, k.WorkspaceID, k.UserID); err == nil && g.Role.Rank() < k.Role.Rank() {
				k.Role = g.Role
			}
		}
		if err != nil {
			if errors.Is(err, store.ErrNotFound) || errors.Is(err, identity.ErrNotMember) {
				// A refused key must not come back from the cache.
				c.mu.Lock()
				delete(c.entries, h)
				c.mu.Unlock()
			}
			return store.APIKey{}, err
		}
		e = keyEntry{key: k, fetched: now}
		c.mu.Lock()
		c.entries[h] = e
		c.mu.Unlock()
	}
	c.touch(e.key, now)
	return e.key, nil
}

// touch records key use in the background, at most once per interval.
func (c *keyCache) touch(k store.APIKey, now time.Time) {
	c.mu.Lock()
	last := c.touched[k.ID]
	due := now.Sub(last) >= touchInterval
	if due {
		c.touched[k.ID] = now
	}
	c.mu.Unlock()
	if !due {
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := c.keys.Touch(ctx, k.WorkspaceID, k.ID, now); err != nil {
			c.logger.Warn("api_key_touch_failed", "workspace_id", k.WorkspaceID, "error", err)
		}
	}()
}

// forget drops every cached entry of the key with id (one, unless the
// hash somehow changed).
func (c *keyCache) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for h, e := range c.entries {
		if e.key.ID == id {
			delete(c.entries, h)
		}
	}
}

func (c *keyCache) stop() { c.wg.Wait() }
