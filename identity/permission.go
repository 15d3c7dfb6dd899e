package identity

import (
	"errors"
	"fmt"

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool"
)

// Role is a member's or an API key's power in one workspace.
type Role = store.Role

// Roles, highest first.
const (
	RoleOwner  = store.RoleOwner
	RoleAdmin  = store.RoleAdmin
	RoleMember = store.RoleMember
	RoleGuest  = store.RoleGuest
)

// Permission names an action a route or a service method needs. Each has
// one least role (MinRole); a role allows what its rank reaches.
type Permission string

// Permissions, grouped by the least role that has them. The approval
// permissions are the capability half of the double check of the L-memory
// design (§9): a low, medium or high tool call is approved by a member,
// an admin or an owner.
const (
	// Guests read and chat.
	PermRead Permission = "read"
	PermChat Permission = "chat"
	// Members run agents and workflows, edit agents, workflows and
	// knowledge bases, and approve low-capability actions.
	PermRun        Permission = "run"
	PermEdit       Permission = "edit"
	PermApproveLow Permission = "approve_low"
	// Admins manage tools, credentials, members (up to admin), API keys
	// and the workspace's settings and name, and approve medium actions.
	PermManageTools       Permission = "manage_tools"
	PermManageCredentials Permission = "manage_credentials"
	PermManageMembers     Permission = "manage_members"
	PermManageKeys        Permission = "manage_keys"
	PermApproveMedium     Permission = "approve_medium"
	PermAdminWorkspace    Permission = "admin_workspace"
	// Owners do everything: approve high actions, grant or take the
	// owner role, delete the workspace.
	PermApproveHigh     Permission = "approve_high"
	PermManageOwners    Permission = "manage_owners"
	PermDeleteWorkspace Permission = "delete_workspace"
)

// permissions in order, with the least role that holds each.
var permissions = []struct {
	p    Permission
	role Role
}{
	{PermRead, RoleGuest},
	{PermChat, RoleGuest},
	{PermRun, RoleMember},
	{PermEdit, RoleMember},
	{PermApproveLow, RoleMember},
	{PermManageTools, RoleAdmin},
	{PermManageCredentials, RoleAdmin},
	{PermManageMembers, RoleAdmin},
	{PermManageKeys, RoleAdmin},
	{PermApproveMedium, RoleAdmin},
	{PermAdminWorkspace, RoleAdmin},
	{PermApproveHigh, RoleOwner},
	{PermManageOwners, RoleOwner},
	{PermDeleteWorkspace, RoleOwner},
}

// Permissions returns every permission, from the guests' to the owners'.
func Permissions() []Permission {
	out := make([]Permission, len(permissions))
	for i, p := range permissions {
		out[i] = p.p
	}
	return out
}

// Roles returns the four roles, highest first.
func Roles() []Role { return []Role{RoleOwner, RoleAdmin, RoleMember, RoleGuest} }

// MinRole returns the least role that has p; false for an unknown
// permission.
func MinRole(p Permission) (Role, bool) {
	for _, q := range permissions {
		if q.p == p {
			return q.role, true
		}
	}
	return "", false
}

// Allows reports whether role has p: guests read and chat, members also
// run and edit, admins also manage tools, credentials, members and keys
// and approve medium actions, owners everything, high actions and
// deletion included. An unknown role or permission allows nothing.
func Allows(role Role, p Permission) bool {
	min, ok := MinRole(p)
	return ok && role.Rank() >= min.Rank()
}

// PermissionsOf returns the permissions role has, from the guests' to the
// owners' (what a client shows controls for); none for an unknown role.
func PermissionsOf(role Role) []Permission {
	out := []Permission{}
	for _, q := range permissions {
		if Allows(role, q.p) {
			out = append(out, q.p)
		}
	}
	return out
}

// ScopeAllows reports whether an API key scope leaves p to the role: the
// empty scope leaves everything, store.APIKeyScopeChat reading and
// chatting, store.APIKeyScopeRead reading. An unknown scope allows
// nothing.
func ScopeAllows(scope string, p Permission) bool {
	switch scope {
	case "":
		return true
	case store.APIKeyScopeChat:
		return p == PermRead || p == PermChat
	case store.APIKeyScopeRead:
		return p == PermRead
	}
	return false
}

// ApprovePermission is the permission that approves an action of
// capability c; an invalid capability needs the owner's.
func ApprovePermission(c tool.Capability) Permission {
	switch c {
	case tool.CapabilityLow:
		return PermApproveLow
	case tool.CapabilityMedium:
		return PermApproveMedium
	}
	return PermApproveHigh
}

// Grant is what a credential holds in one workspace: a role and, for an
// API key, an optional narrower scope.
type Grant struct {
	Role  Role   `json:"role"`
	Scope string `json:"scope,omitempty"`
}

// Allows reports whether g has p: its role has it and its scope leaves it.
func (g Grant) Allows(p Permission) bool { return Allows(g.Role, p) && ScopeAllows(g.Scope, p) }

// Check is Allows as an error: nil, or a *PermissionError naming what is
// missing.
func (g Grant) Check(p Permission) error {
	if g.Allows(p) {
		return nil
	}
	need, _ := MinRole(p)
	return &PermissionError{Permission: p, Need: need, Grant: g}
}

// ErrForbidden is what every refusal of a permission wraps (HTTP 403).
var ErrForbidden = errors.New("identity: forbidden")

// PermissionError is a refusal naming the missing permission.
type PermissionError struct {
	Permission Permission
	// Need is the least role that has Permission ("" for an unknown one).
	Need  Role
	Grant Grant
}

func (e *PermissionError) Error() string {
	switch {
	case e.Need == "":
		return fmt.Sprintf("identity: permission %q is unknown", e.Permission)
	case e.Grant.Scope != "" && Allows(e.Grant.Role, e.Permission):
		return fmt.Sprintf("identity: permission %s is outside this API key's scope %q", e.Permission, e.Grant.Scope)
	case e.Grant.Role == "":
		return fmt.Sprintf("identity: permission %s needs role %s in this workspace; you are not a member", e.Permission, e.Need)
	}
	return fmt.Sprintf("identity: permission %s needs role %s; you are %s", e.Permission, e.Need, e.Grant.Role)
}

// Is makes errors.Is(err, ErrForbidden) hold.
func (e *PermissionError) Is(target error) bool { return target == ErrForbidden }

// canAssign reports whether a holder of g may give someone role r, or
// take r from them: only an owner touches the owner role, and nobody
// hands out a role above their own.
func canAssign(g Grant, r Role) error {
	if r == RoleOwner {
		return g.Check(PermManageOwners)
	}
	if err := g.Check(PermManageMembers); err != nil {
		return err
	}
	if r.Rank() > g.Role.Rank() {
		return fmt.Errorf("%w: you are %s and cannot grant the higher role %s", ErrForbidden, g.Role, r)
	}
	return nil
}
