// Sending one tester request: the exact request the page hands fetch, and
// the answer as it arrives (status, headers, then the body chunk by chunk,
// so a stream of server-sent events shows while it is still coming).

/** Sent is the request as fetch sent it. */
export interface Sent {
  method: string
  url: string
  headers: [string, string][]
  body: string
  /** session says the page relied on the browser's session cookie (no Authorization header). */
  session: boolean
}

/** Received is the answer so far. */
export interface Received {
  status?: number
  statusText?: string
  headers: [string, string][]
  body: string
  bytes: number
  /** headersMs is when the status and headers came, doneMs when the body ended, from the send. */
  headersMs?: number
  doneMs?: number
  /** network is fetch's own failure (no answer, or the stream broke). */
  network?: string
  aborted?: boolean
}

/** secretHeaders are masked wherever the tester shows a request. */
const secretHeaders = new Set(['authorization', 'x-csrf-token', 'proxy-authorization', 'cookie', 'x-api-key'])
const secretParams = new Set(['client_secret', 'password', 'access_token', 'refresh_token'])

/** mask keeps the start of a secret, so two can be told apart, and hides the rest. */
export function mask(value: string): string {
  const m = /^(Bearer|Basic)\s+(.*)$/i.exec(value)
  const [scheme, secret] = m ? [m[1] + ' ', m[2]] : ['', value]
  const keep = secret.length > 12 ? 6 : Math.min(2, secret.length)
  return scheme + secret.slice(0, keep) + '•'.repeat(8)
}

/** maskedHeader is a header as shown: a secret's value masked. */
export function maskedHeader([name, value]: [string, string]): string {
  return name + ': ' + (secretHeaders.has(name.toLowerCase()) ? mask(value) : value)
}

/** maskedBody hides the secrets of a form body (a client secret sent for a token). */
export function maskedBody(body: string, contentType: string): string {
  if (!/^application\/x-www-form-urlencoded/i.test(contentType)) return body
  const params = new URLSearchParams(body)
  let changed = false
  for (const k of [...params.keys()]) {
    if (secretParams.has(k)) {
      params.set(k, mask(params.get(k) ?? ''))
      changed = true
    }
  }
  return changed ? decodeURIComponent(params.toString().replace(/\+/g, ' ')) : body
}

/** sseEvents counts the complete server-sent events in body. */
export function sseEvents(body: string): number {
  return body.split(/\r?\n\r?\n/).filter((b, i, all) => i < all.length - 1 && /^(data|event):/m.test(b)).length
}

/**
 * send hands req to fetch and reports the answer through onUpdate as it
 * arrives, until it ends, fails or signal aborts. It never throws: a
 * failure is Received.network.
 */
export async function send(req: Sent, signal: AbortSignal, onUpdate: (r: Received) => void): Promise<void> {
  const start = performance.now()
  const since = () => Math.round(performance.now() - start)
  let r: Received = { headers: [], body: '', bytes: 0 }
  const update = (next: Partial<Received>) => {
    r = { ...r, ...next }
    onUpdate(r)
  }
  let resp: Response
  try {
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && req.body !== ''
    resp = await fetch(req.url, { method: req.method, headers: req.headers, body: hasBody ? req.body : undefined, credentials: 'same-origin', signal })
  } catch (e) {
    update(signal.aborted ? { aborted: true, doneMs: since() } : { network: (e as Error).message, doneMs: since() })
    return
  }
  update({ status: resp.status, statusText: resp.statusText, headers: [...resp.headers.entries()], headersMs: since() })
  if (!resp.body) {
    update({ doneMs: since() })
    return
  }
  const reader = resp.body.getReader()
  const decoder = new TextDecoder()
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      update({ body: r.body + decoder.decode(value, { stream: true }), bytes: r.bytes + value.byteLength })
    }
    update({ body: r.body + decoder.decode(), doneMs: since() })
  } catch (e) {
    update(signal.aborted ? { aborted: true, doneMs: since() } : { network: (e as Error).message, doneMs: since() })
  }
}
