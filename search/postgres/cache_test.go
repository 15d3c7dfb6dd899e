package postgres_test

import (
	"testing"

	"github.com/agentcraftlab/agentcraft/search/postgres"
	"github.com/agentcraftlab/agentcraft/search/searchtest"
)

// TestPostingsCacheSeesWrites checks that a write between two queries, by
// the same Engine or by a second Engine (another process's pool) on the
// same schema, is visible to the next query although the first filled the
// posting cache.
func TestPostingsCacheSeesWrites(t *testing.T) {
	a, b := twoEngines(t)
	searchtest.CacheSeesWrites(t, a, b)
}

// TestPostingsCacheConcurrent searches while another Engine on the same
// schema writes (run it with -race).
func TestPostingsCacheConcurrent(t *testing.T) {
	a, b := twoEngines(t)
	searchtest.CacheConcurrent(t, a, b)
}

// twoEngines opens two engines, each with its own pool, on one new schema.
func twoEngines(t *testing.T) (a, b *postgres.Engine) {
	dsn := testDSN(t)
	opts := &postgres.Options{Schema: freshSchema(t, dsn), MaxConns: 4}
	for _, e := range []**postgres.Engine{&a, &b} {
		var err error
		if *e, err = postgres.Open(t.Context(), dsn, opts); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { (*e).Close() })
	}
	return a, b
}
