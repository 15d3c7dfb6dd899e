import { useId, useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { apiRequest, fieldOf } from '../api'
import { Button, ErrorAlert } from '../components/ui'
import type { Skill } from './types'

/**
 * SkillImport uploads a zip of a skill's folder (or a lone SKILL.md) to
 * POST /api/skills/import, replacing a skill of the same name when asked.
 * The server's message about the archive (a .. path, a missing SKILL.md,
 * a field of the front matter) is shown under the file input.
 */
export function SkillImport({ onImported }: { onImported: (s: Skill) => void }) {
  const { t } = useTranslation()
  const [file, setFile] = useState<File | null>(null)
  const [replace, setReplace] = useState(false)
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const [inputKey, setInputKey] = useState(0)
  const id = useId()

  const submit = async (e: FormEvent) => {
    e.preventDefault()
    if (!file) return
    setBusy(true)
    setError(undefined)
    try {
      const body = new FormData()
      body.append('file', file)
      const s = await apiRequest<Skill>('/api/skills/import' + (replace ? '?replace=true' : ''), { method: 'POST', body })
      onImported(s)
      setFile(null)
      setInputKey((k) => k + 1)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }

  // Errors about the archive name "file", those about its SKILL.md the
  // front matter's field: both are about the file chosen.
  const fileError = fieldOf(error) ? (error as Error).message : undefined
  const general = fileError ? undefined : error

  return (
    <form onSubmit={submit} aria-label={t('skills.importTitle')} noValidate>
      <p className="mb-2 text-xs text-slate-600 dark:text-slate-400">{t('skills.importHelp')}</p>
      <div className="mb-2 flex flex-wrap items-center gap-3">
        <label htmlFor={id} className="text-sm font-medium">
          {t('skills.importFile')}
        </label>
        <input
          key={inputKey}
          id={id}
          type="file"
          accept=".zip,.md,application/zip,text/markdown"
          aria-describedby={fileError ? id + '-e' : undefined}
          aria-invalid={!!fileError}
          className="text-sm"
          onChange={(e) => setFile(e.target.files?.[0] ?? null)}
        />
        <label className="flex items-center gap-2 text-sm">
          <input type="checkbox" checked={replace} onChange={(e) => setReplace(e.target.checked)} />
          {t('skills.replace')}
        </label>
        <Button type="submit" variant="primary" disabled={busy || !file}>
          {t('skills.importButton')}
        </Button>
      </div>
      {fileError && (
        <p id={id + '-e'} className="mb-2 text-xs text-red-700 dark:text-red-300">
          {fileError}
        </p>
      )}
      <ErrorAlert error={general} />
    </form>
  )
}
