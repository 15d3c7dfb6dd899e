import { useId, useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { Button, ErrorAlert } from '../components/ui'
import { AnswerFields, useAnswer } from '../workflow/AnswerFields'

/** Pending is a workflow's human node waiting for an answer (an AG-UI interrupt). */
export interface Pending {
  id: string
  message?: string
  responseSchema?: Record<string, unknown>
}

/**
 * InterruptForm answers a human node inline in the chat: the fields of the
 * interrupt's responseSchema (or free text), sent as the resume payload.
 */
export function InterruptForm({ pending, busy, onAnswer, onCancel }: { pending: Pending; busy: boolean; onAnswer: (payload: unknown) => void; onCancel: () => void }) {
  const { t } = useTranslation()
  const titleID = useId()
  const answer = useAnswer(pending.responseSchema)
  const [error, setError] = useState<unknown>()
  const submit = (e: FormEvent) => {
    e.preventDefault()
    try {
      onAnswer(answer.value())
      setError(undefined)
    } catch (err) {
      setError(err)
    }
  }
  return (
    <form onSubmit={submit} aria-labelledby={titleID} className="mx-4 mb-2 rounded border border-amber-400 bg-amber-50 p-3 text-sm text-slate-900 dark:border-amber-600 dark:bg-amber-950 dark:text-slate-100">
      <h2 id={titleID} className="mb-1 font-semibold">
        {t('chat.interruptTitle')}
      </h2>
      {pending.message && <p className="mb-2 whitespace-pre-wrap">{pending.message}</p>}
      <AnswerFields answer={answer} />
      <ErrorAlert error={error} />
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
