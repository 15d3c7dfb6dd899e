package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
)

// runUsers runs the command line with stdin as standard input.
func runUsers(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRoot(&env{stdout: &out, stderr: &errb})
	root.SetArgs(args)
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&errb)
	if err := root.ExecuteContext(t.Context()); err != nil {
		errb.WriteString("agentcraft: " + err.Error() + "\n")
		return 1, out.String(), errb.String()
	}
	return 0, out.String(), errb.String()
}

// openDefaultDB opens ./data/agentcraft.db, where the commands wrote.
func openDefaultDB(t *testing.T) *identity.Service {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join("data", "agentcraft.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ids, err := identity.New(st, &identity.Options{Hasher: identity.DefaultArgon2id})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestUsersCreateOwnerSignsIn(t *testing.T) {
	t.Chdir(t.TempDir())
	const pw = "correct horse battery staple"
	code, _, errOut := runUsers(t, pw+"\n", "users", "create", "--email", "Ann@Example.com", "--owner", "--name", "Ann")
	if code != 0 || !strings.Contains(errOut, `owner of workspace "default"`) {
		t.Fatalf("users create: %d\n%s", code, errOut)
	}
	code, list, _ := runUsers(t, "", "users", "list")
	if code != 0 || !strings.Contains(list, "ann@example.com") || !strings.Contains(list, "default:owner") || strings.Contains(list, pw) {
		t.Fatalf("users list: %d\n%s", code, list)
	}
	ids := openDefaultDB(t)
	if _, err := ids.Login(t.Context(), "ann@example.com", pw, identity.Client{}); err != nil {
		t.Fatalf("sign in with the piped password: %v", err)
	}
	if db, _ := os.ReadFile(filepath.Join("data", "agentcraft.db")); bytes.Contains(db, []byte(pw)) {
		t.Fatal("the password is stored in clear")
	}

	// The same address again is refused.
	if code, _, errOut := runUsers(t, pw+"\n", "users", "create", "--email", "ann@example.com"); code == 0 || !strings.Contains(errOut, "exists already") {
		t.Errorf("second create: %d %s", code, errOut)
	}
}

func TestUsersCreateRefusesShortPassword(t *testing.T) {
	t.Chdir(t.TempDir())
	code, _, errOut := runUsers(t, "short\n", "users", "create", "--email", "bob@example.com", "--owner")
	if code == 0 || !strings.Contains(errOut, "shorter than 12 characters") {
		t.Fatalf("short password: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runUsers(t, "", "users", "create", "--email", "bob@example.com")
	if code == 0 || !strings.Contains(errOut, "no password on standard input") {
		t.Fatalf("no password: exit %d, stderr %q", code, errOut)
	}
	if code, list, _ := runUsers(t, "", "users", "list"); code != 0 || strings.Contains(list, "bob@") {
		t.Errorf("a refused create made a user:\n%s", list)
	}
	if code, _, errOut := runUsers(t, "", "users", "create", "--email", "x@example.com", "--link", "--role", "root"); code == 0 || !strings.Contains(errOut, "not a role") {
		t.Errorf("--role root: %d %s", code, errOut)
	}
}

func TestUsersCreateLinkAndDisable(t *testing.T) {
	t.Chdir(t.TempDir())
	code, out, errOut := runUsers(t, "", "users", "create", "--email", "cy@example.com", "--link", "--workspace", "team", "--base-url", "https://ac.example.com/")
	link := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(link, "https://ac.example.com"+identity.SignInLinkPath) {
		t.Fatalf("users create --link: %d %q\n%s", code, out, errOut)
	}
	ids := openDefaultDB(t)
	token := strings.TrimPrefix(link, "https://ac.example.com"+identity.SignInLinkPath)
	in, err := ids.UseSignInLink(t.Context(), token, identity.Client{})
	if err != nil || in.User.Email != "cy@example.com" {
		t.Fatalf("using the printed link: %+v, %v", in.User, err)
	}
	if ms, _ := ids.Memberships(t.Context(), in.User.ID); len(ms) != 1 || ms[0].Workspace.Name != "team" || ms[0].Role != identity.RoleMember {
		t.Errorf("--workspace team made %+v, want member of team", ms)
	}
	if _, err := ids.UseSignInLink(t.Context(), token, identity.Client{}); err == nil {
		t.Error("the link worked twice")
	}

	code, out, _ = runUsers(t, "", "users", "link", "--email", "cy@example.com")
	if code != 0 || !strings.HasPrefix(strings.TrimSpace(out), "http://127.0.0.1:8080"+identity.SignInLinkPath) {
		t.Errorf("users link: %d %q", code, out)
	}
	if code, out, errOut := runUsers(t, "", "users", "disable", "--email", "CY@example.com"); code != 0 || !strings.Contains(out, "disabled cy@example.com") {
		t.Fatalf("users disable: %d %s %s", code, out, errOut)
	}
	if _, err := ids.Authenticate(t.Context(), in.Token); err == nil {
		t.Error("a disabled user's session still works")
	}
	if code, list, _ := runUsers(t, "", "users", "list"); code != 0 || strings.Count(list, "\n") != 2 || strings.HasSuffix(strings.TrimSpace(list), "-") {
		t.Errorf("users list after disable shows no disabled time:\n%s", list)
	}
	if code, _, errOut := runUsers(t, "", "users", "disable", "--email", "nobody@example.com"); code == 0 || !strings.Contains(errOut, "no user has the address") {
		t.Errorf("disable unknown: %d %s", code, errOut)
	}
}

// TestUsersKeysCreateRole: keys made on the command line are members by
// default; --role and --scope set what the key may do.
func TestUsersKeysCreateRole(t *testing.T) {
	t.Chdir(t.TempDir())
	if code, _, errOut := runUsers(t, "", "keys", "create", "--name", "plain"); code != 0 || !strings.Contains(errOut, "created member key") {
		t.Fatalf("keys create: %d %s", code, errOut)
	}
	if code, _, errOut := runUsers(t, "", "keys", "create", "--name", "webui", "--role", "owner", "--scope", "chat"); code != 0 {
		t.Fatalf("keys create --role owner --scope chat: %s", errOut)
	}
	code, list, _ := runUsers(t, "", "keys", "list")
	if code != 0 || !regexp.MustCompile(`plain\s+member\s+-\s`).MatchString(list) || !regexp.MustCompile(`webui\s+owner\s+chat\s`).MatchString(list) {
		t.Errorf("keys list:\n%s", list)
	}
	if code, _, errOut := runUsers(t, "", "keys", "create", "--scope", "all"); code == 0 || !strings.Contains(errOut, "not a scope") {
		t.Errorf("--scope all: %d %s", code, errOut)
	}
}
