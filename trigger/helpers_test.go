package trigger_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/secret"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/postgres"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
	"github.com/agentcraftlab/agentcraft/trigger"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/workflowtest"
)

// noop is a workflow that succeeds at once with its input.
const noop = `{"name":"noop","nodes":[{"id":"start","type":"start"},{"id":"end","type":"end"}],"edges":[{"id":"e1","source":"start","target":"end"}]}`

// rig is one process's view: its own store handle, run service and
// trigger service.
type rig struct {
	st   store.Store
	runs *controlplane.Service
	svc  *trigger.Service
}

var testKey = func() []byte {
	k := make([]byte, secret.KeySize)
	rand.Read(k)
	return k
}()

func newRig(t testing.TB, st store.Store, owner string, agents trigger.Agents) *rig {
	t.Helper()
	box, err := secret.New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	eng := workflowtest.Engine(t, workflow.Services{})
	runs := controlplane.New(st, eng, controlplane.Options{Owner: owner})
	t.Cleanup(runs.Wait)
	svc, err := trigger.New(st, runs, box, &trigger.Options{Agents: agents})
	if err != nil {
		t.Fatal(err)
	}
	return &rig{st: st, runs: runs, svc: svc}
}

func openSQLite(t testing.TB) store.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// postgresStores opens n store handles (each its own pool) on one fresh
// schema, dropped when t ends; it skips t without a test database.
func postgresStores(t *testing.T, n int) []store.Store {
	t.Helper()
	dsn := os.Getenv("AGENTCRAFT_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("PostgreSQL tests skipped: set AGENTCRAFT_TEST_POSTGRES_DSN (such as postgres://postgres@127.0.0.1:5432/test?sslmode=disable)")
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "triggertest_" + hex.EncodeToString(b[:])
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
	var out []store.Store
	for i := range n {
		st, err := postgres.Open(context.Background(), dsn, &postgres.Options{Schema: schema, MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if i == 0 {
			if err := st.Migrate(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, st)
	}
	return out
}

func mustWorkflow(t testing.TB, st store.Store) (string, store.Workflow) {
	t.Helper()
	ws, err := st.Workspaces().GetOrCreate(t.Context(), "default")
	if err != nil {
		t.Fatal(err)
	}
	wf, err := st.Workflows().Create(t.Context(), store.Workflow{WorkspaceID: ws.ID, Name: "noop", Definition: json.RawMessage(noop)})
	if err != nil {
		t.Fatal(err)
	}
	return ws.ID, wf
}

func ptr[T any](v T) *T { return &v }
