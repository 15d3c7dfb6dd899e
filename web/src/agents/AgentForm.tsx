import { useId, useState, type FormEvent, type ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import { fieldError, fieldOf } from '../api'
import { Button, ErrorAlert, Field, Select, TextArea, TextInput } from '../components/ui'
import type { Skill } from '../skills/types'
import type { ToolInfo } from '../tools/types'
import { piiLocales, type Agent, type GuardRule, type Middleware, type ProviderInfo } from './types'

// blockedWordsRule is the guard rule the form's "blocked words" box
// edits; the agent's other rules are kept as they are.
const blockedWordsRule = 'blocked_words'

/** Form is what the agent form edits; numbers stay text until sent. */
interface Form {
  name: string
  model: string
  instructions: string
  maxSteps: string
  tools: string[]
  skills: string[]
  guardOn: boolean
  injection: boolean
  scanOutput: boolean
  blockMessage: string
  blockedWords: string
  piiOn: boolean
  piiMode: string
  piiLocales: string[]
  rateOn: boolean
  rps: string
  burst: string
  retryOn: boolean
  maxRetries: string
  loggingOn: boolean
  toolProgress: boolean
}

function formOf(a?: Agent): Form {
  const mw: Middleware = a?.params.middleware ?? {}
  const words = mw.guard?.rules?.find((r) => r.name === blockedWordsRule)?.keywords ?? []
  return {
    name: a?.name ?? '',
    model: a?.model ?? '',
    instructions: a?.instructions ?? '',
    maxSteps: a?.params.max_steps ? String(a.params.max_steps) : '',
    tools: a?.tools ?? [],
    skills: a?.params.skills ?? [],
    guardOn: !!mw.guard,
    injection: !!mw.guard?.injection,
    scanOutput: !!mw.guard?.scan_output,
    blockMessage: mw.guard?.block_message ?? '',
    blockedWords: words.join(', '),
    piiOn: !!mw.pii,
    piiMode: mw.pii?.mode || 'mask',
    piiLocales: mw.pii?.locales ?? [],
    rateOn: mw.rate_limit?.enabled === true,
    rps: mw.rate_limit?.rps ? String(mw.rate_limit.rps) : '',
    burst: mw.rate_limit?.burst ? String(mw.rate_limit.burst) : '',
    retryOn: mw.retry?.enabled !== false,
    maxRetries: mw.retry?.max_retries ? String(mw.retry.max_retries) : '',
    loggingOn: mw.logging?.enabled !== false,
    toolProgress: !!mw.tool_progress,
  }
}

/** num is a form number as JSON: undefined (the default) when empty. */
function num(s: string): number | undefined {
  const v = s.trim()
  return v === '' ? undefined : Number(v)
}

/** switchOf is a middleware layer's enabled for the body: false when off, else what was stored (unset means the default, on). */
function switchOf(on: boolean, stored: boolean | undefined): boolean | undefined {
  if (!on) return false
  return stored === undefined ? undefined : true
}

/**
 * bodyOf is the agent body of PUT/POST /api/agents: the form's fields
 * over the agent as stored, so that what the form does not show
 * (temperature, knowledge bases, memory, other guard rules …) is kept.
 */
export function bodyOf(f: Form, a?: Agent): Record<string, unknown> {
  const p = a?.params ?? {}
  const mw: Middleware = p.middleware ?? {}
  let guard: Middleware['guard']
  if (f.guardOn) {
    const rules: GuardRule[] = (mw.guard?.rules ?? []).filter((r) => r.name !== blockedWordsRule)
    const words = f.blockedWords
      .split(/[,\n、，]/)
      .map((w) => w.trim())
      .filter(Boolean)
    if (words.length) rules.push({ name: blockedWordsRule, keywords: words, action: 'block' })
    guard = { ...mw.guard, rules: rules.length ? rules : undefined, injection: f.injection, scan_output: f.scanOutput, block_message: f.blockMessage.trim() || undefined }
  }
  return {
    name: f.name.trim(),
    model: f.model.trim(),
    instructions: f.instructions,
    tools: f.tools,
    skills: f.skills,
    max_steps: num(f.maxSteps),
    temperature: p.temperature,
    max_tokens: p.max_tokens,
    token_budget: p.token_budget,
    tool_timeout_seconds: p.tool_timeout_seconds,
    max_tool_result_bytes: p.max_tool_result_bytes,
    knowledge_bases: p.knowledge_bases,
    memory: p.memory,
    guard,
    pii: f.piiOn ? { ...mw.pii, mode: f.piiMode, locales: f.piiLocales.length ? f.piiLocales : undefined } : undefined,
    // Off leaves the provider's limit (if any) in force.
    rate_limit: f.rateOn ? { ...mw.rate_limit, enabled: true, rps: num(f.rps), burst: num(f.burst) } : undefined,
    retry: { ...mw.retry, enabled: switchOf(f.retryOn, mw.retry?.enabled), max_retries: f.retryOn ? num(f.maxRetries) : mw.retry?.max_retries },
    logging: { ...mw.logging, enabled: switchOf(f.loggingOn, mw.logging?.enabled) },
    tool_progress: f.toolProgress,
  }
}

/** Group is a fieldset with a legend and, under it, the server's error about it. */
function Group({ legend, error, children }: { legend: string; error?: string; children: ReactNode }) {
  const id = useId()
  return (
    <fieldset aria-describedby={error ? id : undefined} className="mb-3 rounded border border-slate-300 p-3 dark:border-slate-600">
      <legend className="px-1 text-sm font-medium">{legend}</legend>
      {children}
      {error && (
        <p id={id} className="mt-1 text-xs text-red-700 dark:text-red-300">
          {error}
        </p>
      )}
    </fieldset>
  )
}

function Check({ label, checked, onChange, disabled }: { label: ReactNode; checked: boolean; onChange: (v: boolean) => void; disabled?: boolean }) {
  return (
    <label className="mb-1 flex items-center gap-2 text-sm">
      <input type="checkbox" checked={checked} disabled={disabled} onChange={(e) => onChange(e.target.checked)} />
      {label}
    </label>
  )
}

/** ToolCheck is a tool's checkbox, named by the tool and described by its description. */
function ToolCheck({ name, description, data = true, off, checked, onChange }: { name: string; description: string; data?: boolean; off?: boolean; checked: boolean; onChange: (v: boolean) => void }) {
  const { t } = useTranslation()
  const id = useId()
  return (
    <div className="flex items-start gap-2 text-sm">
      <input id={id} type="checkbox" className="mt-1" aria-describedby={id + '-d'} checked={checked} onChange={(e) => onChange(e.target.checked)} />
      <div>
        <label htmlFor={id} className="font-mono">
          {name}
        </label>
        {off && <span className="ml-1 text-xs text-amber-800 dark:text-amber-300">{t('agents.toolOff')}</span>}
        <p id={id + '-d'} translate={data ? 'no' : undefined} className="text-xs text-slate-600 dark:text-slate-400">
          {description}
        </p>
      </div>
    </div>
  )
}

/**
 * AgentForm creates an agent (agent undefined) or edits one: name, model
 * (the providers' models offered, any PROVIDER/MODEL typed), instructions,
 * max steps, tools (the workspace's, with their descriptions) and the
 * middleware an agent sets for itself. A server error naming a field
 * (its param) is shown beside that field; others above the buttons.
 */
export function AgentForm({
  agent,
  tools,
  skills,
  providers,
  onSubmit,
  onCancel,
}: {
  agent?: Agent
  tools: ToolInfo[]
  skills: Skill[]
  providers: ProviderInfo[]
  onSubmit: (body: Record<string, unknown>) => Promise<void>
  onCancel: () => void
}) {
  const { t } = useTranslation()
  const [f, setF] = useState<Form>(() => formOf(agent))
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const modelsID = useId()
  const set = <K extends keyof Form>(k: K, v: Form[K]) => setF((prev) => ({ ...prev, [k]: v }))
  const field = fieldOf(error)
  const errorFor = (name: string) => fieldError(error, name)
  const shown = ['name', 'model', 'instructions', 'max_steps', 'tools', 'skills', 'guard', 'pii', 'rate_limit', 'retry', 'logging']
  const general = shown.includes(field) ? undefined : error

  const submit = async (e: FormEvent) => {
    e.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      await onSubmit(bodyOf(f, agent))
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }

  const toggleTool = (name: string, on: boolean) => set('tools', on ? [...f.tools, name] : f.tools.filter((x) => x !== name))
  const toggleSkill = (name: string, on: boolean) => set('skills', on ? [...f.skills, name] : f.skills.filter((x) => x !== name))
  // Skills the agent names that are gone (deleted since) stay listed so they can be unticked.
  const known = new Set(skills.map((x) => x.name))
  const goneSkills = f.skills.filter((n) => !known.has(n))
  // Tools the agent names that the workspace does not list now (mcp:server, a server that is down) stay pickable.
  const listed = new Set(tools.map((x) => x.name))
  const extra = f.tools.filter((n) => !listed.has(n))
  const models = providers.flatMap((p) => (p.models ?? []).map((m) => p.name + '/' + m))
  const title = agent ? t('agents.editTitle', { name: agent.name }) : t('agents.createTitle')

  return (
    <form onSubmit={submit} aria-label={title} noValidate>
      <div className="grid gap-x-4 md:grid-cols-2">
        <Field label={t('agents.name')} help={t('agents.nameHelp')} error={errorFor('name')}>
          {(id, d) => (
            <TextInput id={id} aria-describedby={d} aria-invalid={!!errorFor('name')} value={f.name} onChange={(e) => set('name', e.target.value)} required />
          )}
        </Field>
        <Field label={t('agents.model')} help={t('agents.modelHelp')} error={errorFor('model')}>
          {(id, d) => (
            <>
              <TextInput id={id} aria-describedby={d} aria-invalid={!!errorFor('model')} list={modelsID} value={f.model} onChange={(e) => set('model', e.target.value)} required />
              <datalist id={modelsID}>
                {models.map((m) => (
                  <option key={m} value={m} />
                ))}
              </datalist>
            </>
          )}
        </Field>
      </div>
      <Field label={t('agents.instructions')} error={errorFor('instructions')}>
        {(id, d) => <TextArea id={id} aria-describedby={d} rows={4} value={f.instructions} onChange={(e) => set('instructions', e.target.value)} />}
      </Field>
      <Field label={t('agents.maxSteps')} help={t('agents.maxStepsHelp')} error={errorFor('max_steps')}>
        {(id, d) => (
          <TextInput id={id} aria-describedby={d} aria-invalid={!!errorFor('max_steps')} className="w-32" type="number" inputMode="numeric" value={f.maxSteps} onChange={(e) => set('maxSteps', e.target.value)} />
        )}
      </Field>

      <Group legend={t('agents.tools')} error={errorFor('tools')}>
        {tools.length === 0 && extra.length === 0 && <p className="text-sm text-slate-600 dark:text-slate-400">{t('agents.noTools')}</p>}
        <ul className="grid gap-1 md:grid-cols-2">
          {tools.map((x) => (
            <li key={x.name}>
              <ToolCheck name={x.name} description={x.description} off={!x.enabled} checked={f.tools.includes(x.name)} onChange={(v) => toggleTool(x.name, v)} />
            </li>
          ))}
          {extra.map((n) => (
            <li key={n}>
              <ToolCheck name={n} description={t('agents.toolNotListed')} data={false} checked onChange={(v) => toggleTool(n, v)} />
            </li>
          ))}
        </ul>
      </Group>

      <Group legend={t('agents.skills')} error={errorFor('skills')}>
        <p className="mb-2 text-xs text-slate-600 dark:text-slate-400">{t('agents.skillsHelp')}</p>
        {skills.length === 0 && goneSkills.length === 0 && <p className="text-sm text-slate-600 dark:text-slate-400">{t('agents.noSkills')}</p>}
        <ul className="grid gap-1 md:grid-cols-2">
          {skills.map((x) => (
            <li key={x.name}>
              <ToolCheck name={x.name} description={x.description} checked={f.skills.includes(x.name)} onChange={(v) => toggleSkill(x.name, v)} />
            </li>
          ))}
          {goneSkills.map((n) => (
            <li key={n}>
              <ToolCheck name={n} description={t('agents.skillGone')} data={false} checked onChange={(v) => toggleSkill(n, v)} />
            </li>
          ))}
        </ul>
      </Group>

      <h3 className="mb-2 mt-4 text-sm font-semibold">{t('agents.middleware')}</h3>
      <p className="mb-2 text-xs text-slate-600 dark:text-slate-400">{t('agents.middlewareHelp')}</p>
      <div className="grid gap-x-4 md:grid-cols-2">
        <Group legend={t('agents.guard')} error={errorFor('guard')}>
          <Check label={t('agents.guardOn')} checked={f.guardOn} onChange={(v) => set('guardOn', v)} />
          <Check label={t('agents.injection')} checked={f.injection} disabled={!f.guardOn} onChange={(v) => set('injection', v)} />
          <Check label={t('agents.scanOutput')} checked={f.scanOutput} disabled={!f.guardOn} onChange={(v) => set('scanOutput', v)} />
          <Field label={t('agents.blockedWords')} help={t('agents.blockedWordsHelp')}>
            {(id, d) => <TextInput id={id} aria-describedby={d} disabled={!f.guardOn} value={f.blockedWords} onChange={(e) => set('blockedWords', e.target.value)} />}
          </Field>
          <Field label={t('agents.blockMessage')}>
            {(id) => <TextInput id={id} disabled={!f.guardOn} value={f.blockMessage} onChange={(e) => set('blockMessage', e.target.value)} />}
          </Field>
        </Group>
        <Group legend={t('agents.pii')} error={errorFor('pii')}>
          <Check label={t('agents.piiOn')} checked={f.piiOn} onChange={(v) => set('piiOn', v)} />
          <Field label={t('agents.piiMode')}>
            {(id) => (
              <Select id={id} disabled={!f.piiOn} value={f.piiMode} onChange={(e) => set('piiMode', e.target.value)}>
                <option value="mask">{t('agents.piiMask')}</option>
                <option value="redact">{t('agents.piiRedact')}</option>
              </Select>
            )}
          </Field>
          <fieldset>
            <legend className="mb-1 text-sm">{t('agents.piiLocales')}</legend>
            <div className="flex flex-wrap gap-x-3">
              {piiLocales.map((l) => (
                <Check
                  key={l}
                  label={t('agents.locale.' + l)}
                  disabled={!f.piiOn}
                  checked={f.piiLocales.includes(l)}
                  onChange={(v) => set('piiLocales', v ? [...f.piiLocales, l] : f.piiLocales.filter((x) => x !== l))}
                />
              ))}
            </div>
          </fieldset>
        </Group>
        <Group legend={t('agents.rateLimit')} error={errorFor('rate_limit')}>
          <Check label={t('agents.rateOn')} checked={f.rateOn} onChange={(v) => set('rateOn', v)} />
          <div className="flex gap-3">
            <Field label={t('agents.rps')}>
              {(id) => <TextInput id={id} className="w-28" type="number" step="any" disabled={!f.rateOn} value={f.rps} onChange={(e) => set('rps', e.target.value)} />}
            </Field>
            <Field label={t('agents.burst')}>
              {(id) => <TextInput id={id} className="w-28" type="number" disabled={!f.rateOn} value={f.burst} onChange={(e) => set('burst', e.target.value)} />}
            </Field>
          </div>
        </Group>
        <Group legend={t('agents.retry')} error={errorFor('retry')}>
          <Check label={t('agents.retryOn')} checked={f.retryOn} onChange={(v) => set('retryOn', v)} />
          <Field label={t('agents.maxRetries')} help={t('agents.maxRetriesHelp')}>
            {(id, d) => <TextInput id={id} aria-describedby={d} className="w-28" type="number" disabled={!f.retryOn} value={f.maxRetries} onChange={(e) => set('maxRetries', e.target.value)} />}
          </Field>
        </Group>
        <Group legend={t('agents.logging')} error={errorFor('logging')}>
          <Check label={t('agents.loggingOn')} checked={f.loggingOn} onChange={(v) => set('loggingOn', v)} />
        </Group>
        <Group legend={t('agents.progress')}>
          <Check label={t('agents.toolProgress')} checked={f.toolProgress} onChange={(v) => set('toolProgress', v)} />
        </Group>
      </div>

      <ErrorAlert error={general} />
      <div className="flex gap-2">
        <Button type="submit" variant="primary" disabled={busy}>
          {agent ? t('agents.save') : t('agents.createButton')}
        </Button>
        <Button onClick={onCancel}>{t('common.cancel')}</Button>
      </div>
    </form>
  )
}
