import { useId, useMemo, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Section } from '../components/ui'
import { maskedBody, maskedHeader, sseEvents, type Received, type Sent } from './send'

export const rawClass =
  'max-h-[28rem] overflow-auto whitespace-pre-wrap break-all rounded bg-slate-100 p-2 font-mono text-xs text-slate-900 focus:outline focus:outline-2 focus:outline-indigo-600 dark:bg-slate-800 dark:text-slate-100 dark:focus:outline-indigo-300'

const muted = 'text-sm text-slate-600 dark:text-slate-400'

/** Raw is a labelled block of raw protocol text, focusable so it scrolls by keyboard. */
function Raw({ label, children }: { label: string; children: string }) {
  const id = useId()
  return (
    <div className="mb-3">
      <h3 id={id} className="mb-1 text-sm font-medium">
        {label}
      </h3>
      <pre role="region" aria-labelledby={id} tabIndex={0} className={rawClass}>
        {children}
      </pre>
    </div>
  )
}

const header = (headers: [string, string][], name: string) => headers.find(([k]) => k.toLowerCase() === name)?.[1] ?? ''

/** RawRequest shows a request as it goes on the wire, its secrets masked. */
export function RawRequest({ sent, preview }: { sent: Sent | null; preview: boolean }) {
  const { t } = useTranslation()
  return (
    <Section title={t('tester.rawRequest')}>
      {!sent ? (
        <p className={muted}>{t('tester.noRequest')}</p>
      ) : (
        <>
          {preview && <p className={muted + ' mb-2'}>{t('tester.preview')}</p>}
          <Raw label={t('tester.requestLine')}>{`${sent.method} ${sent.url}\n${sent.headers.map(maskedHeader).join('\n')}`}</Raw>
          {sent.body !== '' && <Raw label={t('tester.requestBody')}>{maskedBody(sent.body, header(sent.headers, 'content-type'))}</Raw>}
          {sent.session && <p className={muted}>{t('tester.cookieNote')}</p>}
        </>
      )}
    </Section>
  )
}

/** errorMessage is the message of a JSON error answer, in the shapes the server's surfaces use. */
function errorMessage(body: string): string {
  try {
    const v = JSON.parse(body)
    if (typeof v?.error === 'string') return v.error_description ? `${v.error}: ${v.error_description}` : v.error
    if (typeof v?.error?.message === 'string') return v.error.message
  } catch {
    // not JSON: the body itself, shortened
  }
  return body.trim().slice(0, 300)
}

/** RawResponse shows the answer as it arrives: status, timing, headers and the body. */
export function RawResponse({ received, running }: { received: Received | null; running: boolean }) {
  const { t, i18n } = useTranslation()
  const [pretty, setPretty] = useState(true)
  const nf = useMemo(() => new Intl.NumberFormat(i18n.language), [i18n.language])
  const contentType = received ? header(received.headers, 'content-type') : ''
  const stream = /^text\/event-stream/i.test(contentType)
  const body = useMemo(() => {
    if (!received || !pretty || running || !/json/i.test(contentType)) return received?.body ?? ''
    try {
      return JSON.stringify(JSON.parse(received.body), null, 2)
    } catch {
      return received.body
    }
  }, [received, pretty, running, contentType])

  let summary: string
  if (!received) summary = running ? t('tester.sending') : t('tester.noResponse')
  else if (received.aborted) summary = t('tester.stopped')
  else if (received.network) summary = t('tester.networkFailed')
  else if (received.status === undefined) summary = t('tester.sending')
  else summary = `HTTP ${received.status} ${received.statusText ?? ''}`.trim()

  const failed = received && !running && received.status !== undefined && received.status >= 400
  return (
    <Section title={t('tester.rawResponse')}>
      <p role="status" className="mb-2 font-mono text-sm font-semibold">
        {summary}
      </p>
      {received?.network && (
        <p role="alert" className="mb-3 rounded border border-red-300 bg-red-50 p-2 text-sm text-red-800 dark:border-red-700 dark:bg-red-950 dark:text-red-200">
          {t('tester.networkError', { message: received.network })}
        </p>
      )}
      {failed && (
        <p role="alert" className="mb-3 rounded border border-red-300 bg-red-50 p-2 text-sm text-red-800 dark:border-red-700 dark:bg-red-950 dark:text-red-200">
          {t('tester.httpError', { status: received.status, message: errorMessage(received.body) })}
        </p>
      )}
      {received && (
        <p className={muted + ' mb-2'}>
          {[
            received.headersMs !== undefined && t('tester.headersAfter', { ms: nf.format(received.headersMs) }),
            received.doneMs !== undefined ? t('tester.doneAfter', { ms: nf.format(received.doneMs) }) : running && t('tester.receiving'),
            t('tester.bytes', { count: received.bytes, n: nf.format(received.bytes) }),
            stream && t('tester.events', { count: sseEvents(received.body), n: nf.format(sseEvents(received.body)) }),
          ]
            .filter(Boolean)
            .join(' · ')}
        </p>
      )}
      {received && received.headers.length > 0 && <Raw label={t('tester.responseHeaders')}>{received.headers.map(maskedHeader).join('\n')}</Raw>}
      {received && received.status !== undefined && (
        <>
          <Raw label={stream ? t('tester.responseStream') : t('tester.responseBody')}>{body}</Raw>
          <label className="flex items-center gap-2 text-sm">
            <input type="checkbox" checked={pretty} onChange={(e) => setPretty(e.target.checked)} />
            {t('tester.pretty')}
          </label>
        </>
      )}
    </Section>
  )
}
