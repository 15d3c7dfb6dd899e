import { useEffect, useId, useRef, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Button, ErrorAlert } from './ui'

/**
 * ConfirmDialog asks before a deletion: a modal dialog named by its
 * title, with the confirming button (danger) and Cancel, which has focus
 * so that Enter does not delete by accident. open shows it; onConfirm's
 * failure is shown in it.
 */
export function ConfirmDialog({
  open,
  title,
  body,
  confirm,
  onConfirm,
  onClose,
}: {
  open: boolean
  title: string
  body: string
  confirm: string
  onConfirm: () => Promise<void>
  onClose: () => void
}) {
  const { t } = useTranslation()
  const ref = useRef<HTMLDialogElement>(null)
  const titleID = useId()
  const bodyID = useId()
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  useEffect(() => {
    const d = ref.current
    if (!d) return
    if (open && !d.open) {
      setError(undefined)
      d.showModal()
    }
    if (!open && d.open) d.close()
  }, [open])
  const run = async () => {
    setBusy(true)
    setError(undefined)
    try {
      await onConfirm()
      onClose()
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleID}
      aria-describedby={bodyID}
      onClose={onClose}
      className="m-auto w-[28rem] max-w-[90vw] rounded-lg border border-slate-300 bg-white p-4 text-slate-900 backdrop:bg-slate-900/50 dark:border-slate-600 dark:bg-slate-900 dark:text-slate-100"
    >
      {open && (
        <>
          <h2 id={titleID} className="mb-2 text-lg font-semibold">
            {title}
          </h2>
          <p id={bodyID} className="mb-3 text-sm">
            {body}
          </p>
          <ErrorAlert error={error} />
          <div className="flex justify-end gap-2">
            <Button onClick={onClose} autoFocus>
              {t('common.cancel')}
            </Button>
            <Button variant="danger" onClick={() => void run()} disabled={busy}>
              {confirm}
            </Button>
          </div>
        </>
      )}
    </dialog>
  )
}
