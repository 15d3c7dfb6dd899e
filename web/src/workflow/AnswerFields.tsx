// The answer to a waiting human node, as both the chat (an AG-UI
// interrupt's responseSchema) and the run view (the node's form_schema)
// ask for it: one control per top-level property of the schema, or one
// free-text answer when the schema names none.
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Field, Select, TextArea, TextInput } from '../components/ui'

interface AnswerField {
  name: string
  type: string
  title: string
  description?: string
  enum?: unknown[]
  required: boolean
}

function answerFields(schema?: Record<string, unknown>): AnswerField[] {
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

const numeric = (type: string) => type === 'number' || type === 'integer'

/** Answer is the state of one answer form. */
export interface Answer {
  fields: AnswerField[]
  values: Record<string, string | boolean>
  set: (name: string, v: string | boolean) => void
  text: string
  setText: (s: string) => void
  /**
   * value is the answer to send: the free text, or an object of the
   * fields given (a checkbox is always an answer, true or false; numbers
   * as numbers). A field that is not a number throws its title.
   */
  value: () => unknown
}

export function useAnswer(schema?: Record<string, unknown>): Answer {
  const { t } = useTranslation()
  const fields = answerFields(schema)
  const [values, setValues] = useState<Record<string, string | boolean>>({})
  const [text, setText] = useState('')
  const set = (name: string, v: string | boolean) => setValues((o) => ({ ...o, [name]: v }))
  const value = () => {
    if (fields.length === 0) return text
    const out: Record<string, unknown> = {}
    for (const f of fields) {
      const v = values[f.name]
      if (f.type === 'boolean') {
        out[f.name] = v === true
        continue
      }
      if (v === undefined || v === '') continue
      if (numeric(f.type)) {
        const n = Number(v)
        if (Number.isNaN(n)) throw new Error(t('workflow.answer.notNumber', { field: f.title }))
        out[f.name] = n
      } else out[f.name] = v
    }
    return out
  }
  return { fields, values, set, text, setText, value }
}

/** AnswerFields draws the controls of an answer, each labelled, with the schema's help. */
export function AnswerFields({ answer }: { answer: Answer }) {
  const { t } = useTranslation()
  const { fields, values, set, text, setText } = answer
  if (fields.length === 0)
    return <Field label={t('workflow.answer.text')}>{(id, d) => <TextArea id={id} aria-describedby={d} rows={3} required value={text} onChange={(e) => setText(e.target.value)} />}</Field>
  return fields.map((f) =>
    f.type === 'boolean' ? (
      <label key={f.name} className="mb-3 flex items-center gap-2 text-sm">
        <input type="checkbox" checked={values[f.name] === true} onChange={(e) => set(f.name, e.target.checked)} />
        {f.title}
      </label>
    ) : (
      <Field key={f.name} label={f.title} help={f.description}>
        {(id, d) =>
          f.enum ? (
            <Select id={id} aria-describedby={d} required={f.required} value={String(values[f.name] ?? '')} onChange={(e) => set(f.name, e.target.value)}>
              <option value="">{t('workflow.answer.choose')}</option>
              {f.enum.map((o) => (
                <option key={String(o)} value={String(o)}>
                  {String(o)}
                </option>
              ))}
            </Select>
          ) : (
            <TextInput
              id={id}
              aria-describedby={d}
              type={numeric(f.type) ? 'number' : 'text'}
              required={f.required}
              value={String(values[f.name] ?? '')}
              onChange={(e) => set(f.name, e.target.value)}
            />
          )
        }
      </Field>
    ),
  )
}
