import { useId, useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { Button, controlClass } from '../components/ui'

/** Pending is a workflow's human node waiting for an answer (an AG-UI interrupt). */
export interface Pending {
  id: string
  message?: string
  responseSchema?: Record<string, unknown>
}

interface Prop {
  type?: string
  title?: string
  description?: string
  enum?: unknown[]
}

/**
 * InterruptForm answers a human node inline: one control per property of
 * the interrupt's responseSchema (checkbox, number, choice or text), sent as
 * the resume payload; a schema without properties takes free text.
 */
export function InterruptForm({ pending, busy, onAnswer, onCancel }: { pending: Pending; busy: boolean; onAnswer: (payload: unknown) => void; onCancel: () => void }) {
  const { t } = useTranslation()
  const titleID = useId()
  const base = useId()
  const props = ((pending.responseSchema?.properties ?? {}) as Record<string, Prop>) || {}
  const keys = Object.keys(props)
  const required = new Set((pending.responseSchema?.required as string[] | undefined) ?? [])
  const [values, setValues] = useState<Record<string, unknown>>(() =>
    Object.fromEntries(keys.map((k) => [k, props[k].type === 'boolean' ? false : props[k].enum ? String(props[k].enum![0] ?? '') : ''])),
  )
  const [text, setText] = useState('')

  const submit = (e: FormEvent) => {
    e.preventDefault()
    if (keys.length === 0) {
      onAnswer(text)
      return
    }
    const payload: Record<string, unknown> = {}
    for (const k of keys) {
      const v = values[k]
      const type = props[k].type
      if ((type === 'number' || type === 'integer') && v !== '') payload[k] = Number(v)
      else if (type === 'boolean') payload[k] = Boolean(v)
      else if (v !== '' || required.has(k)) payload[k] = v
    }
    onAnswer(payload)
  }

  const set = (k: string, v: unknown) => setValues((cur) => ({ ...cur, [k]: v }))

  return (
    <form onSubmit={submit} aria-labelledby={titleID} className="mx-4 mb-2 rounded border border-amber-400 bg-amber-50 p-3 text-sm text-slate-900 dark:border-amber-600 dark:bg-amber-950 dark:text-slate-100">
      <h2 id={titleID} className="mb-1 font-semibold">
        {t('chat.interruptTitle')}
      </h2>
      {pending.message && <p className="mb-2 whitespace-pre-wrap">{pending.message}</p>}
      {keys.length === 0 && (
        <div className="mb-2 flex flex-col gap-1">
          <label htmlFor={base + '-text'}>{t('chat.interruptAnswer')}</label>
          <input id={base + '-text'} className={controlClass} value={text} onChange={(e) => setText(e.target.value)} />
        </div>
      )}
      {keys.map((k) => {
        const p = props[k]
        const id = `${base}-${k}`
        const label = p.title || k
        if (p.type === 'boolean')
          return (
            <div key={k} className="mb-2 flex items-center gap-2">
              <input id={id} type="checkbox" checked={Boolean(values[k])} onChange={(e) => set(k, e.target.checked)} />
              <label htmlFor={id}>{label}</label>
            </div>
          )
        return (
          <div key={k} className="mb-2 flex flex-col gap-1">
            <label htmlFor={id}>{label}</label>
            {p.enum ? (
              <select id={id} className={controlClass} value={String(values[k] ?? '')} onChange={(e) => set(k, e.target.value)}>
                {p.enum.map((o) => (
                  <option key={String(o)} value={String(o)}>
                    {String(o)}
                  </option>
                ))}
              </select>
            ) : (
              <input
                id={id}
                className={controlClass}
                type={p.type === 'number' || p.type === 'integer' ? 'number' : 'text'}
                required={required.has(k)}
                value={String(values[k] ?? '')}
                onChange={(e) => set(k, e.target.value)}
              />
            )}
            {p.description && <p className="text-xs text-slate-600 dark:text-slate-400">{p.description}</p>}
          </div>
        )
      })}
      <div className="flex gap-2">
        <Button type="submit" variant="primary" disabled={busy}>
          {t('chat.interruptSubmit')}
        </Button>
        <Button onClick={onCancel} disabled={busy}>
          {t('chat.interruptCancel')}
        </Button>
      </div>
    </form>
  )
}
