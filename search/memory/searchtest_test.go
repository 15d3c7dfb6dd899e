package memory_test

import (
	"testing"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/memory"
	"github.com/agentcraftlab/agentcraft/search/searchtest"
)

func TestConformance(t *testing.T) {
	searchtest.Run(t, func(t *testing.T, emb search.Embedder) search.Engine {
		e, err := memory.New(&memory.Options{Embedder: emb})
		if err != nil {
			t.Fatal(err)
		}
		return e
	})
}
