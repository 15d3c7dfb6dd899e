import { useMemo, useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { fieldError, fieldOf } from '../api'
import { Button, ErrorAlert, Field, Select, TextArea, TextInput } from '../components/ui'
import type { Misfire, Trigger, TriggerKind } from './types'

/** Targets are what a trigger can start: the saved workflows (by id) and the agents (by name). */
export interface Targets {
  workflows: { id: string; name: string }[]
  agents: string[]
}

interface Form {
  name: string
  kind: TriggerKind
  targetKind: 'workflow' | 'agent'
  workflow: string
  agent: string
  schedule: string
  timezone: string
  misfire: Misfire
  input: string
  enabled: boolean
}

function formOf(tr: Trigger | undefined, targets: Targets): Form {
  const input = tr?.input === undefined || tr.input === null ? '' : JSON.stringify(tr.input, null, 2)
  return {
    name: tr?.name ?? '',
    kind: tr?.kind ?? 'schedule',
    targetKind: tr?.agent ? 'agent' : tr?.workflow_id || targets.workflows.length > 0 ? 'workflow' : 'agent',
    workflow: tr?.workflow_id ?? targets.workflows[0]?.id ?? '',
    agent: tr?.agent ?? targets.agents[0] ?? '',
    schedule: tr?.schedule ?? '0 9 * * 1-5',
    timezone: tr ? (tr.timezone ?? '') : Intl.DateTimeFormat().resolvedOptions().timeZone || '',
    misfire: tr?.misfire ?? 'skip',
    input,
    enabled: tr?.enabled ?? true,
  }
}

/** zones are the IANA time zones the browser knows, offered as the Time zone field's suggestions. */
function zones(): string[] {
  try {
    return ['UTC', ...Intl.supportedValuesOf('timeZone')]
  } catch {
    return ['UTC']
  }
}

/**
 * TriggerForm creates a trigger (trigger undefined) or edits one (its
 * kind fixed: the server refuses a change of kind): the name, the target
 * (a saved workflow or an agent), for a schedule its cron spec, time
 * zone, misfire policy and input, and whether it is enabled. The input
 * must be JSON (checked here, as the request could not carry it
 * otherwise); every other judgement is the server's, its error shown
 * beside the field it names.
 */
export function TriggerForm({
  trigger,
  targets,
  onSubmit,
  onCancel,
}: {
  trigger?: Trigger
  targets: Targets
  onSubmit: (body: Record<string, unknown>) => Promise<void>
  onCancel: () => void
}) {
  const { t } = useTranslation()
  const [f, setF] = useState<Form>(() => formOf(trigger, targets))
  const [error, setError] = useState<unknown>()
  const [inputError, setInputError] = useState('')
  const [busy, setBusy] = useState(false)
  const zoneList = useMemo(zones, [])
  const set = <K extends keyof Form>(k: K, v: Form[K]) => setF((prev) => ({ ...prev, [k]: v }))
  const errorFor = (name: string) => fieldError(error, name)
  // The fields that show their own server error; any other is shown above the buttons.
  const shown = ['name', 'kind', 'workflow', 'agent', 'schedule', 'timezone', 'misfire', 'input']
  const general = shown.includes(fieldOf(error)) ? undefined : error
  const title = trigger ? t('triggers.editTitle', { name: trigger.name }) : t('triggers.createTitle')
  const schedule = f.kind === 'schedule'
  const targetError = errorFor('workflow') ?? errorFor('agent')

  const submit = async (e: FormEvent) => {
    e.preventDefault()
    setError(undefined)
    setInputError('')
    const body: Record<string, unknown> = { name: f.name.trim(), enabled: f.enabled }
    if (!trigger) body.kind = f.kind
    if (f.targetKind === 'workflow') {
      body.workflow = f.workflow
      if (trigger?.agent) body.agent = ''
    } else {
      body.agent = f.agent
      if (trigger?.workflow_id) body.workflow = ''
    }
    if (schedule) {
      body.schedule = f.schedule.trim()
      body.timezone = f.timezone.trim()
      body.misfire = f.misfire
      if (f.input.trim() === '') {
        if (trigger?.input !== undefined) body.input = null
      } else {
        try {
          body.input = JSON.parse(f.input)
        } catch {
          setInputError(t('triggers.inputInvalid'))
          return
        }
      }
    }
    setBusy(true)
    try {
      await onSubmit(body)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }

  return (
    <form onSubmit={submit} aria-label={title} noValidate>
      <div className="grid gap-x-4 md:grid-cols-2">
        <Field label={t('triggers.name')} help={t('triggers.nameHelp')} error={errorFor('name')}>
          {(id, d) => <TextInput id={id} aria-describedby={d} aria-invalid={!!errorFor('name')} value={f.name} onChange={(e) => set('name', e.target.value)} required />}
        </Field>
        <fieldset className="mb-3">
          <legend className="mb-1 text-sm font-medium">{t('triggers.kind')}</legend>
          <div className="flex gap-4 text-sm">
            {(['schedule', 'webhook'] as const).map((k) => (
              <label key={k} className="flex items-center gap-1">
                <input type="radio" name="trigger-kind" value={k} checked={f.kind === k} disabled={!!trigger} onChange={() => set('kind', k)} />
                {t('triggers.kinds.' + k)}
              </label>
            ))}
          </div>
          {errorFor('kind') ? (
            <p className="mt-1 text-xs text-red-700 dark:text-red-300">{errorFor('kind')}</p>
          ) : (
            <p className="mt-1 text-xs text-slate-600 dark:text-slate-400">{trigger ? t('triggers.kindFixed') : t('triggers.kindHelp')}</p>
          )}
        </fieldset>
      </div>
      <div className="grid gap-x-4 md:grid-cols-2">
        <Field label={t('triggers.targetKind')}>
          {(id) => (
            <Select id={id} value={f.targetKind} onChange={(e) => set('targetKind', e.target.value as Form['targetKind'])}>
              <option value="workflow">{t('triggers.targetWorkflow')}</option>
              <option value="agent">{t('triggers.targetAgent')}</option>
            </Select>
          )}
        </Field>
        {f.targetKind === 'workflow' ? (
          <Field label={t('triggers.workflow')} help={targets.workflows.length === 0 ? t('triggers.noWorkflows') : t('triggers.workflowHelp')} error={targetError}>
            {(id, d) => (
              <Select id={id} aria-describedby={d} aria-invalid={!!targetError} value={f.workflow} onChange={(e) => set('workflow', e.target.value)}>
                {targets.workflows.map((w) => (
                  <option key={w.id} value={w.id} translate="no">
                    {w.name}
                  </option>
                ))}
              </Select>
            )}
          </Field>
        ) : (
          <Field label={t('triggers.agent')} help={targets.agents.length === 0 ? t('triggers.noAgents') : undefined} error={targetError}>
            {(id, d) => (
              <Select id={id} aria-describedby={d} aria-invalid={!!targetError} value={f.agent} onChange={(e) => set('agent', e.target.value)}>
                {targets.agents.map((a) => (
                  <option key={a} value={a} translate="no">
                    {a}
                  </option>
                ))}
              </Select>
            )}
          </Field>
        )}
      </div>
      {schedule ? (
        <>
          <div className="grid gap-x-4 md:grid-cols-3">
            <Field label={t('triggers.schedule')} help={t('triggers.scheduleHelp')} error={errorFor('schedule')}>
              {(id, d) => (
                <TextInput id={id} aria-describedby={d} aria-invalid={!!errorFor('schedule')} className="font-mono" value={f.schedule} onChange={(e) => set('schedule', e.target.value)} required />
              )}
            </Field>
            <Field label={t('triggers.timezone')} help={t('triggers.timezoneHelp')} error={errorFor('timezone')}>
              {(id, d) => (
                <>
                  <TextInput id={id} aria-describedby={d} aria-invalid={!!errorFor('timezone')} list={id + '-zones'} value={f.timezone} onChange={(e) => set('timezone', e.target.value)} />
                  <datalist id={id + '-zones'}>
                    {zoneList.map((z) => (
                      <option key={z} value={z} />
                    ))}
                  </datalist>
                </>
              )}
            </Field>
            <Field label={t('triggers.misfire')} help={t('triggers.misfireHelp')} error={errorFor('misfire')}>
              {(id, d) => (
                <Select id={id} aria-describedby={d} value={f.misfire} onChange={(e) => set('misfire', e.target.value as Misfire)}>
                  <option value="skip">{t('triggers.misfires.skip')}</option>
                  <option value="catch_up_once">{t('triggers.misfires.catch_up_once')}</option>
                </Select>
              )}
            </Field>
          </div>
          <Field label={t('triggers.input')} help={t('triggers.inputHelp', { placeholder: '{{input}}' })} error={inputError || errorFor('input')}>
            {(id, d) => (
              <TextArea id={id} aria-describedby={d} aria-invalid={!!(inputError || errorFor('input'))} rows={3} className="font-mono" value={f.input} onChange={(e) => set('input', e.target.value)} />
            )}
          </Field>
        </>
      ) : (
        <p className="mb-3 text-sm text-slate-600 dark:text-slate-400">{t('triggers.webhookHelp')}</p>
      )}
      <label className="mb-3 flex items-center gap-2 text-sm">
        <input type="checkbox" checked={f.enabled} onChange={(e) => set('enabled', e.target.checked)} />
        {t('triggers.enabledLabel')}
      </label>
      <ErrorAlert error={general} />
      <div className="flex gap-2">
        <Button type="submit" variant="primary" disabled={busy || !f.name.trim() || (f.targetKind === 'workflow' ? !f.workflow : !f.agent)}>
          {trigger ? t('triggers.save') : t('triggers.createButton')}
        </Button>
        <Button onClick={onCancel}>{t('common.cancel')}</Button>
      </div>
    </form>
  )
}
