package identity

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool"
)

// TestAllowsMatrix walks every role × permission against the rule of
// issue 14, written out by hand so that a change to the table in
// permission.go has to change this one too.
func TestAllowsMatrix(t *testing.T) {
	// G guest, M member, A admin, O owner: the least role allowed.
	want := map[Permission]string{
		PermRead: "G", PermChat: "G",
		PermRun: "M", PermEdit: "M", PermApproveLow: "M",
		PermManageTools: "A", PermManageCredentials: "A", PermManageMembers: "A", PermManageKeys: "A",
		PermApproveMedium: "A", PermAdminWorkspace: "A",
		PermApproveHigh: "O", PermManageOwners: "O", PermDeleteWorkspace: "O",
	}
	if len(want) != len(Permissions()) {
		t.Fatalf("the matrix covers %d permissions, Permissions() has %d", len(want), len(Permissions()))
	}
	rank := map[string]int{"G": 1, "M": 2, "A": 3, "O": 4}
	cases := 0
	for _, p := range Permissions() {
		least, ok := want[p]
		if !ok {
			t.Errorf("permission %s is missing from the matrix", p)
			continue
		}
		for _, r := range append(Roles(), "", "root") {
			cases++
			expect := r.Valid() && r.Rank() >= rank[least]
			if got := Allows(r, p); got != expect {
				t.Errorf("Allows(%q, %s) = %t, want %t", r, p, got, expect)
			}
		}
	}
	if Allows(RoleOwner, "fly") {
		t.Error("an unknown permission is allowed")
	}
	t.Logf("%d role × permission cases", cases)
}

func TestScopeNarrowsRole(t *testing.T) {
	for _, p := range Permissions() {
		for _, r := range Roles() {
			full := Grant{Role: r}
			chat := Grant{Role: r, Scope: store.APIKeyScopeChat}
			read := Grant{Role: r, Scope: store.APIKeyScopeRead}
			if full.Allows(p) != Allows(r, p) {
				t.Errorf("%s key without scope: %s = %t, want the role's %t", r, p, full.Allows(p), Allows(r, p))
			}
			if want := Allows(r, p) && (p == PermRead || p == PermChat); chat.Allows(p) != want {
				t.Errorf("%s chat-only key: %s = %t, want %t", r, p, chat.Allows(p), want)
			}
			if want := Allows(r, p) && p == PermRead; read.Allows(p) != want {
				t.Errorf("%s read-only key: %s = %t, want %t", r, p, read.Allows(p), want)
			}
			if (Grant{Role: r, Scope: "admin"}).Allows(p) {
				t.Errorf("an unknown scope allows %s", p)
			}
		}
	}
}

func TestPermissionErrorNamesWhatIsMissing(t *testing.T) {
	for _, tc := range []struct {
		g    Grant
		p    Permission
		want string
	}{
		{Grant{Role: RoleMember}, PermManageTools, "permission manage_tools needs role admin; you are member"},
		{Grant{Role: RoleOwner, Scope: "chat"}, PermRun, `outside this API key's scope "chat"`},
		{Grant{}, PermRead, "you are not a member"},
		{Grant{Role: RoleAdmin}, PermDeleteWorkspace, "needs role owner"},
	} {
		err := tc.g.Check(tc.p)
		if !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v.Check(%s) = %v, want ErrForbidden saying %q", tc.g, tc.p, err, tc.want)
		}
	}
	if err := (Grant{Role: RoleGuest}).Check(PermChat); err != nil {
		t.Errorf("guest chat = %v", err)
	}
}

func TestApprovePermission(t *testing.T) {
	for c, want := range map[tool.Capability]Role{tool.CapabilityLow: RoleMember, tool.CapabilityMedium: RoleAdmin, tool.CapabilityHigh: RoleOwner, 0: RoleOwner} {
		got, _ := MinRole(ApprovePermission(c))
		if got != want {
			t.Errorf("approving capability %v needs %s, want %s", c, got, want)
		}
	}
}

func TestCanAssign(t *testing.T) {
	for _, tc := range []struct {
		actor, target Role
		ok            bool
	}{
		{RoleOwner, RoleOwner, true}, {RoleOwner, RoleGuest, true},
		{RoleAdmin, RoleOwner, false}, {RoleAdmin, RoleAdmin, true}, {RoleAdmin, RoleMember, true},
		{RoleMember, RoleGuest, false}, {RoleGuest, RoleGuest, false},
	} {
		err := canAssign(Grant{Role: tc.actor}, tc.target)
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrForbidden) {
			t.Errorf("canAssign(%s → %s) = %v, want ok=%t", tc.actor, tc.target, err, tc.ok)
		}
	}
	if err := canAssign(Grant{Role: RoleOwner, Scope: "chat"}, RoleGuest); err == nil {
		t.Error("a chat-only owner key may manage members")
	}
}

// TestPermissionsOf checks the list a client shows controls by: each
// role's permissions are exactly those Allows grants it, in table order.
func TestPermissionsOf(t *testing.T) {
	for _, r := range append(Roles(), "nobody") {
		var want []Permission
		for _, p := range Permissions() {
			if Allows(r, p) {
				want = append(want, p)
			}
		}
		got := PermissionsOf(r)
		if strings.Join(permStrings(got), ",") != strings.Join(permStrings(want), ",") {
			t.Errorf("PermissionsOf(%q) = %v, want %v", r, got, want)
		}
	}
	if got := PermissionsOf(RoleGuest); len(got) != 2 || got[0] != PermRead || got[1] != PermChat {
		t.Errorf("PermissionsOf(guest) = %v, want [read chat]", got)
	}
	if got := PermissionsOf(RoleOwner); len(got) != len(Permissions()) {
		t.Errorf("the owner has %d of %d permissions", len(got), len(Permissions()))
	}
	if got := PermissionsOf("nobody"); got == nil || len(got) != 0 {
		t.Errorf("PermissionsOf(unknown) = %#v, want an empty list", got)
	}
}

func permStrings(ps []Permission) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return out
}
