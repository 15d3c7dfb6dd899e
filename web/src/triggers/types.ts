// The trigger API's shapes (server/triggers.go: store.Trigger with its
// webhook url and next fire; store.TriggerFire).

export type TriggerKind = 'schedule' | 'webhook'
export type Misfire = 'skip' | 'catch_up_once'

export interface Trigger {
  id: string
  name: string
  kind: TriggerKind
  workflow_id?: string
  agent?: string
  input?: unknown
  schedule?: string
  timezone?: string
  misfire?: Misfire
  enabled: boolean
  created_at: string
  updated_at: string
  /** url is a webhook's path, /hooks/{id}. */
  url?: string
  /** next_fire is when an enabled schedule fires next. */
  next_fire?: string
  /** secret is a webhook's signing secret, on the one answer that shows it (create, rotate). */
  secret?: string
}

export interface TriggerFire {
  tick: string
  missed?: number
  owner: string
  run_id?: string
  error?: string
  created_at: string
}

export const triggerPath = (id: string) => '/api/triggers/' + encodeURIComponent(id)
