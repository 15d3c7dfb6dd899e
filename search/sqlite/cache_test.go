package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/agentcraftlab/agentcraft/search/searchtest"
	"github.com/agentcraftlab/agentcraft/search/sqlite"
)

// TestPostingsCacheSeesWrites checks that a write between two queries, by
// the same Engine or by a second Engine on the same file, is visible to the
// next query although the first filled the posting cache.
func TestPostingsCacheSeesWrites(t *testing.T) {
	a, b := twoEngines(t)
	searchtest.CacheSeesWrites(t, a, b)
}

// TestPostingsCacheConcurrent searches while another Engine on the same
// file writes (run it with -race).
func TestPostingsCacheConcurrent(t *testing.T) {
	a, b := twoEngines(t)
	searchtest.CacheConcurrent(t, a, b)
}

// twoEngines opens two engines on one new file.
func twoEngines(t *testing.T) (a, b *sqlite.Engine) {
	path := filepath.Join(t.TempDir(), "search.db")
	for _, e := range []**sqlite.Engine{&a, &b} {
		var err error
		if *e, err = sqlite.Open(t.Context(), path, nil); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { (*e).Close() })
	}
	return a, b
}
