import { useSession } from '../session'

// The roles of a workspace, lowest first, and the least role each write
// of these pages needs (identity/permission.go): members edit agents,
// admins manage tools and MCP servers.
const rank: Record<string, number> = { guest: 1, member: 2, admin: 3, owner: 4 }

export type Need = 'edit' | 'manage_tools'

const least: Record<Need, string> = { edit: 'member', manage_tools: 'admin' }

/** useCan reports whether the signed-in user's role in the chosen workspace allows need, so pages hide writes that would 403. */
export function useCan(need: Need): boolean {
  const { me, workspace } = useSession()
  const role = me?.workspaces.find((w) => w.id === workspace)?.role ?? ''
  return (rank[role] ?? 0) >= rank[least[need]]
}
