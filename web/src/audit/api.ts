// The audit log API (GET /api/audit-logs) as the Audit page reads it.
import { api } from '../api'

/** AuditEvent is store.AuditEvent: who did what to what, when. */
export interface AuditEvent {
  id: string
  actor: string
  action: string
  target?: string
  details?: Record<string, unknown>
  created_at: string
}

/** AuditFilters are the page's filters, as the API names them; empty ones do not filter. */
export interface AuditFilters {
  actor: string
  action: string
  target: string
  /** since and until are RFC 3339 times; since <= created_at < until. */
  since: string
  until: string
}

export interface AuditPage {
  events: AuditEvent[]
  /** next is the cursor of the following page; absent on the last. */
  next?: string
}

/** listAudit fetches one page, newest first, continuing after cursor when given. */
export function listAudit(f: AuditFilters, limit: number, cursor: string): Promise<AuditPage> {
  const q = new URLSearchParams({ limit: String(limit) })
  for (const [k, v] of Object.entries(f)) if (v) q.set(k, v)
  if (cursor) q.set('cursor', cursor)
  return api<AuditPage>('/api/audit-logs?' + q)
}

/**
 * actionFamilies are the families of the actions the server records
 * (every action is family.verb: guard.block, member.add), offered as
 * suggestions in the action filter, where a bare family selects all of its
 * actions. A suggestion only: any action can be typed.
 */
export const actionFamilies = [
  'agent', 'apikey', 'auth', 'credential', 'guard', 'invitation', 'kb', 'mcp_server', 'member',
  'memory', 'oauth_client', 'openapi_import', 'pii', 'tools', 'user', 'workspace',
]

/** detailText writes an event's details as "key: value" pairs on one line. */
export function detailText(d: Record<string, unknown> | undefined): string {
  if (!d) return ''
  return Object.entries(d)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ')
}
