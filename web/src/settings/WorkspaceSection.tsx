import { useEffect, useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { allows, api, type Workspace } from '../api'
import { Button, ErrorAlert, Field, Section, TextInput } from '../components/ui'
import { useSession } from '../session'
import { workspacePath } from './api'
import { Done, Note } from './parts'

/** WorkspaceSection shows the workspace's name and, for admins, renames it. */
export function WorkspaceSection({ ws }: { ws: Workspace }) {
  const { t } = useTranslation()
  const { refresh } = useSession()
  const [name, setName] = useState(ws.name)
  const [error, setError] = useState<unknown>()
  const [saved, setSaved] = useState(false)
  // The name as the server has it, after a rename here or elsewhere (the
  // page is keyed by workspace, so a switch starts afresh).
  useEffect(() => setName(ws.name), [ws.name])

  const rename = async (e: FormEvent) => {
    e.preventDefault()
    setError(undefined)
    setSaved(false)
    try {
      await api(workspacePath(ws.id), 'PATCH', { name: name.trim() })
      await refresh() // the top bar's workspace picker shows the new name
      setSaved(true)
    } catch (err) {
      setError(err)
    }
  }

  return (
    <Section title={t('settings.workspace.title')}>
      {allows(ws, 'admin_workspace') ? (
        <form onSubmit={rename} className="flex flex-wrap items-start gap-3">
          <div className="min-w-64 flex-1">
            <Field label={t('settings.workspace.name')} help={t('settings.workspace.nameHelp')}>
              {(id, d) => <TextInput id={id} aria-describedby={d} className="w-full" value={name} onChange={(e) => setName(e.target.value)} required />}
            </Field>
          </div>
          <Button type="submit" variant="primary" className="mt-6" disabled={!name.trim() || name.trim() === ws.name}>
            {t('settings.workspace.rename')}
          </Button>
        </form>
      ) : (
        <>
          <p className="mb-2">
            <span className="font-medium">{t('settings.workspace.name')}:</span> {ws.name}
          </p>
          <Note>{t('settings.workspace.adminOnly')}</Note>
        </>
      )}
      <p className="text-sm text-slate-600 dark:text-slate-400">{t('settings.workspace.yourRole', { role: t('settings.role.' + ws.role) })}</p>
      <ErrorAlert error={error} />
      {saved && <Done>{t('settings.workspace.renamed', { name: ws.name })}</Done>}
    </Section>
  )
}
