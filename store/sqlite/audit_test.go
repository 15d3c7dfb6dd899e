package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/store"
)

// TestAuditLogAppendOnly goes around the store API with a connection of its
// own: the database itself refuses to rewrite or remove audit rows.
func TestAuditLogAppendOnly(t *testing.T) {
	ctx := t.Context()
	st := openStore(t, filepath.Join(t.TempDir(), "agentcraft.db"))
	ws, err := st.Workspaces().Create(ctx, store.Workspace{Name: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AuditLog().Append(ctx, store.AuditEvent{WorkspaceID: ws.ID, Actor: "cli", Action: "agent.create", Target: "agent:x"}); err != nil {
		t.Fatalf("Append = %v", err)
	}
	db, err := sql.Open("sqlite", "file://"+st.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`UPDATE audit_log SET actor = 'someone else'`,
		`DELETE FROM audit_log WHERE action = 'agent.create'`,
		`DELETE FROM audit_log`,
	} {
		_, err := db.ExecContext(ctx, q)
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s = %v, want the append-only trigger to abort it", q, err)
		}
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM audit_log WHERE actor = 'cli'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("audit rows after refused writes = %d (%v), want the 1 row unchanged", n, err)
	}
	// Rows outlive their workspace: with no foreign key, deleting the
	// workspace neither cascades into the log nor is refused by it.
	if _, err := db.ExecContext(ctx, `PRAGMA foreign_keys = ON; DELETE FROM workspaces WHERE id = ?`, ws.ID); err != nil {
		t.Fatalf("delete workspace = %v", err)
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM audit_log WHERE workspace_id = ?`, ws.ID).Scan(&n); err != nil || n != 1 {
		t.Errorf("audit rows after deleting their workspace = %d (%v), want 1", n, err)
	}
}
