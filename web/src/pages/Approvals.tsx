import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Link, useSearchParams } from 'react-router-dom'
import { api } from '../api'
import { Button, EmptyState, ErrorAlert, Field, PageHeader, Section, Select, useLoad } from '../components/ui'
import { formatTime } from '../runs/format'
import { useSession } from '../session'
import { ApprovalStatusBadge, CapabilityBadge } from '../tasks/Badges'
import { Decide } from '../tasks/Decide'
import { relativeTime } from '../tasks/format'
import { approvalStatuses, type Approval, type ApprovalStatus, type Task } from '../tasks/types'

/**
 * Approvals is the inbox of capability approvals: a step of a task that
 * may run only once a person with the right role says yes. Pending ones
 * are listed with Approve and Reject; a decided one leaves the list (the
 * page asks the server again). The status filter, kept in the URL, shows
 * the decided ones.
 */
export default function Approvals() {
  const { t, i18n } = useTranslation()
  const { workspace } = useSession()
  const [params, setParams] = useSearchParams()
  const status = (params.get('status') ?? 'pending') as ApprovalStatus
  const [notice, setNotice] = useState('')
  const approvals = useLoad(() => api<{ data: Approval[] }>('/api/approvals?status=' + encodeURIComponent(status)).then((r) => r.data), [workspace, status])
  // The titles of the approvals' tasks: the newest tasks, one request
  // rather than one per approval; an older task shows its id.
  const tasks = useLoad(() => api<{ data: Task[] }>('/api/tasks?limit=500').then((r) => r.data), [workspace])
  const titles = new Map((tasks.data ?? []).map((x) => [x.id, x.title]))
  const setStatus = (s: string) => {
    const next = new URLSearchParams(params)
    if (s === 'pending') next.delete('status')
    else next.set('status', s)
    setParams(next, { replace: true })
  }
  const decided = (a: Approval, approved: boolean) => {
    setNotice(t(approved ? 'approvals.approved' : 'approvals.rejected', { summary: a.summary }))
    approvals.reload()
    tasks.reload()
  }
  const list = approvals.data ?? []
  return (
    <div className="mx-auto max-w-4xl p-4">
      <PageHeader title={t('approvals.title')}>
        <Button onClick={approvals.reload}>{t('common.refresh')}</Button>
      </PageHeader>
      <p role="status" className={notice ? 'mb-3 rounded border border-emerald-300 bg-emerald-50 p-2 text-sm text-emerald-900 dark:border-emerald-700 dark:bg-emerald-950 dark:text-emerald-100' : 'sr-only'}>
        {notice}
      </p>
      <form role="search" aria-label={t('approvals.filters')} className="mb-2 flex flex-wrap gap-4" onSubmit={(e) => e.preventDefault()}>
        <Field label={t('approvals.filterStatus')}>
          {(id) => (
            <Select id={id} value={status} onChange={(e) => setStatus(e.target.value)}>
              {approvalStatuses.map((s) => (
                <option key={s} value={s}>
                  {t('tasks.approvalStatus.' + s)}
                </option>
              ))}
            </Select>
          )}
        </Field>
      </form>
      <ErrorAlert error={approvals.error} />
      {approvals.data && list.length === 0 && <EmptyState>{status === 'pending' ? t('approvals.empty') : t('approvals.noneDecided')}</EmptyState>}
      {list.length > 0 && (
        <ul aria-label={t('approvals.listLabel')} className="mb-4 flex flex-col gap-3" aria-busy={approvals.loading}>
          {list.map((a) => (
            <li key={a.id} className="rounded border border-slate-200 p-3 dark:border-slate-700">
              <div className="flex flex-wrap items-center gap-2">
                <CapabilityBadge capability={a.capability} />
                {a.status !== 'pending' && <ApprovalStatusBadge status={a.status} />}
                <span className="font-medium" translate="no">
                  {a.summary}
                </span>
              </div>
              <dl className="mt-1 grid grid-cols-[max-content_1fr] gap-x-3 text-sm text-slate-700 dark:text-slate-300">
                <dt>{t('approvals.task')}</dt>
                <dd>
                  <Link to={`/tasks/${encodeURIComponent(a.task_id)}`} className="text-indigo-700 underline dark:text-indigo-300">
                    <span translate="no">{titles.get(a.task_id) ?? a.task_id}</span>
                  </Link>
                </dd>
                {a.requested_by && (
                  <>
                    <dt>{t('approvals.requestedBy')}</dt>
                    <dd translate="no">{a.requested_by}</dd>
                  </>
                )}
                <dt>{t('approvals.requestedAt')}</dt>
                <dd>{formatTime(a.created_at, i18n.language)}</dd>
                {a.status === 'pending' && a.expires_at && (
                  <>
                    <dt>{t('approvals.expires')}</dt>
                    <dd>
                      <time dateTime={a.expires_at} title={formatTime(a.expires_at, i18n.language)}>
                        {relativeTime(a.expires_at, i18n.language)}
                      </time>
                    </dd>
                  </>
                )}
                {a.decided_at && (
                  <>
                    <dt>{t('approvals.decidedAt')}</dt>
                    <dd>{formatTime(a.decided_at, i18n.language)}</dd>
                  </>
                )}
                {a.approver_user_id && (
                  <>
                    <dt>{t('approvals.decidedBy')}</dt>
                    <dd translate="no">{a.approver_user_id}</dd>
                  </>
                )}
              </dl>
              {a.status === 'pending' && (
                <>
                  <p className="mt-1 text-xs text-slate-600 dark:text-slate-400">{t('approvals.' + a.capability)}</p>
                  <Decide approval={a} onDecided={decided} />
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      <Section title={t('approvals.whoTitle')} className="mt-4">
        <ul className="list-disc pl-5 text-sm">
          <li>{t('approvals.low')}</li>
          <li>{t('approvals.medium')}</li>
          <li>{t('approvals.high')}</li>
        </ul>
      </Section>
      <p className="text-sm">
        {t('approvals.humanSteps')}{' '}
        <Link to="/runs" className="text-indigo-700 underline dark:text-indigo-300">
          {t('approvals.runsLink')}
        </Link>
      </p>
    </div>
  )
}
