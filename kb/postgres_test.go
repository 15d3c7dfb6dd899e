package kb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/internal/database"
	"github.com/agentcraftlab/agentcraft/search"
	pgsearch "github.com/agentcraftlab/agentcraft/search/postgres"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/postgres"
)

// TestPostgres runs the service on a PostgreSQL store and search engine
// sharing one database handle, as serve wires them, in a schema of their
// own (named by search_path in the URL, as an operator would).
func TestPostgres(t *testing.T) {
	dsn := os.Getenv("AGENTCRAFT_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("PostgreSQL tests skipped: set AGENTCRAFT_TEST_POSTGRES_DSN (such as postgres://postgres@127.0.0.1:5432/test?sslmode=disable)")
	}
	ctx := context.Background()
	var b [6]byte
	rand.Read(b[:])
	schema := "kbtest_" + hex.EncodeToString(b[:])
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) }) // after the drop below
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := conn.Exec(context.Background(), `DROP SCHEMA `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	url := dsn + sep + "search_path=" + schema

	db, err := database.OpenPostgres(ctx, url, &database.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := postgres.New(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pgsearch.Migrate(ctx, db, nil); err != nil {
		t.Fatal(err)
	}
	eng, err := pgsearch.New(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := New(Options{Store: st, Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := st.Workspaces().GetOrCreate(ctx, "team")
	if err != nil {
		t.Fatal(err)
	}
	base, err := svc.Create(ctx, ws.ID, "docs", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Ingest(ctx, base, "a.txt", []byte(longText("herons", 150))); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Ingest(ctx, base, "a.txt", []byte("Storks migrate to Africa.")); err != nil {
		t.Fatal(err)
	}
	res, err := svc.Search(ctx, ws.ID, []string{"docs"}, search.Query{Text: "herons storks"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	if !slices.Equal(ids, []string{"a.txt#0"}) {
		t.Errorf("after re-ingest: %v, want [a.txt#0]", ids)
	}
	if err := svc.Delete(ctx, ws.ID, "docs"); err != nil {
		t.Fatal(err)
	}
	if n, err := eng.Len(ctx, base.IndexName); err != nil || n != 0 {
		t.Errorf("index after Delete: %d documents, %v", n, err)
	}
	if _, err := svc.Resolve(ctx, ws.ID, "docs"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Resolve after Delete: %v", err)
	}
}
