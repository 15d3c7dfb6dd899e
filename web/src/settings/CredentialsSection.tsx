import { useEffect, useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { allows, api, type Workspace } from '../api'
import { Button, cellClass, ErrorAlert, Field, Section, Select, Table, TextInput, useLoad } from '../components/ui'
import type { Credential, ProviderInfo } from './api'
import { Confirm, Done, Note, useDate } from './parts'

// The provider types a key may be stored for without a configured
// provider of that name (provider.providerTypes).
const providerTypes = ['openai', 'anthropic']

/**
 * CredentialsSection lists the workspace's provider keys as saved (the
 * provider and when, never the key: the API does not return it), saves
 * or replaces one from a password field that is cleared after saving,
 * and deletes one. Only for roles with manage_credentials; others get a
 * note and no request.
 */
export function CredentialsSection({ ws }: { ws: Workspace }) {
  const { t } = useTranslation()
  const may = allows(ws, 'manage_credentials')
  return (
    <Section title={t('settings.credentials.title')}>
      <p className="mb-3 text-sm text-slate-600 dark:text-slate-400">{t('settings.credentials.intro')}</p>
      {may ? <Credentials ws={ws} /> : <Note>{t('settings.credentials.adminOnly')}</Note>}
    </Section>
  )
}

function Credentials({ ws }: { ws: Workspace }) {
  const { t } = useTranslation()
  const date = useDate()
  const creds = useLoad(() => api<{ data: Credential[] }>('/api/credentials').then((r) => r.data), [ws.id])
  const providers = useLoad(() => api<{ data: ProviderInfo[] }>('/api/providers').then((r) => r.data), [ws.id])
  const names = [...new Set([...(providers.data ?? []).map((p) => p.name), ...providerTypes])]
  const [provider, setProvider] = useState('')
  const [key, setKey] = useState('')
  const [error, setError] = useState<unknown>()
  const [saved, setSaved] = useState<{ provider: string; warning?: string }>()
  useEffect(() => {
    if (!names.includes(provider)) setProvider(names[0] ?? '')
  }, [names.join(","), provider]) // eslint-disable-line react-hooks/exhaustive-deps

  const save = async (e: FormEvent) => {
    e.preventDefault()
    setError(undefined)
    setSaved(undefined)
    try {
      const r = await api<{ provider: string; warning?: string }>('/api/credentials', 'POST', { provider, api_key: key })
      setSaved(r)
      creds.reload()
      providers.reload()
    } catch (err) {
      setError(err)
    } finally {
      // The key leaves the page whatever happened: it is never kept or shown.
      setKey('')
    }
  }

  const remove = async (p: string) => {
    setError(undefined)
    setSaved(undefined)
    try {
      await api('/api/credentials/' + encodeURIComponent(p), 'DELETE')
      creds.reload()
      providers.reload()
    } catch (err) {
      setError(err)
    }
  }

  return (
    <div aria-busy={creds.loading || providers.loading}>
      <ErrorAlert error={creds.error ?? providers.error} />
      {creds.data && creds.data.length === 0 && <Note>{t('settings.credentials.none')}</Note>}
      {creds.data && creds.data.length > 0 && (
        <Table caption={t('settings.credentials.caption')} head={[t('settings.credentials.provider'), t('settings.credentials.key'), t('settings.credentials.updated'), t('common.actions')]}>
          {creds.data.map((c) => (
            <tr key={c.provider}>
              <td className={cellClass}>{c.provider}</td>
              <td className={cellClass}>{t('settings.credentials.saved')}</td>
              <td className={cellClass}>{date(c.updated_at)}</td>
              <td className={cellClass}>
                <Confirm
                  label={t('common.delete')}
                  question={t('settings.credentials.confirmDelete', { provider: c.provider })}
                  action={t('settings.credentials.delete')}
                  onConfirm={() => remove(c.provider)}
                />
              </td>
            </tr>
          ))}
        </Table>
      )}
      <form onSubmit={save} className="mt-4 flex flex-wrap items-start gap-3">
        <Field label={t('settings.credentials.provider')}>
          {(id) => (
            <Select id={id} value={provider} onChange={(e) => setProvider(e.target.value)}>
              {names.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </Select>
          )}
        </Field>
        <div className="min-w-64 flex-1">
          <Field label={t('settings.credentials.apiKey')} help={t('settings.credentials.apiKeyHelp')}>
            {(id, d) => (
              <TextInput id={id} aria-describedby={d} type="password" autoComplete="off" className="w-full" value={key} onChange={(e) => setKey(e.target.value)} required />
            )}
          </Field>
        </div>
        <Button type="submit" variant="primary" className="mt-6" disabled={!provider || !key.trim()}>
          {t('settings.credentials.save')}
        </Button>
      </form>
      <ErrorAlert error={error} />
      {saved && (
        <Done>
          {t('settings.credentials.savedFor', { provider: saved.provider })}
          {saved.warning && <span className="block text-amber-800 dark:text-amber-300">{saved.warning}</span>}
        </Done>
      )}
    </div>
  )
}
