// Reads a run's event stream (GET /api/runs/{id}/events) with fetch, so
// it carries X-Workspace as every API call does (EventSource cannot send
// headers).
import { APIError, apiFetch } from '../api'
import type { RunEvent } from './types'

/**
 * readEvents streams the run's events after seq `after` to onEvent until
 * the server ends the stream (the run finished or waits) or signal aborts.
 * It returns the last seq seen.
 */
export async function readEvents(runID: string, after: number, onEvent: (ev: RunEvent) => void, signal: AbortSignal): Promise<number> {
  const resp = await apiFetch(`/api/runs/${encodeURIComponent(runID)}/events?after=${after}`, { signal, headers: { Accept: 'text/event-stream' } })
  if (!resp.ok || !resp.body) {
    let message = resp.statusText
    try {
      message = (await resp.json())?.error?.message ?? message
    } catch {
      // not JSON
    }
    throw new APIError(resp.status, message, '', null)
  }
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader()
  let buf = ''
  let last = after
  let data: string[] = []
  const dispatch = () => {
    if (data.length === 0) return
    try {
      const ev = JSON.parse(data.join('\n')) as RunEvent
      if (ev.seq) last = Math.max(last, ev.seq)
      onEvent(ev)
    } catch {
      // a malformed event is skipped; the next one still counts
    }
    data = []
  }
  for (;;) {
    const { value, done } = await reader.read()
    if (done) break
    buf += value
    let nl: number
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, '')
      buf = buf.slice(nl + 1)
      if (line === '') dispatch()
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''))
      // id:, event: and comments (keep-alives) need nothing: the JSON has seq and type.
    }
  }
  dispatch()
  return last
}
