import { useId, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { apiRequest } from '../api'

/** Attachment is an uploaded file (POST /api/upload) the next runs send as forwardedProps.fileIds. */
export interface Attachment {
  fileId: string
  name: string
}

async function upload(file: File): Promise<Attachment> {
  const form = new FormData()
  form.append('file', file, file.name)
  const body = await apiRequest<{ fileId: string; name?: string }>('/api/upload', { method: 'POST', body: form })
  return { fileId: body.fileId, name: body.name ?? file.name }
}

/** AttachButton uploads chosen files and reports each as an attachment. */
export function AttachButton({ onAttached, onError, disabled }: { onAttached: (a: Attachment) => void; onError: (message: string) => void; disabled?: boolean }) {
  const { t } = useTranslation()
  const id = useId()
  const [busy, setBusy] = useState(false)
  return (
    <>
      <label
        htmlFor={id}
        className={
          'cursor-pointer self-end rounded border border-slate-300 bg-white px-2 py-1 text-sm dark:border-slate-700 dark:bg-slate-900 ' +
          (busy || disabled ? 'opacity-60' : 'hover:bg-slate-100 dark:hover:bg-slate-800')
        }
      >
        {busy ? t('chat.uploading') : t('chat.attach')}
      </label>
      <input
        id={id}
        type="file"
        multiple
        className="sr-only"
        disabled={busy || disabled}
        onChange={async (e) => {
          const files = Array.from(e.target.files ?? [])
          e.target.value = ''
          setBusy(true)
          try {
            for (const f of files) onAttached(await upload(f))
          } catch (err) {
            onError(t('chat.uploadFailed', { message: (err as Error).message }))
          } finally {
            setBusy(false)
          }
        }}
      />
    </>
  )
}

/** AttachmentChips shows the files the next message carries, each removable. */
export function AttachmentChips({ files, onRemove }: { files: Attachment[]; onRemove: (fileId: string) => void }) {
  const { t } = useTranslation()
  if (files.length === 0) return null
  return (
    <ul aria-label={t('chat.attachments')} className="flex flex-wrap gap-2 px-3 pt-2">
      {files.map((f) => (
        <li key={f.fileId} className="flex items-center gap-1 rounded-full border border-slate-300 bg-slate-100 px-2 py-0.5 text-xs text-slate-900 dark:border-slate-600 dark:bg-slate-800 dark:text-slate-100">
          <span>{f.name}</span>
          <button type="button" className="ml-1 rounded px-1 hover:bg-slate-200 dark:hover:bg-slate-700" aria-label={t('chat.removeAttachment', { name: f.name })} onClick={() => onRemove(f.fileId)}>
            ×
          </button>
        </li>
      ))}
    </ul>
  )
}
