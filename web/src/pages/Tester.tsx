import { useCallback, useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { api, apiHeaders } from '../api'
import { Button, ErrorAlert, Field, PageHeader, Section, Select, TextArea, TextInput, useLoad } from '../components/ui'
import { useSession } from '../session'
import { RawRequest, RawResponse } from '../tester/RawExchange'
import { send, type Received, type Sent } from '../tester/send'
import { HeaderError, methods, parseHeaders, protocols, templates, type Draft, type Protocol } from '../tester/templates'

// Protocol names are names: the same in every language.
const protocolNames: Record<Protocol, string> = { openai: 'OpenAI', mcp: 'MCP', a2a: 'A2A', agui: 'AG-UI', http: 'HTTP' }

type AuthMode = 'session' | 'key'

/** ComposeError is a draft that cannot be sent; its message says why, translated. */
class ComposeError extends Error {}

/**
 * Tester composes requests to this server's own surfaces (OpenAI, MCP,
 * A2A, AG-UI, plain HTTP) and shows each raw: the request as sent, secrets
 * masked, and the answer as it arrives. Secrets typed here live only in
 * this page's memory.
 */
export default function Tester() {
  const { t } = useTranslation()
  const { workspace } = useSession()
  const agentsLoad = useLoad(() => api<{ data: { name: string }[] }>('/api/agents').then((r) => r.data.map((x) => x.name)), [workspace])
  const agents = agentsLoad.data ?? []
  const [protocol, setProtocol] = useState<Protocol>('openai')
  const [templateID, setTemplateID] = useState(templates.openai[0].id)
  const [agent, setAgent] = useState('')
  const [draft, setDraft] = useState<Draft>(() => templates.openai[0].build(''))
  const dirty = useRef(false)
  const [authMode, setAuthMode] = useState<AuthMode>('session')
  const [apiKey, setAPIKey] = useState('')
  const [mcpToken, setMCPToken] = useState('')
  const [clientID, setClientID] = useState('')
  const [clientSecret, setClientSecret] = useState('')
  const [composeError, setComposeError] = useState<string>()
  const [sent, setSent] = useState<Sent | null>(null)
  const [received, setReceived] = useState<Received | null>(null)
  const [running, setRunning] = useState(false)
  const abort = useRef<AbortController | null>(null)
  const tabs = useRef<Record<string, HTMLButtonElement | null>>({})

  const template = templates[protocol].find((x) => x.id === templateID) ?? templates[protocol][0]

  const apply = useCallback((p: Protocol, id: string, a: string) => {
    const tpl = templates[p].find((x) => x.id === id) ?? templates[p][0]
    setDraft(tpl.build(a))
    dirty.current = false
    setComposeError(undefined)
  }, [])

  useEffect(() => {
    const names = agentsLoad.data
    if (names) setAgent((cur) => (names.includes(cur) ? cur : (names[0] ?? '')))
  }, [agentsLoad.data])

  // The agents' arrival (or another workspace's) fills the untouched
  // template in with the agent's name.
  useEffect(() => {
    if (!dirty.current) apply(protocol, templateID, agent)
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [agent])

  useEffect(() => () => abort.current?.abort(), [])

  const chooseProtocol = (p: Protocol) => {
    setProtocol(p)
    setTemplateID(templates[p][0].id)
    apply(p, templates[p][0].id, agent)
  }

  const onTabKey = (e: KeyboardEvent<HTMLButtonElement>) => {
    const i = protocols.indexOf(protocol)
    const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: protocols.length - 1 }[e.key]
    if (to === undefined) return
    e.preventDefault()
    const p = protocols[(to + protocols.length) % protocols.length]
    chooseProtocol(p)
    tabs.current[p]?.focus()
  }

  const edit = (change: Partial<Draft>) => {
    dirty.current = true
    setDraft((d) => ({ ...d, ...change }))
  }

  /** build turns d into the request fetch sends, with this tab's credentials. */
  const build = (d: Draft): Sent => {
    const path = d.path.trim()
    if (!path.startsWith('/') || path.startsWith('//')) throw new ComposeError(t('tester.pathOutside'))
    const url = new URL(path, window.location.origin)
    if (url.origin !== window.location.origin) throw new ComposeError(t('tester.pathOutside'))
    let headers: [string, string][]
    try {
      headers = parseHeaders(d.headers)
    } catch (e) {
      if (e instanceof HeaderError) throw new ComposeError(t('tester.badHeader', { line: e.line, text: e.text }))
      throw e
    }
    const method = d.method.toUpperCase()
    const has = (name: string) => headers.some(([k]) => k.toLowerCase() === name.toLowerCase())
    let session = false
    if (!has('Authorization')) {
      const secret = protocol === 'mcp' ? mcpToken.trim() : authMode === 'key' ? apiKey.trim() : ''
      if (secret) headers.push(['Authorization', 'Bearer ' + secret])
      else if (protocol !== 'mcp') {
        session = true
        for (const [k, v] of Object.entries(apiHeaders(method))) if (!has(k)) headers.push([k, v])
      }
    }
    return { method, url: url.href, headers, body: method === 'GET' || method === 'HEAD' ? '' : d.body, session }
  }

  const run = async (req: Sent): Promise<Received | null> => {
    abort.current?.abort()
    const ctl = new AbortController()
    abort.current = ctl
    setSent(req)
    setReceived(null)
    setRunning(true)
    let last: Received | null = null
    await send(req, ctl.signal, (r) => {
      last = r
      if (abort.current === ctl) setReceived(r)
    })
    if (abort.current === ctl) {
      setRunning(false)
      abort.current = null
    }
    return last
  }

  const submit = (e: FormEvent) => {
    e.preventDefault()
    setComposeError(undefined)
    let req: Sent
    try {
      req = build(draft)
    } catch (err) {
      if (err instanceof ComposeError) {
        setComposeError(err.message)
        return
      }
      throw err
    }
    void run(req)
  }

  const getToken = async () => {
    setComposeError(undefined)
    const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientID.trim(), client_secret: clientSecret }).toString()
    const r = await run({
      method: 'POST',
      url: new URL('/oauth/token', window.location.origin).href,
      headers: [['Content-Type', 'application/x-www-form-urlencoded']],
      body,
      session: false,
    })
    if (r?.status !== 200) return
    try {
      const tok = JSON.parse(r.body)?.access_token
      if (typeof tok === 'string' && tok) setMCPToken(tok)
    } catch {
      // the raw answer shows what came instead
    }
  }

  let preview: Sent | null = null
  if (!sent) {
    try {
      preview = build(draft)
    } catch {
      preview = null
    }
  }

  const hasBody = draft.method !== 'GET' && draft.method !== 'HEAD'
  return (
    <div className="p-4">
      <PageHeader title={t('tester.title')} />
      <p className="mb-4 max-w-3xl text-sm text-slate-600 dark:text-slate-400">{t('tester.intro')}</p>
      <div className="grid gap-4 xl:grid-cols-2">
        <div className="min-w-0">
          <Section title={t('tester.compose')}>
            <div role="tablist" aria-label={t('tester.protocol')} className="mb-3 flex flex-wrap gap-1 border-b border-slate-200 dark:border-slate-700">
              {protocols.map((p) => (
                <button
                  key={p}
                  ref={(el) => {
                    tabs.current[p] = el
                  }}
                  type="button"
                  role="tab"
                  id={`tester-tab-${p}`}
                  aria-selected={p === protocol}
                  aria-controls="tester-panel"
                  tabIndex={p === protocol ? 0 : -1}
                  onKeyDown={onTabKey}
                  onClick={() => chooseProtocol(p)}
                  className={
                    '-mb-px rounded-t border px-3 py-1 text-sm focus:outline focus:outline-2 focus:outline-indigo-600 dark:focus:outline-indigo-300 ' +
                    (p === protocol
                      ? 'border-slate-200 border-b-white bg-white font-semibold text-indigo-800 dark:border-slate-700 dark:border-b-slate-950 dark:bg-slate-950 dark:text-indigo-200'
                      : 'border-transparent text-slate-700 hover:bg-slate-100 dark:text-slate-300 dark:hover:bg-slate-800')
                  }
                >
                  {protocolNames[p]}
                </button>
              ))}
            </div>
            <div id="tester-panel" role="tabpanel" aria-labelledby={`tester-tab-${protocol}`}>
              <form onSubmit={submit}>
                <p className="mb-3 text-sm text-slate-600 dark:text-slate-400">{t(`tester.about.${protocol}`)}</p>
                <ErrorAlert error={agentsLoad.error} />
                <div className="flex flex-wrap gap-3">
                  <Field label={t('tester.template')}>
                    {(id) => (
                      <Select
                        id={id}
                        value={template.id}
                        onChange={(e) => {
                          setTemplateID(e.target.value)
                          apply(protocol, e.target.value, agent)
                        }}
                      >
                        {templates[protocol].map((x) => (
                          <option key={x.id} value={x.id}>
                            {t(`tester.templates.${protocol}.${x.id}`)}
                          </option>
                        ))}
                      </Select>
                    )}
                  </Field>
                  {template.agent && (
                    <Field label={t('tester.agent')} help={agents.length === 0 ? t('tester.noAgents') : undefined}>
                      {(id, d) => (
                        <Select
                          id={id}
                          aria-describedby={d}
                          value={agent}
                          onChange={(e) => {
                            setAgent(e.target.value)
                            apply(protocol, template.id, e.target.value)
                          }}
                        >
                          {agents.map((a) => (
                            <option key={a} value={a}>
                              {a}
                            </option>
                          ))}
                        </Select>
                      )}
                    </Field>
                  )}
                </div>
                <div className="flex gap-2">
                  <Field label={t('tester.method')}>
                    {(id) => (
                      <Select id={id} value={draft.method} onChange={(e) => edit({ method: e.target.value })}>
                        {methods.map((m) => (
                          <option key={m} value={m}>
                            {m}
                          </option>
                        ))}
                      </Select>
                    )}
                  </Field>
                  <div className="min-w-0 flex-1">
                    <Field label={t('tester.path')} help={t('tester.pathHelp')}>
                      {(id, d) => (
                        <TextInput id={id} aria-describedby={d} className="w-full font-mono" spellCheck={false} value={draft.path} onChange={(e) => edit({ path: e.target.value })} required />
                      )}
                    </Field>
                  </div>
                </div>
                <Field label={t('tester.headers')} help={t('tester.headersHelp')}>
                  {(id, d) => (
                    <TextArea id={id} aria-describedby={d} rows={3} className="w-full font-mono" spellCheck={false} value={draft.headers} onChange={(e) => edit({ headers: e.target.value })} />
                  )}
                </Field>
                {hasBody && (
                  <Field label={t('tester.body')}>
                    {(id) => <TextArea id={id} rows={12} className="w-full font-mono" spellCheck={false} value={draft.body} onChange={(e) => edit({ body: e.target.value })} />}
                  </Field>
                )}
                {protocol === 'mcp' ? (
                  <McpCredentials
                    token={mcpToken}
                    setToken={setMCPToken}
                    clientID={clientID}
                    setClientID={setClientID}
                    clientSecret={clientSecret}
                    setClientSecret={setClientSecret}
                    getToken={() => void getToken()}
                    busy={running}
                  />
                ) : (
                  <fieldset className="mb-3">
                    <legend className="mb-1 text-sm font-medium">{t('tester.credentials')}</legend>
                    <div className="flex flex-wrap items-center gap-4 text-sm">
                      <label className="flex items-center gap-1">
                        <input type="radio" name="tester-auth" checked={authMode === 'session'} onChange={() => setAuthMode('session')} />
                        {t('tester.useSession')}
                      </label>
                      <label className="flex items-center gap-1">
                        <input type="radio" name="tester-auth" checked={authMode === 'key'} onChange={() => setAuthMode('key')} />
                        {t('tester.useKey')}
                      </label>
                    </div>
                    {authMode === 'key' && (
                      <div className="mt-2">
                        <Field label={t('tester.apiKey')} help={t('tester.keyHelp')}>
                          {(id, d) => <TextInput id={id} aria-describedby={d} type="password" autoComplete="off" className="w-full font-mono" value={apiKey} onChange={(e) => setAPIKey(e.target.value)} />}
                        </Field>
                      </div>
                    )}
                  </fieldset>
                )}
                {composeError && (
                  <p role="alert" className="mb-3 rounded border border-red-300 bg-red-50 p-2 text-sm text-red-800 dark:border-red-700 dark:bg-red-950 dark:text-red-200">
                    {composeError}
                  </p>
                )}
                <div className="flex gap-2">
                  <Button type="submit" variant="primary">
                    {t('tester.send')}
                  </Button>
                  <Button onClick={() => apply(protocol, template.id, agent)}>{t('tester.reset')}</Button>
                  {running && <Button onClick={() => abort.current?.abort()}>{t('tester.stop')}</Button>}
                </div>
              </form>
            </div>
          </Section>
        </div>
        <div className="min-w-0">
          <RawRequest sent={sent ?? preview} preview={!sent} />
          <RawResponse received={received} running={running} />
        </div>
      </div>
    </div>
  )
}

