import { useId, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { api, APIError } from '../api'
import { Button, TextInput } from '../components/ui'
import type { Approval } from './types'

/** decisionCodes are the refusals of approve/reject the studio explains in its own words. */
const decisionCodes = ['approval_not_allowed', 'self_approval', 'approval_expired', 'already_decided', 'no_pending_approval', 'permission_denied']

/**
 * DecisionError shows why a decision was refused: the studio's words for
 * the server's code (your role may not approve this capability, …) and
 * the server's own message beneath them.
 */
export function DecisionError({ error }: { error: unknown }) {
  const { t } = useTranslation()
  if (!error) return null
  const known = error instanceof APIError && decisionCodes.includes(error.code)
  const message = error instanceof Error ? error.message : String(error)
  return (
    <div role="alert" className="mt-2 rounded border border-red-300 bg-red-50 p-2 text-sm text-red-800 dark:border-red-700 dark:bg-red-950 dark:text-red-200">
      {known ? <p className="font-medium">{t('tasks.decide.error.' + (error as APIError).code)}</p> : null}
      <p>
        {known ? null : t('tasks.decide.failed') + ' '}
        <span translate="no">{message}</span>
      </p>
    </div>
  )
}

/**
 * Decide is the Approve and Reject buttons of a pending approval, with
 * an optional comment; onDecided runs once the server took the decision
 * (the caller refetches, so the approval leaves the pending list).
 */
export function Decide({ approval, onDecided }: { approval: Approval; onDecided: (a: Approval, approved: boolean) => void }) {
  const { t } = useTranslation()
  const id = useId()
  const [comment, setComment] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const decide = async (approve: boolean) => {
    setBusy(true)
    setError(undefined)
    try {
      const a = await api<Approval>(`/api/tasks/${encodeURIComponent(approval.task_id)}/${approve ? 'approve' : 'reject'}`, 'POST', {
        approval_id: approval.id,
        comment: comment.trim(),
      })
      onDecided(a, approve)
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }
  return (
    <div className="mt-2">
      <div className="flex flex-wrap items-end gap-2">
        <div className="flex min-w-48 flex-1 flex-col gap-1">
          <label htmlFor={id} className="text-xs font-medium">
            {t('tasks.decide.comment')}
          </label>
          <TextInput id={id} value={comment} onChange={(e) => setComment(e.target.value)} maxLength={2000} />
        </div>
        <Button variant="primary" disabled={busy} onClick={() => void decide(true)}>
          {t('tasks.decide.approve')}
        </Button>
        <Button variant="danger" disabled={busy} onClick={() => void decide(false)}>
          {t('tasks.decide.reject')}
        </Button>
      </div>
      <DecisionError error={error} />
    </div>
  )
}
