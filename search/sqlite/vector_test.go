package sqlite_test

import (
	"testing"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/searchtest"
	"github.com/agentcraftlab/agentcraft/search/sqlite"
)

// TestVectorFilterWidens checks that a filtered vector query widens its
// candidate take until it has k hits (see searchtest.VectorFilterWidens).
func TestVectorFilterWidens(t *testing.T) {
	searchtest.VectorFilterWidens(t, func(t *testing.T, emb search.Embedder) search.Engine {
		return open(t, &sqlite.Options{Embedder: emb})
	})
}
