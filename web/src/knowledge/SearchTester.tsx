import { useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { api } from '../api'
import { Button, ErrorAlert, Field, TextInput } from '../components/ui'
import type { Hit, SearchMode } from './api'

const modes: SearchMode[] = ['fulltext', 'vector', 'hybrid']

interface Column {
  hits?: Hit[]
  note?: string
  error?: unknown
}

/** SearchTester runs one query in BM25, vector and hybrid mode and shows the three rankings side by side. */
export function SearchTester({ kbID }: { kbID: string }) {
  const { t } = useTranslation()
  const [query, setQuery] = useState('')
  const [busy, setBusy] = useState(false)
  const [cols, setCols] = useState<Partial<Record<SearchMode, Column>>>({})

  const run = async (e: FormEvent) => {
    e.preventDefault()
    if (!query.trim()) return
    setBusy(true)
    const out = await Promise.all(
      modes.map(async (mode): Promise<[SearchMode, Column]> => {
        try {
          const r = await api<{ hits: Hit[]; note?: string }>(`/api/kbs/${encodeURIComponent(kbID)}/search`, 'POST', { query, mode, top_k: 5 })
          return [mode, { hits: r.hits, note: r.note }]
        } catch (error) {
          return [mode, { error }]
        }
      }),
    )
    setCols(Object.fromEntries(out))
    setBusy(false)
  }

  return (
    <div>
      <form onSubmit={run} className="flex items-end gap-2">
        <div className="flex-1">
          <Field label={t('knowledge.query')}>{(id) => <TextInput id={id} className="w-full" value={query} onChange={(e) => setQuery(e.target.value)} />}</Field>
        </div>
        <div className="mb-3">
          <Button type="submit" variant="primary" disabled={busy || !query.trim()}>
            {t('knowledge.search')}
          </Button>
        </div>
      </form>
      <div className="grid grid-cols-3 gap-3">
        {modes.map((mode) => {
          const c = cols[mode]
          const headingID = `search-col-${mode}`
          return (
            <section key={mode} aria-labelledby={headingID} className="min-w-0 rounded border border-slate-200 p-2 dark:border-slate-700">
              <h3 id={headingID} className="mb-2 text-sm font-semibold">
                {t(`knowledge.mode.${mode}`)}
              </h3>
              {c?.error ? <ErrorAlert error={c.error} /> : null}
              {c?.note && <p className="mb-2 text-xs text-slate-600 dark:text-slate-400">{c.note}</p>}
              {c?.hits && c.hits.length === 0 && <p className="text-sm text-slate-600 dark:text-slate-400">{t('knowledge.noHits')}</p>}
              {c?.hits && c.hits.length > 0 && (
                <ol className="space-y-2">
                  {c.hits.map((h, i) => (
                    <li key={h.id} className="rounded bg-slate-50 p-2 text-sm dark:bg-slate-800">
                      <div className="flex justify-between gap-2 text-xs text-slate-600 dark:text-slate-400">
                        <span className="truncate">
                          {i + 1}. {h.metadata?.source || h.title || h.id}
                        </span>
                        <span>{t('knowledge.score', { score: h.score.toFixed(3) })}</span>
                      </div>
                      <p className="mt-1 line-clamp-4 whitespace-pre-wrap">{h.text}</p>
                    </li>
                  ))}
                </ol>
              )}
            </section>
          )
        })}
      </div>
    </div>
  )
}
