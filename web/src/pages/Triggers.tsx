import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Link } from 'react-router-dom'
import { api } from '../api'
import { ConfirmDialog } from '../components/ConfirmDialog'
import { Button, cellClass, EmptyState, ErrorAlert, Field, Notice, PageHeader, Section, Table, TextInput, useLoad } from '../components/ui'
import { formatTime } from '../runs/format'
import { useCan, useSession } from '../session'
import { Secret } from '../settings/parts'
import { TriggerFires } from '../triggers/TriggerFires'
import { TriggerForm, type Targets } from '../triggers/TriggerForm'
import { triggerPath, type Trigger } from '../triggers/types'

type Editing = null | { mode: 'new' } | { mode: 'edit'; trigger: Trigger }

/**
 * Triggers is /triggers: the workspace's cron schedules and signed
 * webhooks, each starting a saved workflow or an agent as a durable run.
 * Members and above create, change, enable and disable, rotate a
 * webhook's secret and delete; everyone sees when a schedule fires next,
 * the ticks it fired with their runs, and a trigger's runs.
 */
export default function Triggers() {
  const { t, i18n } = useTranslation()
  const { workspace } = useSession()
  const canEdit = useCan('edit')
  const triggers = useLoad(() => api<{ data: Trigger[] }>('/api/triggers').then((r) => r.data), [workspace])
  const targets = useLoad<Targets>(
    () =>
      Promise.all([
        api<{ data: { id: string; name: string }[] }>('/api/workflows').then((r) => r.data),
        api<{ data: { name: string }[] }>('/api/agents').then((r) => r.data.map((a) => a.name)),
      ]).then(([workflows, agents]) => ({ workflows, agents })),
    [workspace],
  )
  const [editing, setEditing] = useState<Editing>(null)
  const [viewing, setViewing] = useState<string | null>(null)
  const [deleting, setDeleting] = useState<Trigger | null>(null)
  const [rotating, setRotating] = useState<Trigger | null>(null)
  // revealed is the answer that showed a webhook's secret, the one time it does.
  const [revealed, setRevealed] = useState<Trigger | null>(null)
  const [notice, setNotice] = useState('')
  const [error, setError] = useState<unknown>()

  const save = async (body: Record<string, unknown>) => {
    if (editing?.mode === 'edit') {
      const tr = await api<Trigger>(triggerPath(editing.trigger.id), 'PATCH', body)
      setNotice(t('triggers.saved', { name: tr.name }))
    } else {
      const tr = await api<Trigger>('/api/triggers', 'POST', body)
      setNotice(t('triggers.created', { name: tr.name }))
      if (tr.secret) setRevealed(tr)
    }
    setEditing(null)
    triggers.reload()
  }

  const toggle = async (tr: Trigger) => {
    setError(undefined)
    try {
      const got = await api<Trigger>(triggerPath(tr.id), 'PATCH', { enabled: !tr.enabled })
      setNotice(t(got.enabled ? 'triggers.enabledNotice' : 'triggers.disabledNotice', { name: got.name }))
      triggers.reload()
    } catch (err) {
      setError(err)
    }
  }

  const rotate = async () => {
    if (!rotating) return
    const tr = await api<Trigger>(triggerPath(rotating.id) + '/secret', 'POST')
    setNotice(t('triggers.rotated', { name: tr.name }))
    setRevealed(tr)
  }

  const remove = async () => {
    if (!deleting) return
    await api(triggerPath(deleting.id), 'DELETE')
    setNotice(t('triggers.deleted', { name: deleting.name }))
    if (viewing === deleting.id) setViewing(null)
    if (editing?.mode === 'edit' && editing.trigger.id === deleting.id) setEditing(null)
    if (revealed?.id === deleting.id) setRevealed(null)
    triggers.reload()
  }

  const list = triggers.data ?? []
  const workflowName = new Map((targets.data?.workflows ?? []).map((w) => [w.id, w.name]))
  const viewed = list.find((tr) => tr.id === viewing)
  const formTitle = editing?.mode === 'edit' ? t('triggers.editTitle', { name: editing.trigger.name }) : t('triggers.createTitle')

  return (
    <div className="mx-auto max-w-6xl p-4">
      <PageHeader title={t('triggers.title')}>
        <Button onClick={triggers.reload}>{t('common.refresh')}</Button>
        {canEdit && editing?.mode !== 'new' && (
          <Button variant="primary" onClick={() => setEditing({ mode: 'new' })} disabled={!targets.data}>
            {t('triggers.new')}
          </Button>
        )}
      </PageHeader>
      <p className="mb-3 text-sm text-slate-600 dark:text-slate-400">{t('triggers.intro')}</p>
      <Notice>{notice}</Notice>
      <ErrorAlert error={triggers.error ?? targets.error ?? error} />
      {revealed?.secret && <SecretPanel trigger={revealed} secret={revealed.secret} onDone={() => setRevealed(null)} />}
      {editing && targets.data && (
        <Section title={formTitle}>
          <TriggerForm
            key={editing.mode === 'edit' ? editing.trigger.id : 'new'}
            trigger={editing.mode === 'edit' ? editing.trigger : undefined}
            targets={targets.data}
            onSubmit={save}
            onCancel={() => setEditing(null)}
          />
        </Section>
      )}
      {triggers.data && list.length === 0 ? (
        <EmptyState>{t('triggers.empty')}</EmptyState>
      ) : (
        <Table
          caption={t('triggers.caption')}
          head={[t('triggers.name'), t('triggers.kind'), t('triggers.target'), t('triggers.when'), t('triggers.nextFire'), t('triggers.state'), t('common.actions')]}
        >
          {list.map((tr) => (
            <tr key={tr.id}>
              <td translate="no" className={cellClass + ' whitespace-nowrap font-medium'}>
                {tr.name}
              </td>
              <td className={cellClass + ' whitespace-nowrap'}>{t('triggers.kinds.' + tr.kind)}</td>
              <td className={cellClass}>
                {tr.agent ? t('triggers.agentTarget', { name: tr.agent }) : t('triggers.workflowTarget', { name: workflowName.get(tr.workflow_id ?? '') ?? tr.workflow_id })}
              </td>
              <td translate="no" className={cellClass + ' font-mono text-xs'}>
                {tr.kind === 'schedule' ? `${tr.schedule}${tr.timezone ? ` (${tr.timezone})` : ' (UTC)'}` : tr.url}
              </td>
              <td className={cellClass + ' text-xs'}>{tr.next_fire ? <time dateTime={tr.next_fire}>{formatTime(tr.next_fire, i18n.language)}</time> : '—'}</td>
              <td className={cellClass + ' whitespace-nowrap'}>{tr.enabled ? t('triggers.enabled') : t('triggers.disabled')}</td>
              <td className={cellClass}>
                <div className="flex flex-wrap gap-2">
                  <Link className="rounded border border-slate-300 px-3 py-1 text-sm font-medium dark:border-slate-600" to={'/runs?trigger=' + encodeURIComponent(tr.id)} aria-label={t('triggers.runsOf', { name: tr.name })}>
                    {t('triggers.runs')}
                  </Link>
                  {tr.kind === 'schedule' && (
                    <Button aria-label={t('triggers.firesOf', { name: tr.name })} aria-pressed={viewing === tr.id} onClick={() => setViewing(viewing === tr.id ? null : tr.id)}>
                      {t('triggers.fires')}
                    </Button>
                  )}
                  {canEdit && (
                    <>
                      <Button aria-label={t('triggers.editName', { name: tr.name })} onClick={() => setEditing({ mode: 'edit', trigger: tr })} disabled={!targets.data}>
                        {t('common.edit')}
                      </Button>
                      <Button aria-label={t(tr.enabled ? 'triggers.disableName' : 'triggers.enableName', { name: tr.name })} onClick={() => void toggle(tr)}>
                        {tr.enabled ? t('triggers.disable') : t('triggers.enable')}
                      </Button>
                      {tr.kind === 'webhook' && (
                        <Button aria-label={t('triggers.rotateName', { name: tr.name })} onClick={() => setRotating(tr)}>
                          {t('triggers.rotate')}
                        </Button>
                      )}
                      <Button variant="danger" aria-label={t('triggers.deleteName', { name: tr.name })} onClick={() => setDeleting(tr)}>
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
      {viewed && (
        <Section title={t('triggers.firesTitle', { name: viewed.name })} className="mt-4">
          <TriggerFires trigger={viewed} />
        </Section>
      )}
      <ConfirmDialog
        open={deleting !== null}
        title={t('triggers.confirmTitle', { name: deleting?.name ?? '' })}
        body={t('triggers.confirmBody')}
        confirm={t('triggers.confirmDelete')}
        onConfirm={remove}
        onClose={() => setDeleting(null)}
      />
      <ConfirmDialog
        open={rotating !== null}
        title={t('triggers.rotateTitle', { name: rotating?.name ?? '' })}
        body={t('triggers.rotateBody')}
        confirm={t('triggers.rotateConfirm')}
        onConfirm={rotate}
        onClose={() => setRotating(null)}
      />
    </div>
  )
}

/**
 * SecretPanel shows a webhook's address and signing secret, which the
 * server shows only on this one answer (the secret with a copy button),
 * with how to sign a delivery.
 */
function SecretPanel({ trigger, secret, onDone }: { trigger: Trigger; secret: string; onDone: () => void }) {
  const { t } = useTranslation()
  const url = window.location.origin + trigger.url
  const recipe = [
    `BODY='{"event":"example"}'`,
    'TS=$(date +%s)',
    `SIG=$(printf '%s.%s' "$TS" "$BODY" | openssl dgst -sha256 -hmac '${secret}' | sed 's/^.* //')`,
    `curl -s '${url}' -H 'Content-Type: application/json' \\`,
    `  -H "X-AgentCraft-Timestamp: $TS" -H "X-AgentCraft-Signature: sha256=$SIG" \\`,
    `  -H "X-AgentCraft-Delivery: $(uuidgen)" -d "$BODY"`,
  ].join('\n')
  return (
    <Section title={t('triggers.secretTitle', { name: trigger.name })}>
      <Field label={t('triggers.webhookURL')}>
        {(id) => <TextInput id={id} readOnly translate="no" className="w-full font-mono" value={url} onFocus={(e) => e.currentTarget.select()} />}
      </Field>
      <Secret title={t('triggers.secret')} label={t('triggers.secret')} value={secret} note={t('triggers.secretOnce')} onDone={onDone} />
      <p className="mb-1 text-sm">{t('triggers.signHelp')}</p>
      <pre translate="no" aria-label={t('triggers.recipe')} className="overflow-x-auto rounded bg-slate-100 p-2 text-xs dark:bg-slate-800">
        {recipe}
      </pre>
    </Section>
  )
}
