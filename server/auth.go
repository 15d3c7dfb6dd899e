package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/store"
)

// Open WebUI names its user in these headers when
// ENABLE_FORWARD_USER_INFO_HEADERS is on; usage is attributed to them.
const (
	headerOWUIUserID    = "X-OpenWebUI-User-Id"
	headerOWUIUserName  = "X-OpenWebUI-User-Name"
	headerOWUIUserEmail = "X-OpenWebUI-User-Email"
)

func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var pr platform.Principal
		if s.opts.Auth == AuthNone {
			pr.WorkspaceID = s.p.DefaultWorkspace().ID
		} else {
			token, ok := bearer(r.Header.Get("Authorization"))
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="agentcraft"`)
				apierr.Write(w, &apierr.Error{Status: http.StatusUnauthorized, Type: apierr.TypeAuthentication, Code: "missing_api_key",
					Message: "missing API key: send Authorization: Bearer <key>; create one with `agentcraft keys create --workspace NAME`"})
				return
			}
			k, err := s.keys.lookup(r.Context(), token)
			if err != nil {
				if errors.Is(err, store.ErrNotFound) {
					w.Header().Set("WWW-Authenticate", `Bearer realm="agentcraft", error="invalid_token"`)
					apierr.Write(w, apierr.Unauthorized("invalid API key: it is unknown or revoked"))
					return
				}
				s.logger.Error("api_key_lookup_failed", "error", err)
				apierr.Write(w, &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer, Code: "store_unavailable", Message: "cannot check the API key now; try again"})
				return
			}
			pr.WorkspaceID, pr.APIKeyID = k.WorkspaceID, k.ID
		}
		pr.User = firstNonEmpty(r.Header.Get(headerOWUIUserEmail), r.Header.Get(headerOWUIUserID), r.Header.Get(headerOWUIUserName))
		next.ServeHTTP(w, r.WithContext(platform.WithPrincipal(r.Context(), pr)))
	})
}

func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// keyCache answers API key checks from memory for a short while, so that
// the database is not read on every request, and records key use at most
// once a minute per key. Keys are revoked only with `agentcraft keys
// revoke`, another process, so a revocation takes up to keyTTL to be
// noticed.
type keyCache struct {
	keys   store.APIKeys
	logger *slog.Logger

	mu      sync.Mutex // guards entries and touched
	entries map[[sha256.Size]byte]keyEntry
	touched map[string]time.Time
	wg      sync.WaitGroup
}

type keyEntry struct {
	key     store.APIKey
	fetched time.Time
}

// keyTTL is a variable only so that tests can change it (export_test.go);
// nothing else writes it.
var keyTTL = 30 * time.Second

const touchInterval = time.Minute

func newKeyCache(keys store.APIKeys, logger *slog.Logger) *keyCache {
	return &keyCache{keys: keys, logger: logger, entries: map[[sha256.Size]byte]keyEntry{}, touched: map[string]time.Time{}}
}

func (c *keyCache) lookup(ctx context.Context, token string) (store.APIKey, error) {
	h := sha256.Sum256([]byte(token))
	now := time.Now()
	c.mu.Lock()
	e, ok := c.entries[h]
	c.mu.Unlock()
	if !ok || now.Sub(e.fetched) > keyTTL {
		k, err := c.keys.GetByHash(ctx, h[:])
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
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
