// Folds a run's events into the state of each node, for the run view.
import type { Checkpoint, RunEvent, Usage, Wait } from './types'

export interface NodeRun {
  /** status from the node's own events: running, done, failed, skipped, waiting. */
  status?: string
  output?: unknown
  /** text is what an agent node has streamed so far. */
  text: string
  error?: string
  durationMs?: number
  usage?: Usage
  wait?: Wait
  /** contract is the status of the contract this node checked (ok, normalized, failed). */
  contract?: string
}

export interface RunState {
  nodes: Record<string, NodeRun>
  /** started: the stream has delivered at least one event. */
  started: boolean
  /** finished is run_finished's status, when it came. */
  finished?: string
  lastSeq: number
}

export const emptyState: RunState = { nodes: {}, started: false, lastSeq: 0 }

/** waitOf reads a human node's request from an event's data (workflow.WaitOf). */
export function waitOf(data: unknown): Wait | undefined {
  if (!data || typeof data !== 'object') return undefined
  const d = data as Record<string, unknown>
  if (typeof d.prompt !== 'string') return undefined
  return { prompt: d.prompt, form_schema: d.form_schema as Record<string, unknown> | undefined, deadline: d.deadline as string | undefined }
}

/** apply folds one event into the state (a new state; the old one is untouched). */
export function apply(s: RunState, ev: RunEvent): RunState {
  if (ev.seq && ev.seq <= s.lastSeq) return s // seen already (a reconnect)
  const next: RunState = { ...s, started: true, lastSeq: Math.max(s.lastSeq, ev.seq || 0), nodes: { ...s.nodes } }
  const id = ev.node_id
  const node = (): NodeRun => {
    const n = { ...(next.nodes[id!] ?? { text: '' }) }
    next.nodes[id!] = n
    return n
  }
  switch (ev.type) {
    case 'node_started':
      if (id) Object.assign(node(), { status: 'running', error: undefined, wait: undefined })
      break
    case 'node_finished':
      if (id) Object.assign(node(), { status: 'done', output: ev.output, durationMs: ev.duration_ms })
      break
    case 'node_skipped':
      if (id) node().status = 'skipped'
      break
    case 'node_failed':
      if (id) Object.assign(node(), { status: 'failed', error: ev.error, durationMs: ev.duration_ms })
      break
    case 'waiting_for_input':
      if (id) Object.assign(node(), { status: 'waiting', wait: waitOf(ev.data) })
      break
    case 'text_delta':
      if (id && ev.text) {
        const n = node()
        n.text = n.text + ev.text
      }
      break
    case 'usage':
      if (id && ev.usage) {
        const n = node()
        const u = n.usage ?? { input_tokens: 0, output_tokens: 0 }
        n.usage = { input_tokens: u.input_tokens + (ev.usage.input_tokens ?? 0), output_tokens: u.output_tokens + (ev.usage.output_tokens ?? 0) }
      }
      break
    case 'contract_result':
      if (id && ev.status) node().contract = ev.status
      break
    case 'run_finished':
      next.finished = ev.status
      break
  }
  return next
}

/**
 * statusOf is the status the view shows for a node: its events' status;
 * done for a waiting node that was answered (its answer is saved);
 * reused for a node with a checkpoint but no events of this run (a re-run
 * copied its output from the earlier run); otherwise pending.
 */
export function statusOf(s: RunState, id: string, saved: Map<string, Checkpoint>): string {
  const st = s.nodes[id]?.status
  if (st === 'waiting' && saved.has(id)) return 'done'
  if (st) return st
  if (s.started && saved.has(id)) return 'reused'
  return 'pending'
}
