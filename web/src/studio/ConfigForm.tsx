// The config form of one node, generated from its kind's config_schema:
// strings, numbers, booleans, enums, lists of objects (router routes),
// templates and expressions as text areas, and JSON for the rest.
import { useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Button, Field, Select, TextArea, TextInput } from '../components/ui'
import type { JSONSchema, KindDescription, WorkflowNode } from '../workflow/types'
import { kindTitle } from '../workflow/kinds'

const longKeys = new Set(['prompt', 'script', 'template', 'expression', 'instructions', 'body', 'code', 'system'])

function typeOf(s: JSONSchema): string | undefined {
  return Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type
}

interface ValueProps {
  name: string
  schema: JSONSchema
  value: unknown
  onChange: (v: unknown) => void
  required?: boolean
}

/** JSONField edits any value as JSON text, kept while it does not parse. */
function JSONField({ name, schema, value, onChange }: ValueProps) {
  const { t } = useTranslation()
  const [text, setText] = useState(() => (value === undefined ? '' : JSON.stringify(value, null, 2)))
  const [error, setError] = useState('')
  useEffect(() => {
    setText(value === undefined ? '' : JSON.stringify(value, null, 2))
    setError('')
  }, [value])
  return (
    <Field label={t('studio.form.jsonLabel', { name })} help={schema.description} error={error}>
      {(id, d) => (
        <TextArea
          id={id}
          aria-describedby={d}
          rows={4}
          className="font-mono"
          value={text}
          onChange={(e) => setText(e.target.value)}
          onBlur={() => {
            if (text.trim() === '') {
              onChange(undefined)
              return
            }
            try {
              onChange(JSON.parse(text))
              setError('')
            } catch (e) {
              setError(t('studio.form.badJSON', { message: (e as Error).message }))
            }
          }}
        />
      )}
    </Field>
  )
}

function ValueField(props: ValueProps) {
  const { t } = useTranslation()
  const { name, schema, value, onChange, required } = props
  const label = (schema.title || name) + (required ? ' *' : '')
  const help = schema.description
  const type = typeOf(schema)
  if (schema.enum) {
    return (
      <Field label={label} help={help}>
        {(id, d) => (
          <Select id={id} aria-describedby={d} value={value === undefined ? '' : String(value)} onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)}>
            <option value="">{t('studio.form.unset')}</option>
            {schema.enum!.map((o) => (
              <option key={String(o)} value={String(o)}>
                {String(o)}
              </option>
            ))}
          </Select>
        )}
      </Field>
    )
  }
  switch (type) {
    case 'string': {
      const long = schema.format === 'template' || schema.format === 'expression' || longKeys.has(name)
      const v = typeof value === 'string' ? value : ''
      const placeholder = schema.examples?.length ? String(schema.examples[0]) : schema.default !== undefined ? String(schema.default) : undefined
      return (
        <Field label={label} help={help}>
          {(id, d) =>
            long ? (
              <TextArea id={id} aria-describedby={d} rows={4} className="font-mono" value={v} placeholder={placeholder} onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)} />
            ) : (
              <TextInput id={id} aria-describedby={d} value={v} placeholder={placeholder} onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)} />
            )
          }
        </Field>
      )
    }
    case 'number':
    case 'integer':
      return (
        <Field label={label} help={help}>
          {(id, d) => (
            <TextInput
              id={id}
              aria-describedby={d}
              type="number"
              min={schema.minimum}
              max={schema.maximum}
              step={type === 'integer' ? 1 : 'any'}
              value={typeof value === 'number' ? value : ''}
              onChange={(e) => onChange(e.target.value === '' ? undefined : Number(e.target.value))}
            />
          )}
        </Field>
      )
    case 'boolean':
      return (
        <div className="mb-3">
          <label className="flex items-center gap-2 text-sm font-medium">
            <input type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked)} />
            {label}
          </label>
          {help && <p className="text-xs text-slate-600 dark:text-slate-400">{help}</p>}
        </div>
      )
    case 'array': {
      const items = schema.items
      const list = Array.isArray(value) ? value : []
      if (items && typeOf(items) === 'string' && !items.enum) {
        return (
          <Field label={label} help={help ? help + ' ' + t('studio.form.onePerLine') : t('studio.form.onePerLine')}>
            {(id, d) => (
              <TextArea id={id} aria-describedby={d} rows={3} value={list.join('\n')} onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value.split('\n'))} />
            )}
          </Field>
        )
      }
      if (items && typeOf(items) === 'object' && items.properties) {
        return (
          <fieldset className="mb-3 rounded border border-slate-200 p-2 dark:border-slate-700">
            <legend className="px-1 text-sm font-medium">{label}</legend>
            {help && <p className="mb-2 text-xs text-slate-600 dark:text-slate-400">{help}</p>}
            {list.map((item, i) => (
              <fieldset key={i} className="mb-2 rounded border border-slate-200 p-2 dark:border-slate-700">
                <legend className="px-1 text-xs">{t('studio.form.item', { name: schema.title || name, n: i + 1 })}</legend>
                <ObjectFields
                  schema={items}
                  value={(item ?? {}) as Record<string, unknown>}
                  onChange={(o) => onChange(list.map((x, j) => (j === i ? o : x)))}
                />
                <Button variant="danger" aria-label={t('studio.form.removeItem', { name: schema.title || name, n: i + 1 })} onClick={() => onChange(list.filter((_, j) => j !== i))}>
                  {t('studio.form.remove')}
                </Button>
              </fieldset>
            ))}
            <Button onClick={() => onChange([...list, {}])}>{t('studio.form.addItem', { name: schema.title || name })}</Button>
          </fieldset>
        )
      }
      return <JSONField {...props} />
    }
    default:
      return <JSONField {...props} />
  }
}

function ObjectFields({ schema, value, onChange }: { schema: JSONSchema; value: Record<string, unknown>; onChange: (v: Record<string, unknown>) => void }) {
  const props = schema.properties ?? {}
  return (
    <>
      {Object.entries(props).map(([k, s]) => (
        <ValueField
          key={k}
          name={k}
          schema={s}
          required={schema.required?.includes(k)}
          value={value[k]}
          onChange={(v) => {
            const next = { ...value }
            if (v === undefined) delete next[k]
            else next[k] = v
            onChange(next)
          }}
        />
      ))}
    </>
  )
}

/** ConfigForm edits a node's name and config. */
export function ConfigForm({ node, kind, onChange }: { node: WorkflowNode; kind?: KindDescription; onChange: (n: WorkflowNode) => void }) {
  const { t } = useTranslation()
  const schema = kind?.config_schema
  return (
    <form aria-label={t('studio.form.title', { name: node.name || node.id })} onSubmit={(e) => e.preventDefault()}>
      <p className="mb-2 text-xs text-slate-600 dark:text-slate-400">
        {t('studio.form.kindLine', { kind: kindTitle(t, kind, node.type), id: node.id })}
      </p>
      {kind?.description && <p className="mb-3 text-xs text-slate-600 dark:text-slate-400">{kind.description}</p>}
      <Field label={t('studio.form.name')}>
        {(id) => <TextInput id={id} value={node.name ?? ''} onChange={(e) => onChange({ ...node, name: e.target.value || undefined })} />}
      </Field>
      {schema?.properties ? (
        <ObjectFields schema={schema} value={node.config ?? {}} onChange={(config) => onChange({ ...node, config })} />
      ) : (
        <JSONField name={t('studio.form.config')} schema={schema ?? {}} value={node.config} onChange={(v) => onChange({ ...node, config: (v ?? {}) as Record<string, unknown> })} />
      )}
    </form>
  )
}
