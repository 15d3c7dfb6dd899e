import { Link, useSearchParams } from 'react-router-dom'
import { useTranslation } from 'react-i18next'
import { api } from '../api'
import { EmptyState, ErrorAlert, Field, PageHeader, Select, Table, cellClass, useLoad, Button } from '../components/ui'
import { formatDuration, formatTime, runDurationMs } from './format'
import { RunStatusBadge } from './RunStatusBadge'
import { runStatuses, type Run } from './types'

interface WorkflowSummary {
  id: string
  name: string
  version: number
}

interface TriggerSummary {
  id: string
  name: string
}

/**
 * RunsList is /runs: the workspace's runs, newest first, each with the
 * trigger that started it (if one did), filtered by status, workflow and
 * trigger (kept in the URL).
 */
export default function RunsList() {
  const { t, i18n } = useTranslation()
  const [params, setParams] = useSearchParams()
  const status = params.get('status') ?? ''
  const workflow = params.get('workflow') ?? ''
  const trigger = params.get('trigger') ?? ''
  const workflows = useLoad(() => api<{ data: WorkflowSummary[] }>('/api/workflows').then((r) => r.data), [])
  // A server without triggers answers 503: its runs have none to name.
  const triggers = useLoad(
    () =>
      api<{ data: TriggerSummary[] }>('/api/triggers')
        .then((r) => r.data)
        .catch(() => [] as TriggerSummary[]),
    [],
  )
  const runs = useLoad(() => {
    const q = new URLSearchParams({ limit: '200' })
    if (status) q.set('status', status)
    if (workflow) q.set('workflow_id', workflow)
    if (trigger) q.set('trigger_id', trigger)
    return api<{ data: Run[] }>('/api/runs?' + q).then((r) => r.data)
  }, [status, workflow, trigger])
  const names = new Map((workflows.data ?? []).map((w) => [w.id, w.name]))
  const triggerNames = new Map((triggers.data ?? []).map((tr) => [tr.id, tr.name]))
  const setFilter = (key: string, value: string) => {
    const next = new URLSearchParams(params)
    if (value) next.set(key, value)
    else next.delete(key)
    setParams(next, { replace: true })
  }
  return (
    <div className="p-6">
      <PageHeader title={t('runs.title')}>
        <Button onClick={runs.reload}>{t('common.refresh')}</Button>
      </PageHeader>
      <form role="search" aria-label={t('runs.filters')} className="mb-4 flex flex-wrap gap-4" onSubmit={(e) => e.preventDefault()}>
        <Field label={t('runs.filterStatus')}>
          {(id) => (
            <Select id={id} value={status} onChange={(e) => setFilter('status', e.target.value)}>
              <option value="">{t('runs.allStatuses')}</option>
              {runStatuses.map((s) => (
                <option key={s} value={s}>
                  {t('runs.status.' + s)}
                </option>
              ))}
            </Select>
          )}
        </Field>
        <Field label={t('runs.filterWorkflow')}>
          {(id) => (
            <Select id={id} value={workflow} onChange={(e) => setFilter('workflow', e.target.value)}>
              <option value="">{t('runs.allWorkflows')}</option>
              {(workflows.data ?? []).map((w) => (
                <option key={w.id} value={w.id}>
                  {w.name}
                </option>
              ))}
            </Select>
          )}
        </Field>
        {(trigger || triggerNames.size > 0) && (
          <Field label={t('runs.filterTrigger')}>
            {(id) => (
              <Select id={id} value={trigger} onChange={(e) => setFilter('trigger', e.target.value)}>
                <option value="">{t('runs.allTriggers')}</option>
                {trigger && !triggerNames.has(trigger) && <option value={trigger}>{trigger}</option>}
                {(triggers.data ?? []).map((tr) => (
                  <option key={tr.id} value={tr.id}>
                    {tr.name}
                  </option>
                ))}
              </Select>
            )}
          </Field>
        )}
      </form>
      <ErrorAlert error={runs.error ?? workflows.error} />
      {runs.data && runs.data.length === 0 && <EmptyState>{status || workflow || trigger ? t('runs.noneMatching') : t('runs.none')}</EmptyState>}
      {runs.data && runs.data.length > 0 && (
        <Table caption={t('runs.tableCaption')} head={[t('runs.run'), t('runs.workflow'), t('runs.trigger'), t('runs.statusHead'), t('runs.started'), t('runs.duration')]}>
          {runs.data.map((r) => (
            <tr key={r.id}>
              <td className={cellClass}>
                <Link className="font-mono text-indigo-700 underline dark:text-indigo-300" to={`/runs/${encodeURIComponent(r.id)}`} aria-label={t('runs.openRun', { id: r.id })}>
                  {r.id.slice(0, 12)}
                </Link>
              </td>
              <td className={cellClass}>
                {r.workflow_id ? (names.get(r.workflow_id) ?? r.workflow_id) : (r.definition?.name ?? t('runs.adHoc'))}
                {r.workflow_version ? <span className="ml-1 text-slate-600 dark:text-slate-400">{t('runs.version', { version: r.workflow_version })}</span> : null}
              </td>
              <td translate="no" className={cellClass}>
                {r.trigger_id ? (triggerNames.get(r.trigger_id) ?? r.trigger_id.slice(0, 12)) : ''}
              </td>
              <td className={cellClass}>
                <RunStatusBadge status={r.status} />
              </td>
              <td className={cellClass}>{formatTime(r.created_at, i18n.language)}</td>
              <td className={cellClass}>{r.finished_at ? formatDuration(runDurationMs(r.created_at, r.finished_at), i18n.language) : t('runs.notFinished')}</td>
            </tr>
          ))}
        </Table>
      )}
    </div>
  )
}
