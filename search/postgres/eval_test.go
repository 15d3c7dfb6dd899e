package postgres_test

import (
	"testing"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/searchtest"
)

// TestQuality measures BM25 on the test collections against memory; it
// needs AGENTCRAFT_IR_DATA.
func TestQuality(t *testing.T) {
	searchtest.Quality(t, "postgres", func(t *testing.T) search.Engine { return open(t, nil) })
}
