import { useTranslation } from 'react-i18next'
import { Link } from 'react-router-dom'
import { api } from '../api'
import { Button, cellClass, EmptyState, ErrorAlert, PageHeader, Section, Table, useLoad } from '../components/ui'
import { formatTime } from '../runs/format'
import { useSession } from '../session'

/** Worker is one entry of GET /api/workers (controlplane.WorkerStatus). */
interface Worker {
  id: string
  kind: string
  host: string
  pid: number
  version: string
  started_at: string
  seen_at: string
  status: 'live' | 'gone' | 'unregistered'
  runs: { run_id: string; node?: string }[]
  leases: { run_id: string; node?: string; until?: string; expired?: boolean }[]
}

const statusClass: Record<Worker['status'], string> = {
  live: 'text-green-800 dark:text-green-300',
  gone: 'text-slate-600 dark:text-slate-400',
  unregistered: 'text-amber-800 dark:text-amber-300',
}

/**
 * Workers is /workers, for workspace admins: the processes that execute
 * runs (`agentcraft worker`, and `serve` when it executes), as `agentcraft
 * workers` lists them — each with its status from its heartbeats, host,
 * pid, version, start and last heartbeat — and the runs of this workspace
 * each holds a lease on, with the node it is on and when the lease runs
 * out. A lease whose owner has no registry row shows as unregistered.
 */
export default function Workers() {
  const { t, i18n } = useTranslation()
  const { workspace } = useSession()
  const workers = useLoad(() => api<{ workers: Worker[] }>('/api/workers').then((r) => r.workers), [workspace])
  const list = workers.data ?? []
  const time = (s: string) => (s && !s.startsWith('0001-') ? formatTime(s, i18n.language) : '—')
  return (
    <div className="mx-auto max-w-6xl p-4">
      <PageHeader title={t('workers.title')}>
        <Button onClick={workers.reload}>{t('common.refresh')}</Button>
      </PageHeader>
      <p className="mb-3 text-sm text-slate-600 dark:text-slate-400">{t('workers.intro')}</p>
      <ErrorAlert error={workers.error} />
      {workers.data && list.length === 0 ? (
        <EmptyState>{t('workers.empty')}</EmptyState>
      ) : (
        <Table
          caption={t('workers.caption')}
          head={[t('workers.id'), t('workers.status'), t('workers.kind'), t('workers.host'), t('workers.version'), t('workers.started'), t('workers.seen'), t('workers.runs')]}
        >
          {list.map((w) => (
            <tr key={w.id}>
              <td translate="no" className={cellClass + ' font-mono font-medium'}>
                {w.id}
              </td>
              <td className={cellClass + ' whitespace-nowrap font-medium ' + statusClass[w.status]}>{t('workers.statuses.' + w.status)}</td>
              <td className={cellClass}>{w.kind ? t('workers.kinds.' + w.kind, { defaultValue: w.kind }) : '—'}</td>
              <td translate="no" className={cellClass + ' font-mono text-xs'}>
                {w.host ? `${w.host} (pid ${w.pid})` : '—'}
              </td>
              <td translate="no" className={cellClass + ' font-mono text-xs'}>
                {w.version || '—'}
              </td>
              <td className={cellClass + ' text-xs'}>{time(w.started_at)}</td>
              <td className={cellClass + ' text-xs'}>{time(w.seen_at)}</td>
              <td className={cellClass}>{t('workers.leaseCount', { count: w.leases.length })}</td>
            </tr>
          ))}
        </Table>
      )}
      {list.some((w) => w.leases.length > 0) && (
        <Section title={t('workers.leasesTitle')} className="mt-4">
          <Table caption={t('workers.leasesCaption')} head={[t('workers.id'), t('workers.run'), t('workers.node'), t('workers.until')]}>
            {list.flatMap((w) =>
              w.leases.map((l) => (
                <tr key={w.id + l.run_id}>
                  <td translate="no" className={cellClass + ' font-mono'}>
                    {w.id}
                  </td>
                  <td className={cellClass}>
                    <Link className="font-mono text-indigo-700 underline dark:text-indigo-300" to={'/runs/' + encodeURIComponent(l.run_id)} aria-label={t('runs.openRun', { id: l.run_id })}>
                      {l.run_id.slice(0, 12)}
                    </Link>
                  </td>
                  <td translate="no" className={cellClass + ' font-mono text-xs'}>
                    {l.node || '—'}
                  </td>
                  <td className={cellClass + ' text-xs'}>
                    {l.until ? time(l.until) : '—'}
                    {l.expired && <span className="ml-2 font-medium text-amber-800 dark:text-amber-300">{t('workers.expired')}</span>}
                  </td>
                </tr>
              )),
            )}
          </Table>
        </Section>
      )}
    </div>
  )
}
