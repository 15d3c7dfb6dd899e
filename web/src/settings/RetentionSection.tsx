import { useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { allows, api, fieldError, fieldOf, type Workspace } from '../api'
import { Button, cellClass, ErrorAlert, Section, Table, TextInput, useLoad } from '../components/ui'
import { Done, Note } from './parts'

/** Retention is GET /api/retention: ages by kind as written ("30d", "keep"). */
interface Retention {
  server: Record<string, string>
  workspace: Record<string, string>
  effective: Record<string, string>
  per_workspace: string[]
}

/** kinds in the order the section lists them (store/retention.Kinds). */
const kinds = ['conversations', 'uploads', 'run_events', 'checkpoints', 'usage_detail', 'queue_jobs', 'audit']

/**
 * RetentionSection shows, for admins, how long the server keeps each kind
 * of data for this workspace — the server's policy, the workspace's own
 * age where it may set one, and the age in effect — and changes the
 * workspace's ages (empty goes back to the server's). The server judges
 * each age; its refusal shows beside the field it names.
 */
export function RetentionSection({ ws }: { ws: Workspace }) {
  const { t } = useTranslation()
  const admin = allows(ws, 'admin_workspace')
  const policy = useLoad(() => (admin ? api<Retention>('/api/retention') : Promise.resolve(null)), [ws.id, admin])
  const [draft, setDraft] = useState<Record<string, string> | null>(null)
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const [saved, setSaved] = useState(false)

  if (!admin)
    return (
      <Section title={t('settings.retention.title')}>
        <Note>{t('settings.retention.adminOnly')}</Note>
      </Section>
    )
  const p = policy.data
  const own = (k: string) => draft?.[k] ?? p?.workspace[k] ?? ''
  const age = (v: string | undefined) => (!v || v === 'keep' ? t('settings.retention.keep') : v)
  const changed = p ? p.per_workspace.filter((k) => own(k).trim() !== (p.workspace[k] ?? '')) : []

  const save = async (e: FormEvent) => {
    e.preventDefault()
    if (!p) return
    setError(undefined)
    setSaved(false)
    setBusy(true)
    try {
      const body: Record<string, string> = {}
      for (const k of changed) body[k] = own(k).trim()
      policy.set(await api<Retention>('/api/retention', 'PUT', body))
      setDraft(null)
      setSaved(true)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }

  return (
    <Section title={t('settings.retention.title')}>
      <p className="mb-3 text-sm text-slate-600 dark:text-slate-400">{t('settings.retention.intro')}</p>
      <ErrorAlert error={policy.error ?? (kinds.includes(fieldOf(error)) ? undefined : error)} />
      {p && (
        <form onSubmit={save} aria-label={t('settings.retention.title')} noValidate>
          <Table caption={t('settings.retention.caption')} head={[t('settings.retention.kind'), t('settings.retention.server'), t('settings.retention.workspace'), t('settings.retention.effective')]}>
            {kinds.map((k) => {
              const name = t('settings.retention.kinds.' + k)
              const msg = fieldError(error, k)
              const helpID = `retention-${k}-help`
              return (
                <tr key={k}>
                  <th scope="row" className={cellClass + ' text-left font-medium'}>
                    {name}
                    <p className="text-xs font-normal text-slate-600 dark:text-slate-400">{t('settings.retention.about.' + k)}</p>
                  </th>
                  <td translate="no" className={cellClass}>
                    {age(p.server[k])}
                  </td>
                  <td className={cellClass}>
                    {p.per_workspace.includes(k) ? (
                      <>
                        <TextInput
                          aria-label={t('settings.retention.ageOf', { kind: name })}
                          aria-describedby={msg ? helpID : undefined}
                          aria-invalid={!!msg}
                          className="w-36 font-mono"
                          placeholder={t('settings.retention.useServer')}
                          value={own(k)}
                          onChange={(e) => setDraft({ ...(draft ?? {}), [k]: e.target.value })}
                        />
                        {msg && (
                          <p id={helpID} className="mt-1 max-w-xs text-xs text-red-700 dark:text-red-300">
                            {msg}
                          </p>
                        )}
                      </>
                    ) : (
                      <span className="text-xs text-slate-600 dark:text-slate-400">{t('settings.retention.operator')}</span>
                    )}
                  </td>
                  <td translate="no" className={cellClass + ' font-medium'}>
                    {age(p.effective[k])}
                  </td>
                </tr>
              )
            })}
          </Table>
          <p className="my-2 text-xs text-slate-600 dark:text-slate-400">{t('settings.retention.help')}</p>
          <Button type="submit" variant="primary" disabled={busy || changed.length === 0}>
            {t('settings.retention.save')}
          </Button>
          {saved && <Done>{t('settings.retention.saved')}</Done>}
        </form>
      )}
    </Section>
  )
}
