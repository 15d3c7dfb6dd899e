package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/searchtest"
	"github.com/agentcraftlab/agentcraft/search/sqlite"
)

// open returns an engine on a new file in a temporary directory, closed
// when the test ends.
func open(t testing.TB, opts *sqlite.Options) *sqlite.Engine {
	t.Helper()
	e, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "search.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

func TestConformance(t *testing.T) {
	searchtest.Run(t, func(t *testing.T, emb search.Embedder) search.Engine {
		return open(t, &sqlite.Options{Embedder: emb})
	})
}
