// Studio: the workflows of the workspace (/studio) and the canvas editor
// of one (/studio/<id>).
import { useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { Link, useNavigate, useParams } from 'react-router-dom'
import { api } from '../api'
import { Button, cellClass, EmptyState, ErrorAlert, Field, PageHeader, Section, Table, TextInput, useLoad } from '../components/ui'
import { Editor } from '../studio/Editor'

interface WorkflowSummary {
  id: string
  name: string
  description?: string
  version: number
  updated_at: string
}

function List() {
  const { t } = useTranslation()
  const navigate = useNavigate()
  const list = useLoad(() => api<{ data: WorkflowSummary[] }>('/api/workflows'), [])
  const [name, setName] = useState('')
  const [error, setError] = useState<unknown>()
  const create = async (e: FormEvent) => {
    e.preventDefault()
    setError(undefined)
    const n = name.trim()
    if (!n) {
      setError(new Error(t('studio.nameRequired')))
      return
    }
    // A new workflow is the smallest valid one: start straight to end.
    const def = {
      name: n,
      nodes: [
        { id: 'start', type: 'start', position: { x: 0, y: 0 } },
        { id: 'end', type: 'end', position: { x: 480, y: 0 } },
      ],
      edges: [{ id: 'e_start_end', source: 'start', target: 'end' }],
    }
    try {
      const wf = await api<WorkflowSummary>('/api/workflows', 'POST', def)
      navigate(`/studio/${wf.id}`)
    } catch (e) {
      setError(e)
    }
  }
  const rows = list.data?.data ?? []
  return (
    <div className="p-6">
      <PageHeader title={t('studio.title')} />
      <Section title={t('studio.new')}>
        <form onSubmit={create} className="flex items-end gap-2">
          <Field label={t('studio.newName')}>{(id) => <TextInput id={id} value={name} onChange={(e) => setName(e.target.value)} />}</Field>
          <div className="mb-3">
            <Button type="submit" variant="primary">
              {t('studio.create')}
            </Button>
          </div>
        </form>
        <ErrorAlert error={error} />
      </Section>
      <Section title={t('studio.workflows')}>
        <ErrorAlert error={list.error} />
        {!list.loading && rows.length === 0 && <EmptyState>{t('studio.noWorkflows')}</EmptyState>}
        {rows.length > 0 && (
          <Table caption={t('studio.workflows')} head={[t('studio.col.name'), t('studio.col.version'), t('studio.col.updated')]}>
            {rows.map((w) => (
              <tr key={w.id}>
                <td className={cellClass}>
                  <Link className="text-indigo-700 underline dark:text-indigo-300" to={`/studio/${w.id}`}>
                    {w.name}
                  </Link>
                  {w.description && <div className="text-xs text-slate-600 dark:text-slate-400">{w.description}</div>}
                </td>
                <td className={cellClass}>{w.version}</td>
                <td className={cellClass}>{new Date(w.updated_at).toLocaleString()}</td>
              </tr>
            ))}
          </Table>
        )}
      </Section>
    </div>
  )
}

export default function Studio() {
  const id = useParams()['*']
  return id ? <Editor key={id} id={id} /> : <List />
}
