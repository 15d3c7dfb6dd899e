// The shapes the settings page reads from the people and management APIs
// (server/people.go, server/management.go), and which roles the signed-in
// role may hand out (identity.canAssign). What a role may do comes from
// the server (Workspace.permissions), so the page shows only the controls
// it may use and never asks for what it may not read.

import { allows, type Workspace } from '../api'

export type Role = 'owner' | 'admin' | 'member' | 'guest'

/** roles, highest first (identity.Roles). */
export const roles: Role[] = ['owner', 'admin', 'member', 'guest']

const rank: Record<string, number> = { guest: 1, member: 2, admin: 3, owner: 4 }

/** canAssign reports whether the user's role in ws may give or take r (identity.canAssign). */
export function canAssign(ws: Workspace, r: string): boolean {
  if (r === 'owner') return allows(ws, 'manage_owners')
  return allows(ws, 'manage_members') && (rank[r] ?? 0) <= (rank[ws.role] ?? 0)
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
