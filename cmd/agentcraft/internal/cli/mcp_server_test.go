package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/internal/database"
)

func TestMCPClientsCreateListRevoke(t *testing.T) {
	t.Chdir(t.TempDir())
	code, out, errOut := run(t, "mcp", "clients", "create", "--name", "desktop", "--scopes", "docsearch/read docsearch/search agents/*", "--workspace", "team")
	if code != 0 || !strings.Contains(out, "client_id: ") || !strings.Contains(out, "client_secret: acs_") {
		t.Fatalf("mcp clients create: %d %q %q", code, out, errOut)
	}
	var id, secret string
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "client_id: "); ok {
			id = v
		}
		if v, ok := strings.CutPrefix(line, "client_secret: "); ok {
			secret = v
		}
	}
	code, list, _ := run(t, "mcp", "clients", "list", "--workspace", "team")
	if code != 0 || !strings.Contains(list, id) || !strings.Contains(list, "docsearch/read docsearch/search agents/*") || strings.Contains(list, secret) {
		t.Fatalf("mcp clients list must show the client and its scopes, never the secret: %d\n%s", code, list)
	}
	if code, out, errOut := run(t, "mcp", "clients", "revoke", id, "--workspace", "team"); code != 0 || !strings.Contains(out, "revoked "+id) {
		t.Fatalf("mcp clients revoke: %d %q %q", code, out, errOut)
	}
	if _, list, _ := run(t, "mcp", "clients", "list", "--workspace", "team"); strings.HasSuffix(strings.TrimSpace(strings.Split(list, "\n")[1]), "-") {
		t.Errorf("revoked client shows no revocation time:\n%s", list)
	}

	for _, tc := range []struct{ args, want string }{
		{"mcp clients create --name x --scopes admin", `unknown scope "admin"`},
		{"mcp clients create --name x --scopes", "flag needs an argument"},
		{"mcp clients create --scopes docsearch/read", "--name is empty"},
		{"mcp serve", "needs --stdio"},
	} {
		code, _, errOut := run(t, strings.Fields(tc.args)...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestMCPStdioRefusesLockedSQLite: mcp serve --stdio executes and resumes
// runs, so it refuses a SQLite database that serve holds, as a second
// serve does.
func TestMCPStdioRefusesLockedSQLite(t *testing.T) {
	t.Chdir(t.TempDir())
	held, err := lockDatabase(database.URL{Kind: database.SQLite, Path: "./data/agentcraft.db"}, "serve")
	if err != nil {
		t.Fatal(err)
	}
	defer held.release()
	_, errOut, err := runInErr(t, "", "mcp", "serve", "--stdio")
	if !errors.Is(err, ErrDatabaseLocked) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d (agentcraft serve", os.Getpid())) {
		t.Fatalf("mcp serve --stdio on a held database: %v\n%s", err, errOut)
	}
}
