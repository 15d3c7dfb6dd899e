package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/postgres"
	"github.com/agentcraftlab/agentcraft/search/searchtest"
)

const dsnEnv = "AGENTCRAFT_TEST_POSTGRES_DSN"

// testDSN returns the test database's DSN or skips t.
func testDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		t.Skipf("PostgreSQL tests skipped: set %s (such as postgres://postgres@127.0.0.1:5432/test?sslmode=disable)", dsnEnv)
	}
	return dsn
}

// freshSchema returns the name of a schema that does not exist yet and is
// dropped, with everything in it, when t ends.
func freshSchema(t testing.TB, dsn string) string {
	t.Helper()
	var b [6]byte
	rand.Read(b[:])
	schema := "s_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

// open returns an engine in a schema of its own, closed (before the schema
// is dropped) when the test ends.
func open(t testing.TB, opts *postgres.Options) *postgres.Engine {
	t.Helper()
	dsn := testDSN(t)
	var o postgres.Options
	if opts != nil {
		o = *opts
	}
	o.Schema = freshSchema(t, dsn)
	if o.MaxConns == 0 {
		o.MaxConns = 4
	}
	e, err := postgres.Open(context.Background(), dsn, &o)
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
	testDSN(t)
	searchtest.Run(t, func(t *testing.T, emb search.Embedder) search.Engine {
		return open(t, &postgres.Options{Embedder: emb})
	})
}
