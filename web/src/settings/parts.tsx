// Small pieces the settings sections share: an inline confirmation, a
// secret shown once with a copy button, dates in the user's language.
import { useState, type ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import { Button, TextInput } from '../components/ui'

/** useDate formats an API time in the page's language ("" for none). */
export function useDate(): (s: string | undefined) => string {
  const { i18n } = useTranslation()
  const f = new Intl.DateTimeFormat(i18n.language, { dateStyle: 'medium', timeStyle: 'short' })
  return (s) => (s ? f.format(new Date(s)) : '')
}

/**
 * Confirm is a button whose action runs only after a second, explicit
 * click: it first asks question, with the action and Cancel as buttons
 * (focus moves to Cancel, so Enter does not confirm by accident).
 */
export function Confirm({ label, question, action, onConfirm }: { label: string; question: string; action: string; onConfirm: () => Promise<void> }) {
  const { t } = useTranslation()
  const [asking, setAsking] = useState(false)
  const [busy, setBusy] = useState(false)
  if (!asking)
    return (
      <Button variant="danger" onClick={() => setAsking(true)}>
        {label}
      </Button>
    )
  const confirm = async () => {
    setBusy(true)
    try {
      await onConfirm()
    } finally {
      setBusy(false)
      setAsking(false)
    }
  }
  return (
    <span role="group" aria-label={question} className="inline-flex flex-wrap items-center gap-2">
      <span className="text-sm">{question}</span>
      <Button variant="danger" disabled={busy} onClick={() => void confirm()}>
        {action}
      </Button>
      <Button autoFocus disabled={busy} onClick={() => setAsking(false)}>
        {t('common.cancel')}
      </Button>
    </span>
  )
}

/**
 * Secret shows a value the server hands out once (an API key, an
 * invitation link) in a read-only field with a copy button, with note
 * beneath, until the user dismisses it.
 */
export function Secret({ title, label, value, note, onDone }: { title: string; label: string; value: string; note: ReactNode; onDone: () => void }) {
  const { t } = useTranslation()
  const [copied, setCopied] = useState<'yes' | 'no' | undefined>()
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value)
      setCopied('yes')
    } catch {
      setCopied('no')
    }
  }
  return (
    <div role="region" aria-label={title} className="mb-3 rounded border border-amber-400 bg-amber-50 p-3 dark:border-amber-600 dark:bg-amber-950">
      <p className="mb-2 text-sm font-semibold">{title}</p>
      <div className="flex flex-wrap items-center gap-2">
        <TextInput readOnly aria-label={label} value={value} className="min-w-0 flex-1 font-mono" onFocus={(e) => e.target.select()} />
        <Button variant="primary" onClick={() => void copy()}>
          {t('settings.copy')}
        </Button>
        <Button onClick={onDone}>{t('settings.done')}</Button>
      </div>
      <p className="mt-2 text-sm">{note}</p>
      <p role="status" className="text-sm">
        {copied === 'yes' ? t('settings.copied') : copied === 'no' ? t('settings.copyFailed') : ''}
      </p>
    </div>
  )
}

/** Note is a short explanation in place of controls the role lacks. */
export function Note({ children }: { children: ReactNode }) {
  return <p className="text-sm text-slate-600 dark:text-slate-400">{children}</p>
}

/** Done is a status line after a change ("Saved.") */
export function Done({ children }: { children: ReactNode }) {
  return (
    <p role="status" className="mt-2 text-sm text-green-800 dark:text-green-300">
      {children}
    </p>
  )
}
