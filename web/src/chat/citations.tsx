import { useEffect, useId, useRef } from 'react'
import { useTranslation } from 'react-i18next'
import { Button } from '../components/ui'

/** Citation is one entry of the AG-UI "citations" CUSTOM event: the passage an answer's [n] refers to. */
export interface Citation {
  n: number
  source: string
  label: string
  kb?: string
  page?: number
  heading?: string
  text: string
  score: number
}

/** Citations lists an answer's sources as buttons that open the cited passage. */
export function Citations({ cites, onOpen }: { cites: Citation[]; onOpen: (c: Citation) => void }) {
  const { t } = useTranslation()
  if (cites.length === 0) return null
  return (
    <nav aria-label={t('chat.citations')} className="mt-2 border-t border-slate-300 pt-2 text-sm dark:border-slate-600">
      <h3 className="mb-1 text-xs font-semibold text-slate-700 dark:text-slate-300">{t('chat.citations')}</h3>
      <ul className="flex flex-wrap gap-2">
        {cites.map((c) => (
          <li key={c.n}>
            <button
              type="button"
              className="rounded border border-slate-400 bg-white px-2 py-0.5 text-left text-xs text-slate-900 underline hover:bg-slate-50 dark:border-slate-500 dark:bg-slate-900 dark:text-slate-100 dark:hover:bg-slate-800"
              onClick={() => onOpen(c)}
            >
              [{c.n}] {c.label || c.source}
            </button>
          </li>
        ))}
      </ul>
    </nav>
  )
}

/** PassageDialog shows a cited passage in a modal dialog (Escape or Close returns to the chat). */
export function PassageDialog({ cite, onClose }: { cite: Citation | null; onClose: () => void }) {
  const { t } = useTranslation()
  const ref = useRef<HTMLDialogElement>(null)
  const titleID = useId()
  useEffect(() => {
    const d = ref.current
    if (!d) return
    if (cite && !d.open) d.showModal()
    if (!cite && d.open) d.close()
  }, [cite])
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleID}
      onClose={onClose}
      className="m-auto w-[40rem] max-w-[90vw] rounded-lg border border-slate-300 bg-white p-4 text-slate-900 backdrop:bg-slate-900/50 dark:border-slate-600 dark:bg-slate-900 dark:text-slate-100"
    >
      {cite && (
        <>
          <h2 id={titleID} className="mb-1 text-lg font-semibold">
            {t('chat.passageTitle', { n: cite.n, source: cite.source })}
          </h2>
          {(cite.heading || cite.page) && (
            <p className="mb-2 text-sm text-slate-600 dark:text-slate-400">
              {[cite.page ? t('chat.page', { page: cite.page }) : '', cite.heading ?? ''].filter(Boolean).join(' · ')}
            </p>
          )}
          <blockquote className="max-h-[60vh] overflow-auto whitespace-pre-wrap rounded bg-slate-100 p-3 text-sm dark:bg-slate-800">{cite.text}</blockquote>
          <div className="mt-3 flex justify-end">
            <Button onClick={onClose} autoFocus>
              {t('common.close')}
            </Button>
          </div>
        </>
      )}
    </dialog>
  )
}
