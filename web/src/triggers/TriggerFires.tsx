import { useTranslation } from 'react-i18next'
import { Link } from 'react-router-dom'
import { api } from '../api'
import { cellClass, EmptyState, ErrorAlert, Table, useLoad } from '../components/ui'
import { formatTime } from '../runs/format'
import { triggerPath, type Trigger, type TriggerFire } from './types'

/** TriggerFires lists the ticks a schedule fired, newest first: each with its run, the ticks a catch-up stood for, the process that won it, or why no run started. */
export function TriggerFires({ trigger }: { trigger: Trigger }) {
  const { t, i18n } = useTranslation()
  const fires = useLoad(() => api<{ data: TriggerFire[] }>(triggerPath(trigger.id) + '/fires?limit=50').then((r) => r.data), [trigger.id, trigger.updated_at])
  if (fires.error) return <ErrorAlert error={fires.error} />
  if (!fires.data) return <p className="text-sm text-slate-600 dark:text-slate-400">{t('triggers.firesLoading')}</p>
  if (fires.data.length === 0) return <EmptyState>{t('triggers.noFires')}</EmptyState>
  return (
    <Table caption={t('triggers.firesTitle', { name: trigger.name })} head={[t('triggers.tick'), t('triggers.run'), t('triggers.missed'), t('triggers.owner')]}>
      {fires.data.map((f) => (
        <tr key={f.tick}>
          <td className={cellClass}>
            <time dateTime={f.tick}>{formatTime(f.tick, i18n.language)}</time>
          </td>
          <td className={cellClass}>
            {f.run_id ? (
              <Link className="font-mono text-indigo-700 underline dark:text-indigo-300" to={'/runs/' + encodeURIComponent(f.run_id)} aria-label={t('runs.openRun', { id: f.run_id })}>
                {f.run_id.slice(0, 12)}
              </Link>
            ) : f.error ? (
              <span className="text-red-700 dark:text-red-300">{t('triggers.fireError', { error: f.error })}</span>
            ) : (
              t('triggers.starting')
            )}
          </td>
          <td className={cellClass}>{f.missed ? t('triggers.missedCount', { count: f.missed }) : '—'}</td>
          <td translate="no" className={cellClass + ' font-mono text-xs'}>
            {f.owner}
          </td>
        </tr>
      ))}
    </Table>
  )
}
