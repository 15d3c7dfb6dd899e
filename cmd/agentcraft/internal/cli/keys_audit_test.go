package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
)

// TestKeysAreAudited: creating and revoking a key leave apikey.create and
// apikey.revoke rows by the CLI; the key itself is in none of them.
func TestKeysAreAudited(t *testing.T) {
	t.Chdir(t.TempDir())
	code, key, errOut := run(t, "keys", "create", "--workspace", "team", "--create-workspace", "--name", "ci")
	if code != 0 {
		t.Fatalf("keys create: %d %s", code, errOut)
	}
	key = strings.TrimSpace(key)
	_, list, _ := run(t, "keys", "list", "--workspace", "team")
	id := strings.Fields(strings.Split(list, "\n")[1])[0]
	if code, _, errOut := run(t, "keys", "revoke", id, "--workspace", "team"); code != 0 {
		t.Fatalf("revoke: %s", errOut)
	}

	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join("data", "agentcraft.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws, err := st.Workspaces().GetByName(ctx, "team")
	if err != nil {
		t.Fatal(err)
	}
	page, err := st.AuditLog().List(ctx, store.AuditFilter{WorkspaceID: ws.ID, Action: "apikey."})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range page.Events {
		got = append(got, e.Action+" "+e.Target+" "+e.Actor)
		if strings.Contains(string(e.Details), key) || strings.Contains(string(e.Details), key[:9]) {
			t.Errorf("%s details carry the key: %s", e.Action, e.Details)
		}
	}
	want := "apikey.revoke apikey:" + id + " cli,apikey.create apikey:" + id + " cli"
	if strings.Join(got, ",") != want {
		t.Errorf("audit rows = %v, want %s", got, want)
	}
}
