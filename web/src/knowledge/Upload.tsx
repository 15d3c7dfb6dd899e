import { useId, useRef, useState, type DragEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { ErrorAlert } from '../components/ui'
import { ingest, type IngestJob } from './api'

/** FileProgress is one dropped file's place in its ingest job. */
interface FileProgress {
  key: string
  name: string
  /** percent is 0 until the job reports the file processed, then 100. */
  percent: number
  state: 'queued' | 'indexing' | 'done' | 'failed'
  chunks: number
  error?: string
}

function progressOf(job: IngestJob, name: string, index: number, prev: FileProgress): FileProgress {
  const f = job.files[index]?.name === name ? job.files[index] : job.files.find((x) => x.name === name)
  if (f?.status) {
    const failed = f.status === 'failed'
    return { ...prev, percent: 100, state: failed ? 'failed' : 'done', chunks: f.chunks ?? 0, error: f.error }
  }
  if (job.status === 'failed') return { ...prev, state: 'failed', error: job.error }
  return { ...prev, state: job.status === 'running' ? 'indexing' : 'queued' }
}

/** Upload takes files by drag-and-drop or a file input and ingests them, one progress bar per file. */
export function Upload({ kbID, onIngested }: { kbID: string; onIngested: () => void }) {
  const { t } = useTranslation()
  const inputID = useId()
  const [over, setOver] = useState(false)
  const [items, setItems] = useState<FileProgress[]>([])
  const [error, setError] = useState<unknown>()
  const seq = useRef(0)

  const start = async (files: File[]) => {
    if (files.length === 0) return
    setError(undefined)
    const batch = files.map((f) => ({ key: `${++seq.current}`, name: f.name, percent: 0, state: 'queued' as const, chunks: 0 }))
    setItems((cur) => [...cur, ...batch])
    const keys = new Set(batch.map((b) => b.key))
    try {
      await ingest(kbID, files, (job) =>
        setItems((cur) =>
          cur.map((it) => {
            if (!keys.has(it.key)) return it
            const i = batch.findIndex((b) => b.key === it.key)
            return progressOf(job, it.name, i, it)
          }),
        ),
      )
    } catch (e) {
      setError(e)
      setItems((cur) => cur.map((it) => (keys.has(it.key) && it.state !== 'done' ? { ...it, state: 'failed' } : it)))
    } finally {
      onIngested()
    }
  }

  const onDrop = (e: DragEvent<HTMLDivElement>) => {
    e.preventDefault()
    setOver(false)
    void start(Array.from(e.dataTransfer.files))
  }

  return (
    <div>
      <div
        onDragOver={(e) => {
          e.preventDefault()
          setOver(true)
        }}
        onDragLeave={() => setOver(false)}
        onDrop={onDrop}
        className={
          'flex flex-col items-center gap-2 rounded border-2 border-dashed p-6 text-center ' +
          (over ? 'border-indigo-600 bg-indigo-50 dark:border-indigo-400 dark:bg-indigo-950' : 'border-slate-300 dark:border-slate-600')
        }
      >
        <p className="text-sm text-slate-700 dark:text-slate-300">{t('knowledge.dropHere')}</p>
        <label htmlFor={inputID} className="cursor-pointer rounded border border-slate-300 bg-white px-3 py-1 text-sm font-medium hover:bg-slate-100 dark:border-slate-600 dark:bg-slate-900 dark:hover:bg-slate-800">
          {t('knowledge.chooseFiles')}
        </label>
        <input
          id={inputID}
          type="file"
          multiple
          className="sr-only"
          onChange={(e) => {
            const files = Array.from(e.target.files ?? [])
            e.target.value = ''
            void start(files)
          }}
        />
      </div>
      <ErrorAlert error={error} />
      {items.length > 0 && (
        <ul className="mt-3 space-y-2" aria-label={t('knowledge.uploads')}>
          {items.map((it) => (
            <li key={it.key} className="text-sm">
              <div className="flex justify-between gap-2">
                <span className="truncate font-medium">{it.name}</span>
                <span className={it.state === 'failed' ? 'text-red-700 dark:text-red-300' : 'text-slate-600 dark:text-slate-400'}>
                  {t(`knowledge.state.${it.state}`, { count: it.chunks })}
                  {it.error ? ` — ${it.error}` : ''}
                </span>
              </div>
              <div
                role="progressbar"
                aria-label={t('knowledge.progressOf', { name: it.name })}
                aria-valuemin={0}
                aria-valuemax={100}
                aria-valuenow={it.percent}
                aria-valuetext={`${it.percent}%`}
                className="mt-1 h-2 w-full overflow-hidden rounded bg-slate-200 dark:bg-slate-700"
              >
                <div
                  className={'h-full ' + (it.state === 'failed' ? 'bg-red-600' : 'bg-indigo-600 dark:bg-indigo-400') + ' ' + widthClass(it.percent)}
                />
              </div>
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}

// widthClass is the bar's width as a class: the CSP (style-src 'self')
// refuses style attributes. A file is empty until processed, then full.
function widthClass(percent: number): string {
  if (percent >= 100) return 'w-full'
  if (percent > 0) return 'w-1/2'
  return 'w-0'
}
