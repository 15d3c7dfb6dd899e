package database_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/internal/database"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want database.URL
	}{
		{"sqlite://./data/agentcraft.db", database.URL{Kind: database.SQLite, Path: "./data/agentcraft.db"}},
		{"sqlite:///var/lib/ac.db", database.URL{Kind: database.SQLite, Path: "/var/lib/ac.db"}},
		{"sqlite://:memory:", database.URL{Kind: database.SQLite, Path: database.MemoryPath}},
		{"sqlite://file::memory:", database.URL{Kind: database.SQLite, Path: database.MemoryPath}},
		{"postgres://u@h/db", database.URL{Kind: database.Postgres, DSN: "postgres://u@h/db"}},
		{"postgresql://u:p@h:5433/db?sslmode=disable", database.URL{Kind: database.Postgres, DSN: "postgresql://u:p@h:5433/db?sslmode=disable"}},
	} {
		got, err := database.Parse(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
	for in, want := range map[string]string{
		"":                         "must start with",
		"mysql://u:secret@h/db":    "must start with",
		"sqlite://":                "names no file",
		"sqlite://a.db?mode=ro":    "without parameters",
		"postgres://h:notaport/db": "database url",
	} {
		_, err := database.Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v; want an error mentioning %q", in, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("Parse(%q) error shows the password: %v", in, err)
		}
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:secret@h/db":      "postgres://u:xxxxx@h/db",
		"postgres://u@h/db":             "postgres://u@h/db",
		"sqlite://./data/agentcraft.db": "sqlite://./data/agentcraft.db",
	} {
		if got := database.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	u, err := database.Parse("postgres://u:secret@h/db")
	if err != nil {
		t.Fatal(err)
	}
	if s := u.String(); strings.Contains(s, "secret") {
		t.Errorf("URL.String() = %q shows the password", s)
	}
}

// TestOpenSQLite: one file, created private, a writer of one connection
// and query_only readers that see its writes; Close removes a MemoryPath
// file.
func TestOpenSQLite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "agentcraft.db")
	db, err := database.OpenSQLite(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if !db.Created() || db.Kind() != database.SQLite || db.Path() != path {
		t.Errorf("Created %v Kind %v Path %q", db.Created(), db.Kind(), db.Path())
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode: %v %v", fi, err)
	}
	if got := db.Writer().Stats().MaxOpenConnections; got != 1 {
		t.Errorf("writer holds %d connections, want 1", got)
	}
	if _, err := db.Writer().ExecContext(ctx, `CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	var x int
	if err := db.Reader().QueryRowContext(ctx, `SELECT x FROM t`).Scan(&x); err != nil || x != 7 {
		t.Errorf("reader: %d, %v", x, err)
	}
	if _, err := db.Reader().ExecContext(ctx, `INSERT INTO t VALUES (8)`); err == nil {
		t.Error("a reader wrote")
	}
	var mode string
	if err := db.Writer().QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode %q, %v", mode, err)
	}
	db.Close()
	again, err := database.OpenSQLite(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.Created() {
		t.Error("Created on an existing file")
	}
	again.Close()

	mem, err := database.OpenSQLite(ctx, database.MemoryPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	file := mem.Path()
	if err := mem.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("%s left behind: %v", file, err)
	}
	if _, err := database.OpenSQLite(ctx, path, &database.Options{Schema: "s"}); err == nil {
		t.Error("Schema on SQLite accepted")
	}
}

func TestOpenPostgres(t *testing.T) {
	dsn := os.Getenv("AGENTCRAFT_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("set AGENTCRAFT_TEST_POSTGRES_DSN to run on PostgreSQL")
	}
	ctx := context.Background()
	db, err := database.OpenPostgres(ctx, dsn, &database.Options{Schema: "db_test_schema"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := db.Pool().Config().MaxConns; got != 16 {
		t.Errorf("pool of %d connections, want the default 16", got)
	}
	var path string
	if err := db.Pool().QueryRow(ctx, `SHOW search_path`).Scan(&path); err != nil || !strings.Contains(path, "db_test_schema") {
		t.Errorf("search_path %q, %v", path, err)
	}
	if _, err := database.OpenPostgres(ctx, dsn, &database.Options{Schema: "x; DROP TABLE y"}); err == nil {
		t.Error("a schema that is not an identifier was accepted")
	}
}

// FuzzParse: any database.url either parses into a URL of a known kind or
// fails with an error; it never panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"sqlite://./a.db", "sqlite://:memory:", "postgres://u:p@h/db?sslmode=disable", "postgresql://", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := database.Parse(s)
		if err != nil {
			return
		}
		switch u.Kind {
		case database.SQLite:
			if u.Path == "" {
				t.Errorf("Parse(%q): SQLite with no path", s)
			}
		case database.Postgres:
			if u.DSN != s {
				t.Errorf("Parse(%q): DSN %q", s, u.DSN)
			}
		default:
			t.Errorf("Parse(%q): kind %v", s, u.Kind)
		}
		_ = u.String()
	})
}
