package httpapi

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

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
	// Logger receives store failures. Default: discard.
	Logger *slog.Logger
}

// Authenticator resolves the caller of a request from its API key (or,
// with AuthNone, makes it the default workspace) and hands it to the next
// handler as a platform.Principal.
type Authenticator struct {
	p      *platform.Platform
	mode   string
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
	return &Authenticator{p: p, mode: o.Mode, logger: o.Logger, keys: newKeyCache(p.APIKeys(), o.KeyTTL, o.Logger)}
}

// Authenticate is middleware: it answers 401 (or 503 when the store
// cannot be read) unless the request carries a live API key, and serves
// next with the key's principal in the request context.
func (a *Authenticator) Authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var pr platform.Principal
		if a.mode == AuthNone {
			pr.WorkspaceID = a.p.DefaultWorkspace().ID
		} else {
			token, ok := Bearer(r.Header.Get("Authorization"))
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="agentcraft"`)
				apierr.Write(w, &apierr.Error{Status: http.StatusUnauthorized, Type: apierr.TypeAuthentication, Code: "missing_api_key",
					Message: "missing API key: send Authorization: Bearer <key>; create one with `agentcraft keys create --workspace NAME`"})
				return
			}
			k, err := a.keys.lookup(r.Context(), token)
			if err != nil {
				if errors.Is(err, store.ErrNotFound) {
					w.Header().Set("WWW-Authenticate", `Bearer realm="agentcraft", error="invalid_token"`)
					apierr.Write(w, apierr.Unauthorized("invalid API key: it is unknown or revoked"))
					return
				}
				a.logger.Error("api_key_lookup_failed", "error", err)
				apierr.Write(w, &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer, Code: "store_unavailable", Message: "cannot check the API key now; try again"})
				return
			}
			pr.WorkspaceID, pr.APIKeyID = k.WorkspaceID, k.ID
		}
		pr.User = firstNonEmpty(r.Header.Get(headerOWUIUserEmail), r.Header.Get(headerOWUIUserID), r.Header.Get(headerOWUIUserName))
		next.ServeHTTP(w, r.WithContext(platform.WithPrincipal(r.Context(), pr)))
	})
}

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

// keyCache answers API key checks from memory for ttl, and records key
// use at most once a minute per key.
type keyCache struct {
	keys   keyStore
	ttl    time.Duration
	logger *slog.Logger
	now    func() time.Time

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

func newKeyCache(keys keyStore, ttl time.Duration, logger *slog.Logger) *keyCache {
	return &keyCache{keys: keys, ttl: ttl, logger: logger, now: time.Now,
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
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
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

func (c *keyCache) stop() { c.wg.Wait() }
