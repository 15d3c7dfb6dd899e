package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/agentcraftlab/agentcraft/secret"
	"github.com/agentcraftlab/agentcraft/store"
)

// credentials hands out provider keys stored with POST /api/credentials.
// It caches ciphertext only: a key is decrypted for the request that needs
// it and never kept in clear beyond that request.
type credentials struct {
	store store.Credentials
	box   *secret.Box

	mu    sync.Mutex // guards cache
	cache map[string]cachedCredential
}

type cachedCredential struct {
	ciphertext []byte // nil: no credential stored
	fetched    time.Time
}

// credentialTTL bounds how long another process's credential change may go
// unnoticed.
const credentialTTL = 10 * time.Second

func newCredentials(s store.Credentials, box *secret.Box) *credentials {
	return &credentials{store: s, box: box, cache: map[string]cachedCredential{}}
}

// associatedData binds a ciphertext to its workspace and provider, so a
// sealed key copied onto another row does not decrypt.
func associatedData(workspaceID, provider string) []byte {
	return secret.Bind("agentcraft/credential/v1", workspaceID, provider)
}

// put seals and stores key.
func (c *credentials) put(ctx context.Context, workspaceID, provider, key string) error {
	ct, err := c.box.Seal([]byte(key), associatedData(workspaceID, provider))
	if err != nil {
		return fmt.Errorf("seal credential: %w", err)
	}
	if _, err := c.store.Put(ctx, store.Credential{WorkspaceID: workspaceID, Provider: provider, Ciphertext: ct, KeyID: c.box.KeyID()}); err != nil {
		return err
	}
	c.mu.Lock()
	delete(c.cache, workspaceID+"\x00"+provider)
	c.mu.Unlock()
	return nil
}

// remove deletes the stored key.
func (c *credentials) remove(ctx context.Context, workspaceID, provider string) error {
	if err := c.store.Delete(ctx, workspaceID, provider); err != nil {
		return err
	}
	c.mu.Lock()
	delete(c.cache, workspaceID+"\x00"+provider)
	c.mu.Unlock()
	return nil
}

func (c *credentials) ciphertext(ctx context.Context, workspaceID, provider string) ([]byte, error) {
	k := workspaceID + "\x00" + provider
	c.mu.Lock()
	e, ok := c.cache[k]
	c.mu.Unlock()
	if ok && time.Since(e.fetched) < credentialTTL {
		return e.ciphertext, nil
	}
	row, err := c.store.Get(ctx, workspaceID, provider)
	switch {
	case errors.Is(err, store.ErrNotFound):
		row.Ciphertext = nil
	case err != nil:
		return nil, err
	}
	c.mu.Lock()
	c.cache[k] = cachedCredential{ciphertext: row.Ciphertext, fetched: time.Now()}
	c.mu.Unlock()
	return row.Ciphertext, nil
}

// key returns the clear key, "" when none is stored.
func (c *credentials) key(ctx context.Context, workspaceID, provider string) (string, error) {
	ct, err := c.ciphertext(ctx, workspaceID, provider)
	if err != nil || ct == nil {
		return "", err
	}
	pt, err := c.box.Open(ct, associatedData(workspaceID, provider))
	if err != nil {
		return "", fmt.Errorf("open credential of provider %q: %w", provider, err)
	}
	return string(pt), nil
}

func (c *credentials) has(ctx context.Context, workspaceID, provider string) bool {
	ct, err := c.ciphertext(ctx, workspaceID, provider)
	return err == nil && ct != nil
}

// credentialTransport adds a workspace's stored key to each upstream
// request of a provider configured without a key. The workspace is bound
// when the adapter is built (adapters.forWorkspace); the key is decrypted
// for each request and sent the way the provider's API documents:
// Anthropic's API takes API keys in x-api-key, OpenAI and every
// OpenAI-compatible server in Authorization: Bearer.
type credentialTransport struct {
	base        http.RoundTripper
	provider    string
	typ         string
	workspaceID string // "": none bound, send no stored key
	creds       *credentials
}

func (t *credentialTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.workspaceID == "" {
		return t.base.RoundTrip(req)
	}
	key, err := t.creds.key(req.Context(), t.workspaceID, t.provider)
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	if key == "" {
		return t.base.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	if t.typ == "anthropic" {
		req.Header.Del("Authorization")
		req.Header.Set("X-Api-Key", key)
	} else {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return t.base.RoundTrip(req)
}
