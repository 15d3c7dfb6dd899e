import { useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { allows, api, type Workspace } from '../api'
import { Button, cellClass, ErrorAlert, Field, Section, Select, Table, TextInput, useLoad } from '../components/ui'
import { useSession } from '../session'
import { canAssign, roles, workspacePath, type Invitation, type Member } from './api'
import { Confirm, Note, Secret, useDate } from './parts'

/**
 * MembersSection lists the workspace's members (every role may read
 * them); roles with manage_members also change a member's role, remove a
 * member after a confirmation, and invite people (InvitationsSection).
 * Each control is offered only where identity's rules allow it: only an
 * owner touches the owner role, nobody grants a role above their own.
 */
export function MembersSection({ ws }: { ws: Workspace }) {
  const { t } = useTranslation()
  const { me } = useSession()
  const date = useDate()
  const base = workspacePath(ws.id) + '/members'
  const members = useLoad(() => api<{ members: Member[] | null }>(base).then((r) => r.members ?? []), [ws.id])
  const manage = allows(ws, 'manage_members')
  const [error, setError] = useState<unknown>()
  const [done, setDone] = useState('')

  const who = (m: Member) => m.display_name || m.email || m.user_id

  const setRole = async (m: Member, role: string) => {
    setError(undefined)
    setDone('')
    try {
      await api(base + '/' + encodeURIComponent(m.user_id), 'PATCH', { role })
      setDone(t('settings.members.roleSet', { name: who(m), role: t('settings.role.' + role) }))
      members.reload()
    } catch (err) {
      setError(err)
    }
  }

  const remove = async (m: Member) => {
    setError(undefined)
    setDone('')
    try {
      await api(base + '/' + encodeURIComponent(m.user_id), 'DELETE')
      setDone(t('settings.members.removed', { name: who(m) }))
      members.reload()
    } catch (err) {
      setError(err)
    }
  }

  return (
    <Section title={t('settings.members.title')}>
      <div aria-busy={members.loading}>
        <ErrorAlert error={members.error} />
        {members.data && (
          <Table caption={t('settings.members.caption')} head={[t('settings.members.member'), t('settings.members.role'), t('settings.members.since'), ...(manage ? [t('common.actions')] : [])]}>
            {members.data.map((m) => {
              const mine = m.user_id === me?.user.id
              const editable = manage && canAssign(ws, m.role)
              return (
                <tr key={m.user_id}>
                  <td className={cellClass}>
                    {who(m)}
                    {m.display_name && m.email && <span className="block text-xs text-slate-600 dark:text-slate-400">{m.email}</span>}
                    {mine && <span className="block text-xs text-slate-600 dark:text-slate-400">{t('settings.members.you')}</span>}
                  </td>
                  <td className={cellClass}>
                    {editable ? (
                      <Select aria-label={t('settings.members.roleOf', { name: who(m) })} value={m.role} onChange={(e) => void setRole(m, e.target.value)}>
                        {roles
                          .filter((r) => r === m.role || canAssign(ws, r))
                          .map((r) => (
                            <option key={r} value={r}>
                              {t('settings.role.' + r)}
                            </option>
                          ))}
                      </Select>
                    ) : (
                      t('settings.role.' + m.role)
                    )}
                  </td>
                  <td className={cellClass}>{date(m.created_at)}</td>
                  {manage && (
                    <td className={cellClass}>
                      {editable && (
                        <Confirm
                          label={t('settings.members.remove')}
                          question={t('settings.members.confirmRemove', { name: who(m) })}
                          action={t('settings.members.remove')}
                          onConfirm={() => remove(m)}
                        />
                      )}
                    </td>
                  )}
                </tr>
              )
            })}
          </Table>
        )}
        <ErrorAlert error={error} />
        {done && (
          <p role="status" className="mt-2 text-sm text-green-800 dark:text-green-300">
            {done}
          </p>
        )}
      </div>
      {manage ? <Invitations ws={ws} /> : <Note>{t('settings.members.adminOnly')}</Note>}
    </Section>
  )
}

/** Invitations makes, lists and revokes invitations to the workspace. */
function Invitations({ ws }: { ws: Workspace }) {
  const { t } = useTranslation()
  const date = useDate()
  const base = workspacePath(ws.id) + '/invitations'
  const invs = useLoad(() => api<{ invitations: Invitation[] | null }>(base).then((r) => r.invitations ?? []), [ws.id])
  const [email, setEmail] = useState('')
  const [role, setRole] = useState('member')
  const [error, setError] = useState<unknown>()
  const [link, setLink] = useState<{ url: string; expires: string }>()

  const invite = async (e: FormEvent) => {
    e.preventDefault()
    setError(undefined)
    try {
      const r = await api<{ path: string; expires_at: string }>(base, 'POST', { role, email: email.trim() })
      setLink({ url: window.location.origin + r.path, expires: r.expires_at })
      setEmail('')
      invs.reload()
    } catch (err) {
      setError(err)
    }
  }

  const revoke = async (inv: Invitation) => {
    setError(undefined)
    try {
      await api(base + '/' + encodeURIComponent(inv.id), 'DELETE')
      invs.reload()
    } catch (err) {
      setError(err)
    }
  }

  const now = Date.now()
  const state = (inv: Invitation) => (inv.accepted_at ? 'accepted' : new Date(inv.expires_at).getTime() <= now ? 'expired' : 'pending')

  return (
    <div aria-busy={invs.loading} className="mt-6">
      <h3 className="mb-2 font-semibold">{t('settings.invitations.title')}</h3>
      <ErrorAlert error={invs.error} />
      {link && (
        <Secret
          title={t('settings.invitations.madeTitle')}
          label={t('settings.invitations.link')}
          value={link.url}
          note={t('settings.invitations.shownOnce', { date: date(link.expires) })}
          onDone={() => setLink(undefined)}
        />
      )}
      <form onSubmit={invite} className="flex flex-wrap items-start gap-3">
        <div className="min-w-64 flex-1">
          <Field label={t('settings.invitations.email')} help={t('settings.invitations.emailHelp')}>
            {(id, d) => <TextInput id={id} aria-describedby={d} type="email" className="w-full" value={email} onChange={(e) => setEmail(e.target.value)} />}
          </Field>
        </div>
        <Field label={t('settings.invitations.role')}>
          {(id) => (
            <Select id={id} value={role} onChange={(e) => setRole(e.target.value)}>
              {roles
                .filter((r) => canAssign(ws, r))
                .map((r) => (
                  <option key={r} value={r}>
                    {t('settings.role.' + r)}
                  </option>
                ))}
            </Select>
          )}
        </Field>
        <Button type="submit" variant="primary" className="mt-6">
          {t('settings.invitations.invite')}
        </Button>
      </form>
      <ErrorAlert error={error} />
      {invs.data && invs.data.length === 0 && <Note>{t('settings.invitations.none')}</Note>}
      {invs.data && invs.data.length > 0 && (
        <Table
          caption={t('settings.invitations.caption')}
          head={[t('settings.invitations.for'), t('settings.invitations.role'), t('settings.invitations.expires'), t('settings.invitations.state'), t('common.actions')]}
        >
          {invs.data.map((inv) => (
            <tr key={inv.id}>
              <td className={cellClass}>{inv.email || t('settings.invitations.anyone')}</td>
              <td className={cellClass}>{t('settings.role.' + inv.role)}</td>
              <td className={cellClass}>{date(inv.expires_at)}</td>
              <td className={cellClass}>{t('settings.invitations.states.' + state(inv))}</td>
              <td className={cellClass}>
                {state(inv) === 'pending' && (
                  <Confirm
                    label={t('settings.invitations.revoke')}
                    question={t('settings.invitations.confirmRevoke', { who: inv.email || t('settings.invitations.anyone') })}
                    action={t('settings.invitations.revoke')}
                    onConfirm={() => revoke(inv)}
                  />
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
    </div>
  )
}
