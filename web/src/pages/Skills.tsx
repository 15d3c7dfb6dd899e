import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { api } from '../api'
import { ConfirmDialog } from '../components/ConfirmDialog'
import { Button, cellClass, EmptyState, ErrorAlert, Notice, PageHeader, Section, Table, useLoad } from '../components/ui'
import { useCan, useSession } from '../session'
import { SkillForm } from '../skills/SkillForm'
import { SkillImport } from '../skills/SkillImport'
import { SkillView } from '../skills/SkillView'
import { skillPath, type Skill } from '../skills/types'

/** editing is the form shown: none, a new skill, or the skill read whole. */
type Editing = null | { mode: 'new' } | { mode: 'edit'; skill: Skill }

/**
 * Skills lists the built-in and the workspace's skills, shows one with its
 * instructions and files, and (members and above) creates, edits,
 * imports and deletes the workspace's; built-ins are read-only.
 */
export default function Skills() {
  const { t } = useTranslation()
  const { workspace } = useSession()
  const canEdit = useCan('edit')
  const skills = useLoad(() => api<{ data: Skill[] }>('/api/skills').then((r) => r.data), [workspace])
  const [viewing, setViewing] = useState<string | null>(null)
  const [editing, setEditing] = useState<Editing>(null)
  const [deleting, setDeleting] = useState<Skill | null>(null)
  const [notice, setNotice] = useState('')
  const [error, setError] = useState<unknown>()
  const viewed = useLoad(() => (viewing ? api<Skill>(skillPath(viewing)) : Promise.resolve(null)), [workspace, viewing])

  const edit = async (name: string) => {
    setError(undefined)
    try {
      setEditing({ mode: 'edit', skill: await api<Skill>(skillPath(name)) })
    } catch (err) {
      setError(err)
    }
  }

  const save = async (body: Record<string, unknown>) => {
    if (editing?.mode === 'edit') {
      const s = await api<Skill>(skillPath(editing.skill.name), 'PUT', body)
      setNotice(t('skills.saved', { name: s.name }))
      if (viewing === s.name) viewed.set(s)
    } else {
      const s = await api<Skill>('/api/skills', 'POST', body)
      setNotice(t('skills.created', { name: s.name }))
    }
    setEditing(null)
    skills.reload()
  }

  const remove = async () => {
    if (!deleting) return
    await api(skillPath(deleting.name), 'DELETE')
    setNotice(t('skills.deleted', { name: deleting.name }))
    if (viewing === deleting.name) setViewing(null)
    if (editing?.mode === 'edit' && editing.skill.name === deleting.name) setEditing(null)
    skills.reload()
  }

  const list = skills.data ?? []
  const formTitle = editing?.mode === 'edit' ? t('skills.editTitle', { name: editing.skill.name }) : t('skills.createTitle')

  return (
    <div className="mx-auto max-w-6xl p-4">
      <PageHeader title={t('skills.title')}>
        {canEdit && editing?.mode !== 'new' && (
          <Button variant="primary" onClick={() => setEditing({ mode: 'new' })}>
            {t('skills.new')}
          </Button>
        )}
      </PageHeader>
      <p className="mb-3 text-sm text-slate-600 dark:text-slate-400">{t('skills.intro')}</p>
      <Notice>{notice}</Notice>
      <ErrorAlert error={skills.error ?? error} />
      {editing && (
        <Section title={formTitle}>
          <SkillForm key={editing.mode === 'edit' ? editing.skill.name : 'new'} skill={editing.mode === 'edit' ? editing.skill : undefined} onSubmit={save} onCancel={() => setEditing(null)} />
        </Section>
      )}
      {skills.data && list.length === 0 ? (
        <EmptyState>{t('skills.empty')}</EmptyState>
      ) : (
        <Table caption={t('skills.caption')} head={[t('skills.name'), t('skills.description'), t('skills.origin'), t('common.actions')]}>
          {list.map((s) => (
            <tr key={s.name}>
              <td translate="no" className={cellClass + ' font-mono font-medium'}>
                {s.name}
              </td>
              <td translate="no" className={cellClass + ' max-w-md text-xs'}>
                {s.description}
              </td>
              <td className={cellClass + ' text-xs'}>{s.builtin ? t('skills.builtin') : t('skills.workspace')}</td>
              <td className={cellClass}>
                <div className="flex gap-2">
                  <Button aria-label={t('skills.viewName', { name: s.name })} aria-pressed={viewing === s.name} onClick={() => setViewing(viewing === s.name ? null : s.name)}>
                    {t('skills.view')}
                  </Button>
                  {canEdit && !s.builtin && (
                    <>
                      <Button aria-label={t('skills.editName', { name: s.name })} onClick={() => edit(s.name)}>
                        {t('common.edit')}
                      </Button>
                      <Button variant="danger" aria-label={t('skills.deleteName', { name: s.name })} onClick={() => setDeleting(s)}>
                        {t('common.delete')}
                      </Button>
                    </>
                  )}
                </div>
              </td>
            </tr>
          ))}
        </Table>
      )}
      {viewing && (
        <Section title={t('skills.viewTitle', { name: viewing })} className="mt-4">
          <ErrorAlert error={viewed.error} />
          {viewed.data ? <SkillView key={viewed.data.name} skill={viewed.data} /> : !viewed.error && <p className="text-sm text-slate-600 dark:text-slate-400">{t('skills.loading')}</p>}
        </Section>
      )}
      {canEdit && (
        <Section title={t('skills.importTitle')} className="mt-4">
          <SkillImport
            onImported={(s) => {
              setNotice(t('skills.imported', { name: s.name }))
              if (viewing === s.name) viewed.reload()
              skills.reload()
            }}
          />
        </Section>
      )}
      <ConfirmDialog
        open={deleting !== null}
        title={t('skills.confirmTitle', { name: deleting?.name ?? '' })}
        body={t('skills.confirmBody')}
        confirm={t('skills.confirmDelete')}
        onConfirm={remove}
        onClose={() => setDeleting(null)}
      />
    </div>
  )
}
