// The knowledge API as the Knowledge page reads it.
import { apiFetch, APIError } from '../api'

export interface KnowledgeBase {
  id: string
  name: string
  description?: string
}

export interface SourceInfo {
  name: string
  documents: number
  chunks: number
}

export interface IngestFile {
  name: string
  status?: string
  chunks?: number
  error?: string
}

export interface IngestJob {
  id: string
  status: 'queued' | 'running' | 'succeeded' | 'partial' | 'failed'
  files: IngestFile[]
  files_done: number
  chunks: number
  error?: string
}

export interface Hit {
  id: string
  score: number
  title?: string
  text: string
  metadata?: Record<string, string>
}

export type SearchMode = 'fulltext' | 'vector' | 'hybrid'

/**
 * ingest posts files to a base as one multipart job and calls onJob with
 * the job each time the server's SSE progress stream reports it, until the
 * stream ends ("done" or "failed").
 */
export async function ingest(kbID: string, files: File[], onJob: (j: IngestJob) => void): Promise<IngestJob | undefined> {
  const form = new FormData()
  for (const f of files) form.append('file', f, f.name)
  const resp = await apiFetch(`/api/kbs/${encodeURIComponent(kbID)}/ingest`, { method: 'POST', body: form })
  if (!resp.ok || !resp.body) {
    let message = resp.statusText
    let code = ''
    try {
      const b = await resp.json()
      message = b?.error?.message ?? message
      code = b?.error?.code ?? ''
    } catch {
      // not JSON
    }
    throw new APIError(resp.status, message, code, null)
  }
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader()
  let buf = ''
  let last: IngestJob | undefined
  for (;;) {
    const { value, done } = await reader.read()
    if (done) break
    buf += value
    let i: number
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i)
      buf = buf.slice(i + 2)
      let event = 'message'
      let data = ''
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim()
        else if (line.startsWith('data:')) data += line.slice(5).trim()
      }
      if (!data) continue
      if (event === 'error') throw new Error(JSON.parse(data).message)
      last = JSON.parse(data) as IngestJob
      onJob(last)
    }
  }
  return last
}
