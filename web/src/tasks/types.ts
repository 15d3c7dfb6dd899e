// The task API's shapes (store.Task, store.Approval, store.TaskStep,
// store.TaskEvent, task.View, task.Compensation and task.Outcome).
import type { Run } from '../runs/types'

export type TaskStatus = 'open' | 'planning' | 'awaiting_approval' | 'running' | 'done' | 'failed' | 'cancelled' | 'expired'
export const taskStatuses: TaskStatus[] = ['open', 'planning', 'awaiting_approval', 'running', 'done', 'failed', 'cancelled', 'expired']

export type Capability = 'low' | 'medium' | 'high'

export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'expired'
export const approvalStatuses: ApprovalStatus[] = ['pending', 'approved', 'rejected', 'expired']

export type StepStatus = 'pending' | 'ok' | 'error' | 'skipped' | 'compensated'

/** taskSources are the channels a task may come from (Task.source). */
export const taskSources = ['line', 'web', 'api', 'workflow'] as const

export interface Task {
  id: string
  title: string
  detail?: string
  intent?: Record<string, unknown>
  status: TaskStatus
  capability: Capability
  source: string
  source_ref?: string
  created_by?: string
  due_at?: string
  created_at: string
  updated_at: string
}

export interface Approval {
  id: string
  workspace_id: string
  task_id: string
  run_id?: string
  step_key?: string
  capability: Capability
  summary: string
  status: ApprovalStatus
  requested_by?: string
  approver_user_id?: string
  decided_at?: string
  expires_at?: string
  created_at: string
}

export interface TaskStep {
  seq: number
  run_id?: string
  tool?: string
  capability: Capability
  input?: unknown
  output?: unknown
  undo?: unknown
  status: StepStatus
  error?: string
  idempotency_key: string
  created_at: string
  finished_at?: string
}

export interface TaskEvent {
  seq: number
  type: string
  actor?: string
  payload?: unknown
  created_at: string
}

/** TaskView is GET /api/tasks/{id}. */
export interface TaskView {
  task: Task
  runs: Run[] | null
  steps: TaskStep[] | null
  events: TaskEvent[] | null
  approvals: Approval[] | null
}

/** Compensation is POST /api/tasks/{id}/compensate. */
export interface Compensation {
  undone: { seq: number; tool: string; undo_step_seq: number }[]
  not_undone: { seq: number; tool: string; reason: string }[]
}

/** Outcome is POST /api/tasks. */
export interface Outcome {
  task: Task
  agent?: string
  run_id?: string
  question?: string
  duplicate?: boolean
}

/** knownEvents are the task event types the studio names (others show as they are). */
export const knownEvents = ['created', 'claimed', 'planned', 'approved', 'rejected', 'step', 'completed', 'failed', 'compensated', 'note']
