import { useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { fieldError, fieldOf } from '../api'
import { Button, ErrorAlert, Field, TextArea, TextInput } from '../components/ui'
import type { Skill } from './types'

/** Form is what the skill form edits. */
interface Form {
  name: string
  description: string
  instructions: string
  license: string
  compatibility: string
  allowedTools: string
}

function formOf(s?: Skill): Form {
  return {
    name: s?.name ?? '',
    description: s?.description ?? '',
    instructions: s?.instructions ?? '',
    license: s?.license ?? '',
    compatibility: s?.compatibility ?? '',
    allowedTools: s?.allowed_tools ?? '',
  }
}

/**
 * bodyOf is the body of POST /api/skills or PUT /api/skills/{name}: the
 * form's fields and the skill's metadata as stored. It sends no files, so
 * an edit keeps the skill's files (the server keeps them when files is
 * left out); files come with an import.
 */
function bodyOf(f: Form, s?: Skill): Record<string, unknown> {
  return {
    name: f.name.trim(),
    description: f.description.trim(),
    instructions: f.instructions,
    license: f.license.trim() || undefined,
    compatibility: f.compatibility.trim() || undefined,
    allowed_tools: f.allowedTools.trim() || undefined,
    metadata: s?.metadata,
  }
}

/**
 * SkillForm creates a skill (skill undefined) or edits one (its name
 * fixed: a skill is named after its folder): description, instructions
 * and the optional front matter fields. A server error naming a field is
 * shown beside it; others above the buttons.
 */
export function SkillForm({ skill, onSubmit, onCancel }: { skill?: Skill; onSubmit: (body: Record<string, unknown>) => Promise<void>; onCancel: () => void }) {
  const { t } = useTranslation()
  const [f, setF] = useState<Form>(() => formOf(skill))
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const set = <K extends keyof Form>(k: K, v: Form[K]) => setF((prev) => ({ ...prev, [k]: v }))
  const errorFor = (name: string) => fieldError(error, name)
  const shown = ['name', 'description', 'instructions', 'license', 'compatibility', 'allowed_tools']
  const general = shown.includes(fieldOf(error)) ? undefined : error
  const title = skill ? t('skills.editTitle', { name: skill.name }) : t('skills.createTitle')

  const submit = async (e: FormEvent) => {
    e.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      await onSubmit(bodyOf(f, skill))
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }

  return (
    <form onSubmit={submit} aria-label={title} noValidate>
      <div className="grid gap-x-4 md:grid-cols-2">
        <Field label={t('skills.name')} help={t('skills.nameHelp')} error={errorFor('name')}>
          {(id, d) => (
            <TextInput id={id} aria-describedby={d} aria-invalid={!!errorFor('name')} className="font-mono" value={f.name} disabled={!!skill} onChange={(e) => set('name', e.target.value)} required />
          )}
        </Field>
        <Field label={t('skills.license')} error={errorFor('license')}>
          {(id, d) => <TextInput id={id} aria-describedby={d} value={f.license} onChange={(e) => set('license', e.target.value)} />}
        </Field>
      </div>
      <Field label={t('skills.description')} help={t('skills.descriptionHelp')} error={errorFor('description')}>
        {(id, d) => (
          <TextArea id={id} aria-describedby={d} aria-invalid={!!errorFor('description')} rows={2} maxLength={1024} value={f.description} onChange={(e) => set('description', e.target.value)} required />
        )}
      </Field>
      <Field label={t('skills.instructions')} help={t('skills.instructionsHelp')} error={errorFor('instructions')}>
        {(id, d) => (
          <TextArea id={id} aria-describedby={d} aria-invalid={!!errorFor('instructions')} rows={12} className="font-mono" value={f.instructions} onChange={(e) => set('instructions', e.target.value)} required />
        )}
      </Field>
      <div className="grid gap-x-4 md:grid-cols-2">
        <Field label={t('skills.compatibility')} error={errorFor('compatibility')}>
          {(id, d) => <TextInput id={id} aria-describedby={d} maxLength={500} value={f.compatibility} onChange={(e) => set('compatibility', e.target.value)} />}
        </Field>
        <Field label={t('skills.allowedTools')} help={t('skills.allowedToolsHelp')} error={errorFor('allowed_tools')}>
          {(id, d) => <TextInput id={id} aria-describedby={d} className="font-mono" value={f.allowedTools} onChange={(e) => set('allowedTools', e.target.value)} />}
        </Field>
      </div>
      <ErrorAlert error={general} />
      <div className="flex gap-2">
        <Button type="submit" variant="primary" disabled={busy || !f.name.trim() || !f.description.trim() || !f.instructions.trim()}>
          {skill ? t('skills.save') : t('skills.createButton')}
        </Button>
        <Button onClick={onCancel}>{t('common.cancel')}</Button>
      </div>
    </form>
  )
}
