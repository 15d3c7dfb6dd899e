import { useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { Button, ErrorAlert } from '../components/ui'
import { AnswerFields, useAnswer } from '../workflow/AnswerFields'
import type { Wait } from './types'

/**
 * HumanForm is the answer form of a waiting human node in the run view:
 * the fields of its form_schema (or one free-text answer), sent as the
 * resume input.
 */
export function HumanForm({ wait, onSubmit }: { wait: Wait; onSubmit: (input: unknown) => Promise<void> }) {
  const { t } = useTranslation()
  const answer = useAnswer(wait.form_schema)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const submit = async (e: FormEvent) => {
    e.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      await onSubmit(answer.value())
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  return (
    <form aria-label={t('runs.form.title')} onSubmit={submit}>
      <p className="mb-3 whitespace-pre-wrap text-sm">{wait.prompt}</p>
      {wait.deadline && <p className="mb-3 text-xs text-slate-600 dark:text-slate-400">{t('runs.form.deadline', { time: new Date(wait.deadline).toLocaleString() })}</p>}
      <AnswerFields answer={answer} />
      <ErrorAlert error={error} />
      <Button type="submit" variant="primary" disabled={busy}>
        {t('runs.form.submit')}
      </Button>
    </form>
  )
}
