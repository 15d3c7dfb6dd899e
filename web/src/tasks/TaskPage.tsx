import { useRef, useState, type ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import { Link, useParams } from 'react-router-dom'
import { ConfirmDialog } from '../components/ConfirmDialog'
import { Button, cellClass, EmptyState, ErrorAlert, PageHeader, Section, Table, useLoad } from '../components/ui'
import { api, fetchOnce } from '../api'
import { formatTime, pretty } from '../runs/format'
import { RunStatusBadge } from '../runs/RunStatusBadge'
import { useCan, useSession } from '../session'
import { ApprovalStatusBadge, CapabilityBadge, SourceName, StepStatusBadge, TaskStatusBadge } from './Badges'
import { Decide } from './Decide'
import { relativeTime } from './format'
import { knownEvents, type Approval, type Compensation, type TaskView } from './types'

/** taskPath is the API path of the task of id. */
export const taskPath = (id: string) => '/api/tasks/' + encodeURIComponent(id)

/** JSONValue shows a JSON value folded under label, as data (never translated). */
function JSONValue({ label, value }: { label: string; value: unknown }) {
  if (value === undefined || value === null) return null
  return (
    <details>
      <summary className="cursor-pointer text-indigo-700 underline dark:text-indigo-300">{label}</summary>
      <pre translate="no" className="mt-1 max-h-64 max-w-md overflow-auto whitespace-pre-wrap break-all rounded bg-slate-100 p-2 text-xs dark:bg-slate-800">
        {pretty(value)}
      </pre>
    </details>
  )
}

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="flex items-center gap-2">
      <dt className="text-slate-600 dark:text-slate-400">{label}</dt>
      <dd>{children}</dd>
    </div>
  )
}

/**
 * TaskPage is /tasks/<id>: what was asked, its approvals (decided here
 * when pending), the evidence of what it did (its steps, with input,
 * output and whether each can be undone), its runs and its history; and
 * Compensate, which undoes its side effects newest first and reports
 * what could not be undone and why.
 */
