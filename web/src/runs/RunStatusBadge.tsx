import { useTranslation } from 'react-i18next'
import type { RunStatus } from './types'

const colour: Record<string, string> = {
  queued: 'bg-slate-100 text-slate-800 dark:bg-slate-800 dark:text-slate-200',
  running: 'bg-sky-100 text-sky-900 dark:bg-sky-900 dark:text-sky-100',
  waiting: 'bg-amber-100 text-amber-900 dark:bg-amber-900 dark:text-amber-100',
  succeeded: 'bg-emerald-100 text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100',
  failed: 'bg-red-100 text-red-900 dark:bg-red-900 dark:text-red-100',
  failed_contract: 'bg-red-100 text-red-900 dark:bg-red-900 dark:text-red-100',
  canceled: 'bg-slate-200 text-slate-900 dark:bg-slate-700 dark:text-slate-100',
  blocked: 'bg-red-100 text-red-900 dark:bg-red-900 dark:text-red-100',
}

/** RunStatusBadge is a run's status as text on a colour (the text is the signal; colour helps). */
export function RunStatusBadge({ status }: { status: RunStatus }) {
  const { t } = useTranslation()
  return <span className={`rounded px-2 py-0.5 text-xs font-medium ${colour[status] ?? colour.queued}`}>{t('runs.status.' + status)}</span>
}
