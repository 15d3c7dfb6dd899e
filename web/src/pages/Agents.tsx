import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { api } from '../api'
import { AgentForm } from '../agents/AgentForm'
import type { Agent, ProviderInfo } from '../agents/types'
import { ConfirmDialog } from '../components/ConfirmDialog'
import { Button, cellClass, EmptyState, ErrorAlert, Notice, PageHeader, Section, Table, useLoad } from '../components/ui'
import { useCan, useSession } from '../session'
import type { Skill } from '../skills/types'
import type { ToolInfo } from '../tools/types'

/** editing is the form shown: none, a new agent, or the agent of that id. */
type Editing = null | { mode: 'new' } | { mode: 'edit'; agent: Agent }

/** Agents lists the workspace's agents and creates, edits and deletes them (members and above). */
export default function Agents() {
  const { t } = useTranslation()
  const { workspace } = useSession()
  const canEdit = useCan('edit')
  const agents = useLoad(() => api<{ data: Agent[] }>('/api/agents').then((r) => r.data), [workspace])
  const [editing, setEditing] = useState<Editing>(null)
  const [deleting, setDeleting] = useState<Agent | null>(null)
  const [notice, setNotice] = useState('')
  // The form's pickers load when a form first opens, not with the list.
  const open = editing !== null
  const pickers = useLoad(
    () =>
      open
        ? Promise.all([
            api<{ data: ToolInfo[] }>('/api/tools').then((r) => r.data),
            api<{ data: ProviderInfo[] }>('/api/providers').then((r) => r.data),
            api<{ data: Skill[] }>('/api/skills').then((r) => r.data),
          ])
        : Promise.resolve(null),
    [workspace, open],
  )

  const save = async (body: Record<string, unknown>) => {
    if (editing?.mode === 'edit') {
      const a = await api<Agent>('/api/agents/' + encodeURIComponent(editing.agent.id), 'PUT', body)
      setNotice(t('agents.saved', { name: a.name }))
    } else {
      const a = await api<Agent>('/api/agents', 'POST', body)
      setNotice(t('agents.created', { name: a.name }))
    }
    setEditing(null)
    agents.reload()
  }

  const remove = async () => {
    if (!deleting) return
    await api('/api/agents/' + encodeURIComponent(deleting.id), 'DELETE')
    setNotice(t('agents.deleted', { name: deleting.name }))
    if (editing?.mode === 'edit' && editing.agent.id === deleting.id) setEditing(null)
    agents.reload()
  }

  const list = agents.data ?? []
  const formTitle = editing?.mode === 'edit' ? t('agents.editTitle', { name: editing.agent.name }) : t('agents.createTitle')

  return (
    <div className="mx-auto max-w-6xl p-4">
      <PageHeader title={t('agents.title')}>
        {canEdit && editing?.mode !== 'new' && (
          <Button variant="primary" onClick={() => setEditing({ mode: 'new' })}>
            {t('agents.new')}
          </Button>
        )}
      </PageHeader>
      <Notice>{notice}</Notice>
      <ErrorAlert error={agents.error} />
      {editing && (
        <Section title={formTitle}>
          <ErrorAlert error={pickers.error} />
          {pickers.data ? (
            <AgentForm
              key={editing.mode === 'edit' ? editing.agent.id : 'new'}
              agent={editing.mode === 'edit' ? editing.agent : undefined}
              tools={pickers.data[0]}
              providers={pickers.data[1]}
              skills={pickers.data[2]}
              onSubmit={save}
              onCancel={() => setEditing(null)}
            />
          ) : (
            !pickers.error && <p className="text-sm text-slate-600 dark:text-slate-400">{t('agents.loadingForm')}</p>
          )}
        </Section>
      )}
      {agents.data && list.length === 0 ? (
        <EmptyState>{canEdit ? t('agents.empty') : t('agents.emptyReadOnly')}</EmptyState>
      ) : (
        <Table caption={t('agents.caption')} head={[t('agents.name'), t('agents.model'), t('agents.tools'), t('agents.maxSteps'), t('common.actions')]}>
          {list.map((a) => (
            <tr key={a.id}>
              <td className={cellClass}>
                <span className="font-medium">{a.name}</span>
                {a.instructions && <span translate="no" className="block max-w-xs truncate text-xs text-slate-600 dark:text-slate-400">{a.instructions}</span>}
              </td>
              <td className={cellClass + ' font-mono'}>{a.model}</td>
              <td className={cellClass + ' font-mono text-xs'}>{a.tools?.length ? a.tools.join(', ') : t('common.none')}</td>
              <td className={cellClass}>{a.params.max_steps || t('agents.default')}</td>
              <td className={cellClass}>
                {a.source === 'config' ? (
                  <span className="text-xs text-slate-600 dark:text-slate-400">{t('agents.fromConfig')}</span>
                ) : (
                  canEdit && (
                    <div className="flex gap-2">
                      <Button aria-label={t('agents.editName', { name: a.name })} onClick={() => setEditing({ mode: 'edit', agent: a })}>
                        {t('common.edit')}
                      </Button>
                      <Button variant="danger" aria-label={t('agents.deleteName', { name: a.name })} onClick={() => setDeleting(a)}>
                        {t('common.delete')}
                      </Button>
                    </div>
                  )
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
      <ConfirmDialog
        open={deleting !== null}
        title={t('agents.confirmTitle', { name: deleting?.name ?? '' })}
        body={t('agents.confirmBody')}
        confirm={t('agents.confirmDelete')}
        onConfirm={remove}
        onClose={() => setDeleting(null)}
      />
    </div>
  )
}
