import { useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { Link, useSearchParams } from 'react-router-dom'
import { api, APIError } from '../api'
import { Button, cellClass, EmptyState, ErrorAlert, Field, PageHeader, Section, Select, Table, TextArea, useLoad } from '../components/ui'
import { formatTime } from '../runs/format'
import { useCan, useSession } from '../session'
import { CapabilityBadge, SourceName, TaskStatusBadge } from './Badges'
import { taskSources, taskStatuses, type Outcome, type Task } from './types'

interface TaskPage {
  data: Task[]
  next?: string
}

/** TasksList is /tasks: the workspace's tasks, newest first, filtered by source and status (kept in the URL), and a form that asks for a new one. */
export default function TasksList() {
  const { t, i18n } = useTranslation()
  const { workspace } = useSession()
  const canRun = useCan('run')
  const [params, setParams] = useSearchParams()
  const source = params.get('source') ?? ''
  const status = params.get('status') ?? ''
  // more holds the pages after the first that "Load more" fetched.
  const [more, setMore] = useState<{ tasks: Task[]; next?: string } | null>(null)
  const first = useLoad(() => {
    setMore(null)
    const q = new URLSearchParams({ limit: '100' })
    if (source) q.set('source', source)
    if (status) q.set('status', status)
    return api<TaskPage>('/api/tasks?' + q)
  }, [workspace, source, status])
  const [moreError, setMoreError] = useState<unknown>()
  const next = more ? more.next : first.data?.next
  const tasks = [...(first.data?.data ?? []), ...(more?.tasks ?? [])]
  const loadMore = async () => {
    if (!next) return
    setMoreError(undefined)
    try {
      const q = new URLSearchParams({ limit: '100', cursor: next })
      if (source) q.set('source', source)
      if (status) q.set('status', status)
      const p = await api<TaskPage>('/api/tasks?' + q)
      setMore((m) => ({ tasks: [...(m?.tasks ?? []), ...p.data], next: p.next }))
    } catch (e) {
      setMoreError(e)
    }
  }
  const setFilter = (key: string, value: string) => {
    const n = new URLSearchParams(params)
    if (value) n.set(key, value)
    else n.delete(key)
    setParams(n, { replace: true })
  }
  return (
    <div className="mx-auto max-w-6xl p-4">
      <PageHeader title={t('tasks.title')}>
        <Button onClick={first.reload}>{t('common.refresh')}</Button>
      </PageHeader>
      {canRun && <NewTask onCreated={first.reload} />}
      <form role="search" aria-label={t('tasks.filters')} className="mb-2 flex flex-wrap gap-4" onSubmit={(e) => e.preventDefault()}>
        <Field label={t('tasks.filterSource')}>
          {(id) => (
            <Select id={id} value={source} onChange={(e) => setFilter('source', e.target.value)}>
              <option value="">{t('tasks.allSources')}</option>
              {taskSources.map((s) => (
                <option key={s} value={s}>
                  {t('tasks.source.' + s)}
                </option>
              ))}
            </Select>
          )}
        </Field>
        <Field label={t('tasks.filterStatus')}>
          {(id) => (
            <Select id={id} value={status} onChange={(e) => setFilter('status', e.target.value)}>
              <option value="">{t('tasks.allStatuses')}</option>
              {taskStatuses.map((s) => (
                <option key={s} value={s}>
                  {t('tasks.status.' + s)}
                </option>
              ))}
            </Select>
          )}
        </Field>
      </form>
      <ErrorAlert error={first.error ?? moreError} />
      {first.data && tasks.length === 0 && <EmptyState>{source || status ? t('tasks.noneMatching') : t('tasks.none')}</EmptyState>}
      {tasks.length > 0 && (
        <Table caption={t('tasks.tableCaption')} head={[t('tasks.titleHead'), t('tasks.statusHead'), t('tasks.capabilityHead'), t('tasks.sourceHead'), t('tasks.created')]}>
          {tasks.map((x) => (
            <tr key={x.id}>
              <td className={cellClass}>
                <Link className="text-indigo-700 underline dark:text-indigo-300" to={`/tasks/${encodeURIComponent(x.id)}`}>
                  <span translate="no">{x.title}</span>
                </Link>
              </td>
              <td className={cellClass}>
                <TaskStatusBadge status={x.status} />
              </td>
              <td className={cellClass}>
                <CapabilityBadge capability={x.capability} />
              </td>
              <td className={cellClass}>
                <SourceName source={x.source} />
              </td>
              <td className={cellClass}>{formatTime(x.created_at, i18n.language)}</td>
            </tr>
          ))}
        </Table>
      )}
      {next && (
        <Button className="mt-3" onClick={() => void loadMore()}>
          {t('tasks.loadMore')}
        </Button>
      )}
    </div>
  )
}

/** NewTask asks for a task in words (POST /api/tasks) and says what came of it: the task, or the question to answer first. */
function NewTask({ onCreated }: { onCreated: () => void }) {
  const { t } = useTranslation()
  const [text, setText] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const [outcome, setOutcome] = useState<Outcome | null>(null)
  const submit = async (e: FormEvent) => {
    e.preventDefault()
    if (!text.trim()) return
    setBusy(true)
    setError(undefined)
    setOutcome(null)
    try {
      const o = await api<Outcome>('/api/tasks', 'POST', { text: text.trim() })
      setOutcome(o)
      setText('')
      onCreated()
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  return (
    <Section title={t('tasks.new.title')}>
      <form onSubmit={(e) => void submit(e)}>
        <Field label={t('tasks.new.text')} help={t('tasks.new.help')}>
          {(id, describedBy) => <TextArea id={id} aria-describedby={describedBy} rows={2} value={text} onChange={(e) => setText(e.target.value)} maxLength={8000} />}
        </Field>
        <Button type="submit" variant="primary" disabled={busy || !text.trim()}>
          {t('tasks.new.submit')}
        </Button>
      </form>
      <div className="mt-3">
        {error instanceof APIError && error.code === 'tasks_model_not_configured' ? (
          // Words need a model to read them; say so in the user's language.
          <div role="alert" className="mb-3 rounded border border-red-300 bg-red-50 p-2 text-sm text-red-800 dark:border-red-700 dark:bg-red-950 dark:text-red-200">
            <p className="font-medium">{t('tasks.new.noModel')}</p>
            <p translate="no">{error.message}</p>
          </div>
        ) : (
          <ErrorAlert error={error} />
        )}
      </div>
      <div role="status">
        {outcome && (
          <p className="text-sm">
            {outcome.question ? t('tasks.new.question') + ' ' : outcome.duplicate ? t('tasks.new.duplicate') + ' ' : t('tasks.new.created') + ' '}
            {outcome.question && (
              <q className="font-medium" translate="no">
                {outcome.question}
              </q>
            )}{' '}
            <Link className="text-indigo-700 underline dark:text-indigo-300" to={`/tasks/${encodeURIComponent(outcome.task.id)}`}>
              <span translate="no">{outcome.task.title}</span>
            </Link>
          </p>
        )}
      </div>
    </Section>
  )
}