interface McpCredentialsProps {
  token: string
  setToken: (v: string) => void
  clientID: string
  setClientID: (v: string) => void
  clientSecret: string
  setClientSecret: (v: string) => void
  getToken: () => void
  busy: boolean
}

/** McpCredentials is the bearer token /mcp needs, and a way to get one with an OAuth client's id and secret. */
function McpCredentials(p: McpCredentialsProps) {
  const { t } = useTranslation()
  return (
    <fieldset className="mb-3 rounded border border-slate-200 p-3 dark:border-slate-700">
      <legend className="px-1 text-sm font-medium">{t('tester.credentials')}</legend>
      <Field label={t('tester.mcpToken')} help={t('tester.mcpTokenHelp')}>
        {(id, d) => <TextInput id={id} aria-describedby={d} type="password" autoComplete="off" className="w-full font-mono" value={p.token} onChange={(e) => p.setToken(e.target.value)} />}
      </Field>
      <p className="mb-2 text-sm text-slate-600 dark:text-slate-400">{t('tester.getTokenAbout')}</p>
      <div className="flex flex-wrap items-end gap-3">
        <Field label={t('tester.clientID')}>
          {(id) => <TextInput id={id} autoComplete="off" className="font-mono" value={p.clientID} onChange={(e) => p.setClientID(e.target.value)} />}
        </Field>
        <Field label={t('tester.clientSecret')}>
          {(id) => <TextInput id={id} type="password" autoComplete="off" className="font-mono" value={p.clientSecret} onChange={(e) => p.setClientSecret(e.target.value)} />}
        </Field>
        <div className="mb-3">
          <Button onClick={p.getToken} disabled={p.busy || !p.clientID.trim() || !p.clientSecret}>
            {t('tester.getToken')}
          </Button>
        </div>
      </div>
    </fieldset>
  )
}
