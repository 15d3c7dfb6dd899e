package httpapi

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

// fakeKeys is a store of API keys that counts its reads.
type fakeKeys struct {
	mu      sync.Mutex // guards all fields
	keys    map[[sha256.Size]byte]store.APIKey
	reads   int
	touches int
}

func (f *fakeKeys) GetByHash(_ context.Context, hash []byte) (store.APIKey, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	k, ok := f.keys[[sha256.Size]byte(hash)]
	if !ok {
		return store.APIKey{}, store.ErrNotFound
	}
	return k, nil
}

func (f *fakeKeys) Touch(context.Context, string, string, time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.touches++
	return nil
}

func (f *fakeKeys) counts() (reads, touches int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads, f.touches
}

// TestKeyCacheRevocation: within the key lifetime a revoked key is still
// answered from memory (the revocation is another process's store
// write); after it the key is refused, and a refused key never comes back
// from the cache.
func TestKeyCacheRevocation(t *testing.T) {
	const token = "ac_test"
	h := sha256.Sum256([]byte(token))
	keys := &fakeKeys{keys: map[[sha256.Size]byte]store.APIKey{h: {ID: "k1", WorkspaceID: "w1"}}}
	c := newKeyCache(keys, nil, time.Hour, slog.New(slog.DiscardHandler))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start
	c.now = func() time.Time { return now }
	ctx := context.Background()

	if k, err := c.lookup(ctx, token); err != nil || k.ID != "k1" {
		t.Fatalf("lookup = %+v, %v", k, err)
	}
	keys.mu.Lock()
	delete(keys.keys, h) // revoked elsewhere
	keys.mu.Unlock()
	now = start.Add(59 * time.Minute)
	if _, err := c.lookup(ctx, token); err != nil {
		t.Fatalf("lookup within the lifetime = %v, want the cached key", err)
	}
	if reads, _ := keys.counts(); reads != 1 {
		t.Errorf("store reads within the lifetime = %d, want 1", reads)
	}
	now = start.Add(61 * time.Minute)
	if _, err := c.lookup(ctx, token); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("lookup after the lifetime = %v, want ErrNotFound", err)
	}
	// Even at a time when the old entry would still be fresh, the refused
	// key is read again and refused.
	now = start
	if _, err := c.lookup(ctx, token); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("lookup after a refusal = %v, want ErrNotFound", err)
	}
	c.stop()
}

// TestKeyCacheNegativeTTL: a negative lifetime reads the store on every
// request; key use is still recorded once a minute at most.
func TestKeyCacheNegativeTTL(t *testing.T) {
	const token = "ac_test"
	keys := &fakeKeys{keys: map[[sha256.Size]byte]store.APIKey{sha256.Sum256([]byte(token)): {ID: "k1", WorkspaceID: "w1"}}}
	c := newKeyCache(keys, nil, -1, slog.New(slog.DiscardHandler))
	for range 3 {
		if _, err := c.lookup(context.Background(), token); err != nil {
			t.Fatal(err)
		}
	}
	c.stop()
	if reads, touches := keys.counts(); reads != 3 || touches != 1 {
		t.Errorf("store reads = %d, key use recorded %d times; want 3 and 1", reads, touches)
	}
}