export default function TaskPage() {
  const { t, i18n } = useTranslation()
  const { id = '' } = useParams()
  const { workspace } = useSession()
  const canDecide = useCan('approve_low')
  // The first load takes the answer the route's prefetch started.
  const firstLoad = useRef(true)
  const view = useLoad(() => {
    const first = firstLoad.current
    firstLoad.current = false
    return first ? fetchOnce<TaskView>(taskPath(id)) : api<TaskView>(taskPath(id))
  }, [id, workspace])
  const [notice, setNotice] = useState('')
  const [confirming, setConfirming] = useState(false)
  const [report, setReport] = useState<Compensation | null>(null)

  if (view.error && !view.data) {
    return (
      <div className="mx-auto max-w-6xl p-4">
        <PageHeader title={t('tasks.taskTitle')} />
        <ErrorAlert error={view.error} />
        <Link to="/tasks" className="text-indigo-700 underline dark:text-indigo-300">
          {t('tasks.back')}
        </Link>
      </div>
    )
  }
  if (!view.data) {
    return (
      <p role="status" className="p-4">
        {t('tasks.loading')}
      </p>
    )
  }
  const { task, runs, steps, events, approvals } = view.data
  const decided = (a: Approval, approved: boolean) => {
    setNotice(t(approved ? 'approvals.approved' : 'approvals.rejected', { summary: a.summary }))
    view.reload()
  }
  const compensate = async () => {
    const r = await api<Compensation>(taskPath(id) + '/compensate', 'POST', {})
    setReport(r)
    setNotice(t('tasks.compensate.done', { undone: r.undone.length, notUndone: r.not_undone.length }))
    view.reload()
  }
  return (
    <div className="mx-auto max-w-6xl p-4">
      <nav aria-label={t('tasks.breadcrumb')} className="mb-2 text-sm">
        <Link to="/tasks" className="text-indigo-700 underline dark:text-indigo-300">
          {t('tasks.back')}
        </Link>
      </nav>
      <PageHeader title={<span translate="no">{task.title}</span>}>
        <Button onClick={view.reload}>{t('common.refresh')}</Button>
        {canDecide && (
          <Button variant="danger" onClick={() => setConfirming(true)} disabled={!steps?.length}>
            {t('tasks.compensate.button')}
          </Button>
        )}
      </PageHeader>
      <p role="status" className={notice ? 'mb-3 rounded border border-emerald-300 bg-emerald-50 p-2 text-sm text-emerald-900 dark:border-emerald-700 dark:bg-emerald-950 dark:text-emerald-100' : 'sr-only'}>
        {notice}
      </p>
      <ErrorAlert error={view.error} />
      <dl className="mb-4 flex flex-wrap gap-x-6 gap-y-2 text-sm" aria-label={t('tasks.summary')}>
        <Fact label={t('tasks.statusHead')}>
          <TaskStatusBadge status={task.status} />
        </Fact>
        <Fact label={t('tasks.capabilityHead')}>
          <CapabilityBadge capability={task.capability} />
        </Fact>
        <Fact label={t('tasks.sourceHead')}>
          <SourceName source={task.source} />
        </Fact>
        <Fact label={t('tasks.created')}>{formatTime(task.created_at, i18n.language)}</Fact>
        {task.created_by && (
          <Fact label={t('tasks.createdBy')}>
            <span translate="no">{task.created_by}</span>
          </Fact>
        )}
      </dl>
      {task.detail && (
        <p className="mb-3 text-sm" translate="no">
          {task.detail}
        </p>
      )}
      {task.intent && (
        <div className="mb-4 text-sm">
          <JSONValue label={t('tasks.intent')} value={task.intent} />
        </div>
      )}

      {report && (
        <Section title={t('tasks.compensate.report')}>
          <h3 className="mb-1 text-sm font-semibold">{t('tasks.compensate.undone')}</h3>
          {report.undone.length === 0 ? (
            <p className="mb-2 text-sm">{t('common.none')}</p>
          ) : (
            <ul className="mb-2 list-disc pl-5 text-sm">
              {report.undone.map((u) => (
                <li key={u.seq}>
                  {t('tasks.compensate.undoneItem', { seq: u.seq, by: u.undo_step_seq })} <code translate="no">{u.tool}</code>
                </li>
              ))}
            </ul>
          )}
          <h3 className="mb-1 text-sm font-semibold">{t('tasks.compensate.notUndone')}</h3>
          {report.not_undone.length === 0 ? (
            <p className="text-sm">{t('common.none')}</p>
          ) : (
            <ul className="list-disc pl-5 text-sm">
              {report.not_undone.map((u) => (
                <li key={u.seq}>
                  {t('tasks.compensate.notUndoneItem', { seq: u.seq })} <code translate="no">{u.tool}</code>: <span translate="no">{u.reason}</span>
                </li>
              ))}
            </ul>
          )}
        </Section>
      )}

      <Section title={t('tasks.approvals')}>
        {!approvals?.length ? (
          <p className="text-sm">{t('tasks.noApprovals')}</p>
        ) : (
          <ul className="flex flex-col gap-3">
            {approvals.map((a) => (
              <li key={a.id} className="rounded border border-slate-200 p-3 dark:border-slate-700">
                <div className="flex flex-wrap items-center gap-2">
                  <CapabilityBadge capability={a.capability} />
                  <ApprovalStatusBadge status={a.status} />
                  <span className="font-medium" translate="no">
                    {a.summary}
                  </span>
                </div>
                <p className="mt-1 text-xs text-slate-600 dark:text-slate-400">
                  {a.status === 'pending'
                    ? a.expires_at
                      ? t('tasks.expiresAt', { when: relativeTime(a.expires_at, i18n.language) })
                      : t('approvals.' + a.capability)
                    : a.decided_at
                      ? t('tasks.decidedAt', { when: formatTime(a.decided_at, i18n.language) })
                      : null}
                </p>
                {a.status === 'pending' && canDecide && <Decide approval={a} onDecided={decided} />}
              </li>
            ))}
          </ul>
        )}
      </Section>

      <Section title={t('tasks.steps')}>
        {!steps?.length ? (
          <EmptyState>{t('tasks.noSteps')}</EmptyState>
        ) : (
          <div className="overflow-x-auto">
            <Table
              caption={t('tasks.stepsCaption')}
              head={[t('tasks.seq'), t('tasks.tool'), t('tasks.capabilityHead'), t('tasks.statusHead'), t('tasks.evidence'), t('tasks.undo'), t('tasks.finished')]}
            >
              {steps.map((s) => (
                <tr key={s.seq}>
                  <td className={cellClass}>{s.seq}</td>
                  <td className={cellClass}>
                    <code translate="no">{s.tool ?? ''}</code>
                  </td>
                  <td className={cellClass}>
                    <CapabilityBadge capability={s.capability} />
                  </td>
                  <td className={cellClass}>
                    <StepStatusBadge status={s.status} />
                    {s.error && (
                      <p className="mt-1 text-xs text-red-800 dark:text-red-300" translate="no">
                        {s.error}
                      </p>
                    )}
                  </td>
                  <td className={cellClass}>
                    <JSONValue label={t('tasks.input')} value={s.input} />
                    <JSONValue label={t('tasks.output')} value={s.output} />
                  </td>
                  <td className={cellClass}>{s.undo !== undefined && s.undo !== null ? t('tasks.undoYes') : t('tasks.undoNo')}</td>
                  <td className={cellClass}>{s.finished_at ? formatTime(s.finished_at, i18n.language) : t('tasks.notFinished')}</td>
                </tr>
              ))}
            </Table>
          </div>
        )}
      </Section>

      <Section title={t('tasks.runs')}>
        {!runs?.length ? (
          <p className="text-sm">{t('tasks.noRuns')}</p>
        ) : (
          <ul className="flex flex-col gap-1 text-sm">
            {runs.map((r) => (
              <li key={r.id} className="flex items-center gap-2">
                <Link className="font-mono text-indigo-700 underline dark:text-indigo-300" to={`/runs/${encodeURIComponent(r.id)}`} aria-label={t('runs.openRun', { id: r.id })}>
                  {r.id.slice(0, 12)}
                </Link>
                <RunStatusBadge status={r.status} />
                <span>{formatTime(r.created_at, i18n.language)}</span>
              </li>
            ))}
          </ul>
        )}
      </Section>

      <Section title={t('tasks.events')}>
        {!events?.length ? (
          <p className="text-sm">{t('tasks.noEvents')}</p>
        ) : (
          <ol className="border-l border-slate-300 pl-4 text-sm dark:border-slate-600">
            {events.map((e) => (
              <li key={e.seq} className="mb-2">
                <span className="font-medium">{knownEvents.includes(e.type) ? t('tasks.event.' + e.type) : <span translate="no">{e.type}</span>}</span>{' '}
                <time className="text-slate-600 dark:text-slate-400" dateTime={e.created_at}>
                  {formatTime(e.created_at, i18n.language)}
                </time>
                {e.actor && (
                  <>
                    {' '}
                    <span className="text-slate-600 dark:text-slate-400">{t('tasks.by')}</span> <span translate="no">{e.actor}</span>
                  </>
                )}
                <JSONValue label={t('tasks.payload')} value={e.payload} />
              </li>
            ))}
          </ol>
        )}
      </Section>

      <ConfirmDialog
        open={confirming}
        title={t('tasks.compensate.confirmTitle')}
        body={t('tasks.compensate.confirmBody')}
        confirm={t('tasks.compensate.confirm')}
        onConfirm={compensate}
        onClose={() => setConfirming(false)}
      />
    </div>
  )
}
