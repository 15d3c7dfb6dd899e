// The run API's shapes (store.Run, the checkpoints of GET /api/runs/{id},
// workflow.Event of the events stream).
import type { Definition } from '../workflow/types'

export type RunStatus = 'queued' | 'running' | 'waiting' | 'succeeded' | 'failed' | 'failed_contract' | 'canceled' | 'blocked'

export const runStatuses: RunStatus[] = ['queued', 'running', 'waiting', 'succeeded', 'failed', 'failed_contract', 'canceled', 'blocked']

export interface Run {
  id: string
  workflow_id?: string
  workflow_version?: number
  definition: Definition
  status: RunStatus
  input: unknown
  output?: unknown
  error?: string
  waiting_node?: string
  /** trigger_id is the trigger (schedule or webhook) that started the run. */
  trigger_id?: string
  /** task_id is the task whose plan the run executes. */
  task_id?: string
  created_at: string
  updated_at: string
  finished_at?: string
}

export interface Checkpoint {
  key: string
  node_id: string
  output: unknown
  handle?: string
  created_at: string
}

export interface RunWithCheckpoints extends Run {
  checkpoints: Checkpoint[]
  next?: string
}

export interface Usage {
  input_tokens: number
  output_tokens: number
  cached_tokens?: number
}

export interface RunEvent {
  seq: number
  type: string
  node_id?: string
  key?: string
  node_type?: string
  time: string
  duration_ms?: number
  text?: string
  status?: string
  handle?: string
  output?: unknown
  error?: string
  usage?: Usage
  data?: unknown
}

/** Wait is a human node's request (workflow.Wait). */
export interface Wait {
  prompt: string
  form_schema?: Record<string, unknown>
  deadline?: string
}

/** final says whether a run's status can no longer change. */
export function final(s: RunStatus): boolean {
  return s === 'succeeded' || s === 'failed' || s === 'failed_contract' || s === 'canceled' || s === 'blocked'
}
