// Reads a run's event stream (GET /api/runs/{id}/events).
import { apiStream } from '../api'
import type { RunEvent } from './types'

/**
 * readEvents streams the run's events after seq `after` to onEvent until
 * the server ends the stream (the run finished or waits) or signal aborts.
 * It returns the last seq seen.
 */
export async function readEvents(runID: string, after: number, onEvent: (ev: RunEvent) => void, signal: AbortSignal): Promise<number> {
  let last = after
  await apiStream(`/api/runs/${encodeURIComponent(runID)}/events?after=${after}`, { signal, headers: { Accept: 'text/event-stream' } }, (_, data) => {
    let ev: RunEvent
    try {
      ev = JSON.parse(data) as RunEvent
    } catch {
      return // a malformed event is skipped; the next one still counts
    }
    if (ev.seq) last = Math.max(last, ev.seq)
    onEvent(ev)
  })
  return last
}
