package metrics

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/internal/database"
	"github.com/agentcraftlab/agentcraft/queue"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/postgres"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
)

// dbBackend is a migrated database (store and River tables) with its store,
// and the SQL that moves every available job's scheduled_at an hour back.
type dbBackend struct {
	db       *database.DB
	st       store.Store
	hourBack string
}

func sqliteBackend(t testing.TB) dbBackend {
	t.Helper()
	ctx := context.Background()
	db, err := database.OpenSQLite(ctx, filepath.Join(t.TempDir(), "agentcraft.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st, err := sqlite.New(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := queue.Migrate(ctx, db, ""); err != nil {
		t.Fatal(err)
	}
	return dbBackend{db: db, st: st, hourBack: `UPDATE river_job SET scheduled_at = datetime('now', '-3600 seconds', 'subsec') WHERE state = 'available'`}
}

func postgresBackend(t *testing.T) dbBackend {
	t.Helper()
	dsn := os.Getenv("AGENTCRAFT_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("AGENTCRAFT_TEST_POSTGRES_DSN is unset; set it to a PostgreSQL URL to run this variant")
	}
	ctx := context.Background()
	b := make([]byte, 6)
	rand.Read(b)
	schema := "m_" + hex.EncodeToString(b)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect to AGENTCRAFT_TEST_POSTGRES_DSN: %v", err)
	}
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	db, err := database.OpenPostgres(ctx, dsn, &database.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st, err := postgres.New(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := queue.Migrate(ctx, db, ""); err != nil {
		t.Fatal(err)
	}
	return dbBackend{db: db, st: st, hourBack: `UPDATE river_job SET scheduled_at = now() - interval '1 hour' WHERE state = 'available'`}
}

func (b dbBackend) exec(t *testing.T, q string) {
	t.Helper()
	var err error
	if b.db.Kind() == database.SQLite {
		_, err = b.db.Writer().ExecContext(context.Background(), q)
	} else {
		_, err = b.db.Pool().Exec(context.Background(), q)
	}
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// TestDatabaseCollector: at scrape time the collector reads the queue's
// available jobs and the age of the oldest, the pending approvals and the
// database's size, on SQLite and PostgreSQL alike; a closed database is
// agentcraft_database_up 0 with the rest left out, not zeros.
func TestDatabaseCollector(t *testing.T) {
	for name, open := range map[string]func(*testing.T) dbBackend{"sqlite": func(t *testing.T) dbBackend { return sqliteBackend(t) }, "postgres": postgresBackend} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := open(t)
			ctx := context.Background()
			m := New(&Options{NoRuntime: true})
			if err := m.WatchDatabase(b.db, &DatabaseOptions{Logger: slog.New(slog.DiscardHandler)}); err != nil {
				t.Fatal(err)
			}
			got := values(t, m)
			if got[`agentcraft_database_up{}`] != 1 || got[`agentcraft_approvals_pending{}`] != 0 || got[`agentcraft_database_size_bytes{}`] <= 0 {
				t.Fatalf("empty database: %v", got)
			}
			for k := range got {
				if strings.HasPrefix(k, "agentcraft_queue_") {
					t.Errorf("empty queue has the series %s", k)
				}
			}

			q, err := queue.New(queue.Config{DB: b.db, InsertOnly: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			for _, id := range []string{"r1", "r2", "r3"} {
				if err := q.EnqueueRun(ctx, queue.RunArgs{WorkspaceID: "w", RunID: id}); err != nil {
					t.Fatal(err)
				}
			}
			// Due tomorrow: scheduled, not available.
			if err := q.EnqueueRunAt(ctx, queue.RunArgs{WorkspaceID: "w", RunID: "later"}, time.Now().Add(24*time.Hour)); err != nil {
				t.Fatal(err)
			}
			b.exec(t, b.hourBack)
			ws, err := b.st.Workspaces().Create(ctx, store.Workspace{Name: "metrics"})
			if err != nil {
				t.Fatal(err)
			}
			task, err := b.st.Tasks().Create(ctx, store.Task{WorkspaceID: ws.ID, Title: "pay", Source: "api", CreatedBy: "u1"})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, key := range []string{"a", "b"} {
				a, err := b.st.Approvals().Create(ctx, store.Approval{WorkspaceID: ws.ID, TaskID: task.ID, StepKey: key, Capability: store.CapabilityHigh, Summary: "pay " + key})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, a.ID)
			}
			if _, _, err := b.st.Approvals().Decide(ctx, ws.ID, ids[0], true, "u2", time.Now()); err != nil {
				t.Fatal(err)
			}

			got = values(t, m)
			var queueName string
			for k := range got {
				if name, ok := strings.CutPrefix(k, `agentcraft_queue_available_jobs{queue="`); ok {
					queueName = strings.TrimSuffix(name, `"}`)
				}
			}
			ql := `{queue="` + queueName + `"}`
			if got[`agentcraft_queue_available_jobs`+ql] != 3 {
				t.Errorf("available jobs = %v, want 3 (%v)", got[`agentcraft_queue_available_jobs`+ql], got)
			}
			if age := got[`agentcraft_queue_oldest_available_job_age_seconds`+ql]; age < 3500 || age > 3700 {
				t.Errorf("oldest available job age = %v s, want about 3600", age)
			}
			if got[`agentcraft_approvals_pending{}`] != 1 {
				t.Errorf("pending approvals = %v, want 1", got[`agentcraft_approvals_pending{}`])
			}
			if b.db.Kind() == database.SQLite {
				if got[`agentcraft_database_wal_size_bytes{}`] <= 0 {
					t.Errorf("wal size = %v, want > 0 after writes", got[`agentcraft_database_wal_size_bytes{}`])
				}
				if _, ok := got[`agentcraft_database_free_bytes{}`]; !ok {
					t.Error("no agentcraft_database_free_bytes on SQLite")
				}
				// Free pages appear when rows go and the file keeps its size.
				b.exec(t, "PRAGMA wal_checkpoint(TRUNCATE)")
				b.exec(t, "CREATE TABLE filler(x BLOB)")
				b.exec(t, "INSERT INTO filler SELECT randomblob(4096) FROM (WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c WHERE n < 64) SELECT n FROM c)")
				b.exec(t, "DROP TABLE filler")
				if free := values(t, m)[`agentcraft_database_free_bytes{}`]; free < 64*4096 {
					t.Errorf("free bytes after dropping 256 KiB = %v", free)
				}
			} else if _, ok := got[`agentcraft_database_wal_size_bytes{}`]; ok {
				t.Error("PostgreSQL reports a SQLite WAL size")
			}

			b.db.Close()
			got = values(t, m)
			if got[`agentcraft_database_up{}`] != 0 {
				t.Errorf("closed database: up = %v, want 0", got[`agentcraft_database_up{}`])
			}
			if _, ok := got[`agentcraft_database_size_bytes{}`]; ok {
				t.Error("closed database still reports a size")
			}
		})
	}
}
