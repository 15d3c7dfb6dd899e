// The shapes the settings page reads from the people and management APIs
// (server/people.go, server/management.go), and the roles' powers as
// identity/permission.go defines them, so the page shows only the controls
// the signed-in role may use and never asks for what it may not read.

export type Role = 'owner' | 'admin' | 'member' | 'guest'

/** roles, highest first (identity.Roles). */
export const roles: Role[] = ['owner', 'admin', 'member', 'guest']

const rank: Record<string, number> = { guest: 1, member: 2, admin: 3, owner: 4 }

/** Permission is one of identity's permissions that the page checks. */
export type Permission = 'read' | 'manage_credentials' | 'manage_members' | 'manage_keys' | 'admin_workspace' | 'manage_owners'

// minRole is each permission's least role (identity.permissions).
const minRole: Record<Permission, Role> = {
  read: 'guest',
  manage_credentials: 'admin',
  manage_members: 'admin',
  manage_keys: 'admin',
  admin_workspace: 'admin',
  manage_owners: 'owner',
}

/** allows reports whether role has p (identity.Allows). */
export function allows(role: string | undefined, p: Permission): boolean {
  return !!role && (rank[role] ?? 0) >= rank[minRole[p]]
}

/** canAssign reports whether role may give or take r (identity.canAssign). */
export function canAssign(role: string | undefined, r: string): boolean {
  if (r === 'owner') return allows(role, 'manage_owners')
  return allows(role, 'manage_members') && (rank[r] ?? 0) <= (rank[role ?? ''] ?? 0)
}

/** atMost is the roles no higher than role (what a key made by role may hold). */
export function atMost(role: string | undefined): Role[] {
  return roles.filter((r) => (rank[r] ?? 0) <= (rank[role ?? ''] ?? 0))
}

export interface Credential {
  provider: string
  created_at: string
  updated_at: string
}

export interface ProviderInfo {
  name: string
  type: string
  origin: string
  has_key: boolean
}

export interface APIKey {
  id: string
  name: string
  prefix: string
  role: Role
  scope?: string
  user_id?: string
  created_at: string
  last_used_at?: string
  revoked_at?: string
}

export interface Member {
  user_id: string
  role: Role
  email?: string
  display_name?: string
  created_at: string
}

export interface Invitation {
  id: string
  role: Role
  email?: string
  created_at: string
  expires_at: string
  accepted_at?: string
}

/** workspacePath is the people API's path of the workspace id. */
export function workspacePath(id: string): string {
  return '/api/workspaces/' + encodeURIComponent(id)
}
