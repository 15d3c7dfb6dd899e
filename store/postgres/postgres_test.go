package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/postgres"
	"github.com/agentcraftlab/agentcraft/store/storetest"
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
	schema := "storetest_" + hex.EncodeToString(b[:])
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

// openStore opens and migrates a store in a schema of its own.
func openStore(t testing.TB) *postgres.Store {
	t.Helper()
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	st, err := postgres.Open(context.Background(), dsn, &postgres.Options{Schema: schema, MaxConns: 8})
	if err != nil {
		t.Fatalf("Open = %v", err)
	}
	t.Cleanup(func() { st.Close() }) // registered after the schema drop, so it runs first
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate = %v", err)
	}
	return st
}

func TestConformance(t *testing.T) {
	testDSN(t)
	storetest.Run(t, func(t *testing.T) store.Store { return openStore(t) })
}

// TestConcurrentMigrate is several processes starting at once: the
// advisory lock makes them migrate one after the other, and all succeed.
func TestConcurrentMigrate(t *testing.T) {
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			st, err := postgres.Open(t.Context(), dsn, &postgres.Options{Schema: schema})
			if err != nil {
				errs <- err
				return
			}
			defer st.Close()
			if err := st.Migrate(t.Context()); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestSchemaIsolation checks that Options.Schema keeps two installations in
// one database apart.
func TestSchemaIsolation(t *testing.T) {
	st1, st2 := openStore(t), openStore(t)
	if _, err := st1.Workspaces().Create(t.Context(), store.Workspace{Name: "only-in-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st2.Workspaces().GetByName(t.Context(), "only-in-1"); err == nil {
		t.Error("a workspace created in one schema is visible from another")
	}
	if _, err := st2.Workspaces().Create(t.Context(), store.Workspace{Name: "only-in-1"}); err != nil {
		t.Errorf("same name in another schema = %v, want success", err)
	}
}

func TestOpenErrors(t *testing.T) {
	for _, schema := range []string{"a-b", "x; DROP TABLE y", "1abc", `"quoted"`} {
		if _, err := postgres.Open(t.Context(), "postgres://u@127.0.0.1:1/db", &postgres.Options{Schema: schema}); err == nil {
			t.Errorf("Open(schema %q) = nil error, want one naming the schema", schema)
		}
	}
	if _, err := postgres.Open(t.Context(), "postgres://u:secretpw@127.0.0.1:1/db?connect_timeout=1", nil); err == nil {
		t.Error("Open(nothing listening) = nil error")
	} else if strings.Contains(err.Error(), "secretpw") {
		t.Errorf("Open error leaks the password: %v", err)
	}
}

func TestSourcesMigration(t *testing.T) {
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	ctx := context.Background()
	st, err := postgres.Open(ctx, dsn, &postgres.Options{Schema: schema, MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.MigrateTo(ctx, storetest.SourcesMigrationVersion); err != nil {
		t.Fatal(err)
	}
	storetest.SourcesMigration(t, st, st.Migrate, func(ctx context.Context) error {
		return st.MigrateDownTo(ctx, storetest.SourcesMigrationVersion)
	})
}
