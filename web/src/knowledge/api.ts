// The knowledge API as the Knowledge page reads it.
import { apiStream } from '../api'

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
  let last: IngestJob | undefined
  await apiStream(`/api/kbs/${encodeURIComponent(kbID)}/ingest`, { method: 'POST', body: form }, (event, data) => {
    if (event === 'error') throw new Error(JSON.parse(data).message)
    last = JSON.parse(data) as IngestJob
    onJob(last)
  })
  return last
}
