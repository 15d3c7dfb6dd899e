import { useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { Button, ErrorAlert, Field, Select, TextArea, TextInput } from '../components/ui'
import type { Wait } from './types'

interface Prop {
  name: string
  type: string
  title: string
  description?: string
  enum?: unknown[]
  required: boolean
}

/** fields reads the top-level properties of an object form schema; none means a free-text answer. */
function fields(schema?: Record<string, unknown>): Prop[] {
  const props = schema?.properties as Record<string, Record<string, unknown>> | undefined
  if (!props || typeof props !== 'object') return []
  const required = new Set(Array.isArray(schema?.required) ? (schema!.required as string[]) : [])
  return Object.entries(props).map(([name, p]) => ({
    name,
    type: Array.isArray(p?.type) ? String(p.type[0]) : String(p?.type ?? 'string'),
    title: typeof p?.title === 'string' ? p.title : name,
    description: typeof p?.description === 'string' ? p.description : undefined,
    enum: Array.isArray(p?.enum) ? p.enum : undefined,
    required: required.has(name),
  }))
}

/**
 * HumanForm is the answer form of a waiting human node: the fields of its
 * form_schema (strings, numbers, booleans, choices) or one free-text
 * answer, sent as the resume input.
 */
export function HumanForm({ wait, onSubmit }: { wait: Wait; onSubmit: (input: unknown) => Promise<void> }) {
  const { t } = useTranslation()
  const props = fields(wait.form_schema)
  const [values, setValues] = useState<Record<string, string | boolean>>({})
  const [text, setText] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const submit = async (e: FormEvent) => {
    e.preventDefault()
    let input: unknown = text
    if (props.length > 0) {
      const out: Record<string, unknown> = {}
      for (const p of props) {
        const v = values[p.name]
        if (v === undefined || v === '') continue
        if (p.type === 'number' || p.type === 'integer') {
          const n = Number(v)
          if (Number.isNaN(n)) {
            setError(new Error(t('runs.form.notNumber', { field: p.title })))
            return
          }
          out[p.name] = n
        } else out[p.name] = v
      }
      input = out
    }
    setBusy(true)
    setError(undefined)
    try {
      await onSubmit(input)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  const set = (name: string, v: string | boolean) => setValues((o) => ({ ...o, [name]: v }))
  return (
    <form aria-label={t('runs.form.title')} onSubmit={submit}>
      <p className="mb-3 whitespace-pre-wrap text-sm">{wait.prompt}</p>
      {wait.deadline && <p className="mb-3 text-xs text-slate-600 dark:text-slate-400">{t('runs.form.deadline', { time: new Date(wait.deadline).toLocaleString() })}</p>}
      {props.length === 0 && (
        <Field label={t('runs.form.answer')}>{(id, d) => <TextArea id={id} aria-describedby={d} rows={3} required value={text} onChange={(e) => setText(e.target.value)} />}</Field>
      )}
      {props.map((p) =>
        p.type === 'boolean' ? (
          <label key={p.name} className="mb-3 flex items-center gap-2 text-sm">
            <input type="checkbox" checked={values[p.name] === true} onChange={(e) => set(p.name, e.target.checked)} />
            {p.title}
          </label>
        ) : (
          <Field key={p.name} label={p.title} help={p.description}>
            {(id, d) =>
              p.enum ? (
                <Select id={id} aria-describedby={d} required={p.required} value={String(values[p.name] ?? '')} onChange={(e) => set(p.name, e.target.value)}>
                  <option value="">{t('runs.form.choose')}</option>
                  {p.enum.map((o) => (
                    <option key={String(o)} value={String(o)}>
                      {String(o)}
                    </option>
                  ))}
                </Select>
              ) : (
                <TextInput
                  id={id}
                  aria-describedby={d}
                  type={p.type === 'number' || p.type === 'integer' ? 'number' : 'text'}
                  required={p.required}
                  value={String(values[p.name] ?? '')}
                  onChange={(e) => set(p.name, e.target.value)}
                />
              )
            }
          </Field>
        ),
      )}
      <ErrorAlert error={error} />
      <Button type="submit" variant="primary" disabled={busy}>
        {t('runs.form.submit')}
      </Button>
    </form>
  )
}
