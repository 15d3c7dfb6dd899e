package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/postgres"
)

// TestAuditLogAppendOnly goes around the store API with a connection of its
// own: the database itself refuses to rewrite or remove audit rows.
func TestAuditLogAppendOnly(t *testing.T) {
	ctx := t.Context()
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	st, err := postgres.Open(ctx, dsn, &postgres.Options{Schema: schema, MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	ws, err := st.Workspaces().Create(ctx, store.Workspace{Name: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AuditLog().Append(ctx, store.AuditEvent{WorkspaceID: ws.ID, Actor: "cli", Action: "agent.create", Target: "agent:x"}); err != nil {
		t.Fatalf("Append = %v", err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `SET search_path TO `+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE audit_log SET actor = 'someone else'`,
		`DELETE FROM audit_log WHERE action = 'agent.create'`,
		`TRUNCATE audit_log`,
	} {
		_, err := conn.Exec(ctx, q)
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s = %v, want the append-only trigger to refuse it", q, err)
		}
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE actor = 'cli'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("audit rows after refused writes = %d (%v), want the 1 row unchanged", n, err)
	}
	// Rows outlive their workspace: with no foreign key, deleting the
	// workspace neither cascades into the log nor is refused by it.
	if _, err := conn.Exec(ctx, `DELETE FROM workspaces WHERE id = $1`, ws.ID); err != nil {
		t.Fatalf("delete workspace = %v", err)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE workspace_id = $1`, ws.ID).Scan(&n); err != nil || n != 1 {
		t.Errorf("audit rows after deleting their workspace = %d (%v), want 1", n, err)
	}
}
