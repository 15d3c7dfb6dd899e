import { useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { allows, api, type Workspace } from '../api'
import { Button, cellClass, ErrorAlert, Field, Section, Select, Table, TextInput, useLoad } from '../components/ui'
import { atMost, workspacePath, type APIKey } from './api'
import { Confirm, Note, Secret, useDate } from './parts'

// The scopes a key may be narrowed to (store.APIKeyScopes).
const scopes = ['', 'chat', 'read']

/**
 * KeysSection lists the workspace's API keys, makes one (its secret shown
 * once, with a copy button) and revokes one after a confirmation. Only
 * for roles with manage_keys; others get a note and no request.
 */
export function KeysSection({ ws }: { ws: Workspace }) {
  const { t } = useTranslation()
  return (
    <Section title={t('settings.keys.title')}>
      <p className="mb-3 text-sm text-slate-600 dark:text-slate-400">{t('settings.keys.intro')}</p>
      {allows(ws, 'manage_keys') ? <Keys ws={ws} /> : <Note>{t('settings.keys.adminOnly')}</Note>}
    </Section>
  )
}

function Keys({ ws }: { ws: Workspace }) {
  const { t } = useTranslation()
  const date = useDate()
  const base = workspacePath(ws.id) + '/keys'
  const keys = useLoad(() => api<{ api_keys: APIKey[] | null }>(base).then((r) => r.api_keys ?? []), [ws.id])
  const [name, setName] = useState('')
  const [role, setRole] = useState('member')
  const [scope, setScope] = useState('')
  const [error, setError] = useState<unknown>()
  const [made, setMade] = useState<{ key: string; name: string }>()
  const [revoked, setRevoked] = useState('')

  const create = async (e: FormEvent) => {
    e.preventDefault()
    setError(undefined)
    setRevoked('')
    try {
      const r = await api<{ key: string; api_key: APIKey }>(base, 'POST', { name: name.trim(), role, scope })
      setMade({ key: r.key, name: r.api_key.name })
      setName('')
      keys.reload()
    } catch (err) {
      setError(err)
    }
  }

  const revoke = async (k: APIKey) => {
    setError(undefined)
    try {
      await api(base + '/' + encodeURIComponent(k.id), 'DELETE')
      setRevoked(k.name)
      keys.reload()
    } catch (err) {
      setError(err)
    }
  }

  const mayRevoke = (k: APIKey) => !k.revoked_at && atMost(ws.role).includes(k.role)

  return (
    <div aria-busy={keys.loading}>
      <ErrorAlert error={keys.error} />
      {made && (
        <Secret
          title={t('settings.keys.madeTitle', { name: made.name })}
          label={t('settings.keys.secret')}
          value={made.key}
          note={t('settings.keys.shownOnce')}
          onDone={() => setMade(undefined)}
        />
      )}
      {keys.data && keys.data.length === 0 && <Note>{t('settings.keys.none')}</Note>}
      {keys.data && keys.data.length > 0 && (
        <Table
          caption={t('settings.keys.caption')}
          head={[t('settings.keys.name'), t('settings.keys.prefix'), t('settings.keys.role'), t('settings.keys.scope'), t('settings.keys.created'), t('settings.keys.lastUsed'), t('common.actions')]}
        >
          {keys.data.map((k) => (
            <tr key={k.id}>
              <td className={cellClass}>{k.name || t('settings.keys.unnamed')}</td>
              <td className={cellClass}>
                <code>{k.prefix}…</code>
              </td>
              <td className={cellClass}>{t('settings.role.' + k.role)}</td>
              <td className={cellClass}>{t('settings.keys.scopes.' + (k.scope || 'full'))}</td>
              <td className={cellClass}>{date(k.created_at)}</td>
              <td className={cellClass}>{k.last_used_at ? date(k.last_used_at) : t('settings.keys.never')}</td>
              <td className={cellClass}>
                {k.revoked_at ? (
                  t('settings.keys.revokedAt', { date: date(k.revoked_at) })
                ) : mayRevoke(k) ? (
                  <Confirm
                    label={t('settings.keys.revoke')}
                    question={t('settings.keys.confirmRevoke', { name: k.name || k.prefix })}
                    action={t('settings.keys.revoke')}
                    onConfirm={() => revoke(k)}
                  />
                ) : null}
              </td>
            </tr>
          ))}
        </Table>
      )}
      {revoked && (
        <p role="status" className="mt-2 text-sm text-green-800 dark:text-green-300">
          {t('settings.keys.revokedDone', { name: revoked })}
        </p>
      )}
      <form onSubmit={create} className="mt-4 flex flex-wrap items-start gap-3">
        <div className="min-w-48 flex-1">
          <Field label={t('settings.keys.name')} help={t('settings.keys.nameHelp')}>
            {(id, d) => <TextInput id={id} aria-describedby={d} className="w-full" value={name} onChange={(e) => setName(e.target.value)} required />}
          </Field>
        </div>
        <Field label={t('settings.keys.role')}>
          {(id) => (
            <Select id={id} value={role} onChange={(e) => setRole(e.target.value)}>
              {atMost(ws.role).map((r) => (
                <option key={r} value={r}>
                  {t('settings.role.' + r)}
                </option>
              ))}
            </Select>
          )}
        </Field>
        <Field label={t('settings.keys.scope')}>
          {(id) => (
            <Select id={id} value={scope} onChange={(e) => setScope(e.target.value)}>
              {scopes.map((s) => (
                <option key={s} value={s}>
                  {t('settings.keys.scopes.' + (s || 'full'))}
                </option>
              ))}
            </Select>
          )}
        </Field>
        <Button type="submit" variant="primary" className="mt-6" disabled={!name.trim()}>
          {t('settings.keys.create')}
        </Button>
      </form>
      <ErrorAlert error={error} />
    </div>
  )
}
