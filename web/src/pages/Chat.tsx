import '../zodconfig'
import { HttpAgent, type Message } from '@ag-ui/client'
import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent, type KeyboardEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { api, apiFetch, apiHeaders, type Conversation, type StoredMessage } from '../api'
import { AttachButton, AttachmentChips, type Attachment } from '../chat/Attachments'
import { Citations, PassageDialog, type Citation } from '../chat/citations'
import { InterruptForm, type Pending } from '../chat/InterruptForm'
import { useSession } from '../session'

const control = 'rounded border border-slate-500 bg-white px-2 py-1 dark:border-slate-500 dark:bg-slate-900'
const agentKey = 'agentcraft.chat.agent'
type Mode = 'agent' | 'workflow'
const threadPrefix = 'agui:'

interface ToolCall {
  id: string
  name: string
  args: string
}

/** A turn is a user message and the answer to it: text, and the tool calls folded beneath. */
interface Turn {
  id: string
  user?: string
  answer: string
  calls: ToolCall[]
  results: Record<string, string>
}

function newThreadId(): string {
  return crypto.randomUUID()
}

// storedToAGUI turns a stored conversation's messages into the AG-UI
// thread the client resends with every run (the server stores only the
// turns it lacks).
function storedToAGUI(msgs: StoredMessage[]): Message[] {
  const out: Message[] = []
  for (const m of msgs) {
    const id = `stored-${m.seq}`
    switch (m.role) {
      case 'user':
        out.push({ id, role: 'user', content: m.content })
        break
      case 'assistant':
        out.push({
          id,
          role: 'assistant',
          content: m.content,
          toolCalls: m.tool_calls?.map((c) => ({
            id: c.id,
            type: 'function' as const,
            function: { name: c.name ?? c.function?.name ?? '', arguments: c.arguments ?? c.function?.arguments ?? '' },
          })),
        })
        break
      case 'tool':
        out.push({ id, role: 'tool', content: m.content, toolCallId: m.tool_call_id ?? '' })
        break
    }
  }
  return out
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content))
    return content.map((p) => (p && typeof p === 'object' && 'text' in p ? String((p as { text: unknown }).text) : '')).join('')
  return ''
}

function turnsOf(messages: Message[]): Turn[] {
  const turns: Turn[] = []
  let cur: Turn | null = null
  for (const m of messages) {
    if (m.role === 'user') {
      cur = { id: m.id, user: textOf(m.content), answer: '', calls: [], results: {} }
      turns.push(cur)
      continue
    }
    if (!cur) {
      cur = { id: m.id, answer: '', calls: [], results: {} }
      turns.push(cur)
    }
    if (m.role === 'assistant') {
      const text = textOf(m.content)
      if (text) cur.answer += (cur.answer ? '\n\n' : '') + text
      for (const c of m.toolCalls ?? []) cur.calls.push({ id: c.id, name: c.function.name, args: c.function.arguments })
    } else if (m.role === 'tool') {
      cur.results[m.toolCallId] = textOf(m.content)
    }
  }
  return turns
}

// wireThread is the thread as the server keeps it: the user's messages
// and the answers, without the server's own tool steps (it stores only the
// answer of each run, and a resent tool step would read as a new branch of
// the thread and be stored twice).
function wireThread(messages: Message[]): Message[] {
  const out: Message[] = []
  for (const m of messages) {
    if (m.role === 'tool') continue
    if (m.role === 'assistant' && m.toolCalls?.length) {
      if (!textOf(m.content)) continue
      out.push({ ...m, toolCalls: undefined })
      continue
    }
    out.push(m)
  }
  return out
}

function ToolCalls({ turn }: { turn: Turn }) {
  const { t } = useTranslation()
  if (turn.calls.length === 0) return null
  return (
    <details className="mt-2 rounded border border-slate-200 p-2 text-sm dark:border-slate-700">
      <summary className="cursor-pointer">{t('chat.toolCalls', { count: turn.calls.length })}</summary>
      <ul className="mt-2 space-y-2">
        {turn.calls.map((c) => (
          <li key={c.id}>
            <code className="font-semibold">{c.name}</code>
            <div className="text-xs text-slate-500 dark:text-slate-400">{t('chat.toolArguments')}</div>
            <pre className="overflow-x-auto whitespace-pre-wrap rounded bg-slate-100 p-1 text-xs dark:bg-slate-800">{c.args}</pre>
            <div className="text-xs text-slate-500 dark:text-slate-400">{t('chat.toolResult')}</div>
            <pre className="overflow-x-auto whitespace-pre-wrap rounded bg-slate-100 p-1 text-xs dark:bg-slate-800">
              {turn.results[c.id] ?? t('chat.noResult')}
            </pre>
          </li>
        ))}
      </ul>
    </details>
  )
}

/** Chat talks to one agent over AG-UI, one conversation (thread) at a time. */
export default function Chat() {
  const { t } = useTranslation()
  const { workspace } = useSession()
  const [agents, setAgents] = useState<string[] | null>(null)
  const [agent, setAgent] = useState<string>(localStorage.getItem(agentKey) ?? '')
  const [conversations, setConversations] = useState<Conversation[]>([])
  const [threadId, setThreadId] = useState<string>(newThreadId)
  const [messages, setMessages] = useState<Message[]>([])
  const [draft, setDraft] = useState('')
  const [running, setRunning] = useState(false)
  const [error, setError] = useState<string | null>(null)
  // files are the uploads every run of this thread sends
  // (forwardedProps.fileIds), so later turns still search them.
  const [files, setFiles] = useState<Attachment[]>([])
  // cites are each answer's sources, by the id of the turn's user message.
  const [cites, setCites] = useState<Record<string, Citation[]>>({})
  const [passage, setPassage] = useState<Citation | null>(null)
  // mode says whether the thread talks to an agent or runs a workflow
  // (POST /agui/workflows/{name}); pending is a human node waiting.
  const [mode, setMode] = useState<Mode>('agent')
  const [workflows, setWorkflows] = useState<string[] | null>(null)
  const [workflow, setWorkflow] = useState('')
  const [pending, setPending] = useState<Pending | null>(null)
  const runner = useRef<HttpAgent | null>(null)
  // The tool calls of this page's earlier turns, by the turn's id: the
  // thread sent again leaves them out (see wireThread), the page keeps
  // showing them.
  const folded = useRef(new Map<string, Pick<Turn, 'calls' | 'results'>>())

  const loadConversations = useCallback(async (): Promise<Conversation[]> => {
    try {
      const page = await api<{ data: Conversation[] }>('/api/conversations?limit=50')
      const list = page.data.filter((c) => c.external_ref?.startsWith(threadPrefix))
      setConversations(list)
      return list
    } catch (e) {
      setError(t('chat.loadFailed', { message: (e as Error).message }))
      return []
    }
  }, [t])

  // The server creates a thread's conversation on its first run, without
  // a title: name it after the first thing the user asked.
  const nameThread = useCallback(
    async (ref: string, firstMessage: string) => {
      const list = await loadConversations()
      const c = list.find((x) => x.external_ref === ref)
      if (!c || c.title) return
      const title = firstMessage.length > 60 ? firstMessage.slice(0, 59) + '…' : firstMessage
      try {
        await api(`/api/conversations/${encodeURIComponent(c.id)}`, 'PATCH', { title })
        await loadConversations()
      } catch {
        // untitled is fine: the list shows a placeholder
      }
    },
    [loadConversations],
  )

  useEffect(() => {
    let live = true
    // Another workspace: its agents and threads, and a runner sending its name.
    runner.current?.abortRun()
    runner.current = null
    api<{ data: { name: string }[] }>('/api/agents')
      .then((r) => {
        if (!live) return
        const names = r.data.map((a) => a.name)
        setAgents(names)
        setAgent((cur) => (names.includes(cur) ? cur : (names[0] ?? '')))
      })
      .catch((e) => live && setError(t('chat.loadFailed', { message: (e as Error).message })))
    void loadConversations()
    setWorkflows(null)
    return () => {
      live = false
    }
  }, [workspace, loadConversations, t])

  useEffect(() => {
    if (agent) localStorage.setItem(agentKey, agent)
  }, [agent])

  // Workflows are listed when asked for: a server without a run service
  // answers 503, which the chat with agents need not see.
  useEffect(() => {
    if (mode !== 'workflow' || workflows !== null) return
    let live = true
    api<{ data: { name: string }[] }>('/api/workflows')
      .then((r) => {
        if (!live) return
        const names = r.data.map((w) => w.name)
        setWorkflows(names)
        setWorkflow((cur) => (names.includes(cur) ? cur : (names[0] ?? '')))
      })
      .catch((e) => {
        if (!live) return
        setWorkflows([])
        setError(t('chat.loadFailed', { message: (e as Error).message }))
      })
    return () => {
      live = false
    }
  }, [mode, workflows, t])

  const startNew = () => {
    runner.current?.abortRun()
    runner.current = null
    folded.current.clear()
    setThreadId(newThreadId())
    setMessages([])
    setFiles([])
    setCites({})
    setPending(null)
    setError(null)
  }

  const open = async (c: Conversation) => {
    runner.current?.abortRun()
    runner.current = null
    setError(null)
    try {
      const full = await api<Conversation & { messages: StoredMessage[] }>(`/api/conversations/${encodeURIComponent(c.id)}?limit=500`)
      folded.current.clear()
      setMode('agent')
      setPending(null)
      if (c.agent) setAgent(c.agent)
      setThreadId(c.external_ref!.slice(threadPrefix.length))
      setMessages(storedToAGUI(full.messages))
    } catch (e) {
      setError(t('chat.loadFailed', { message: (e as Error).message }))
    }
  }

  const send = async (e?: FormEvent) => {
    e?.preventDefault()
    const text = draft.trim()
    const target = mode === 'agent' ? agent : workflow
    if (!text || !target || running || pending) return
    const agentId = mode + ':' + target
    let a = runner.current
    if (!a || a.threadId !== threadId || a.agentId !== agentId) {
      a = new HttpAgent({
        url: mode === 'agent' ? `/agui/${encodeURIComponent(target)}` : `/agui/workflows/${encodeURIComponent(target)}`,
        agentId,
        threadId,
        initialMessages: messages,
        headers: apiHeaders('POST'),
        fetch: (url, init) => apiFetch(url, init),
      })
      a.subscribe({ onMessagesChanged: ({ messages }) => setMessages([...messages]) })
      runner.current = a
    }
    for (const turn of turnsOf(a.messages)) if (turn.calls.length) folded.current.set(turn.id, { calls: turn.calls, results: turn.results })
    a.setMessages(wireThread(a.messages))
    const turnID = crypto.randomUUID()
    a.addMessage({ id: turnID, role: 'user', content: text })
    setMessages([...a.messages])
    setDraft('')
    await run(a, turnID, { forwardedProps: mode === 'agent' && files.length ? { fileIds: files.map((f) => f.fileId) } : {} })
    if (mode === 'agent') {
      const first = turnsOf(a.messages).find((x) => x.user)?.user ?? text
      void nameThread(threadPrefix + a.threadId, first)
    }
  }

  // run runs a once with params, keeping the citations of turnID and the
  // interrupt a workflow's human node ends the run with.
  const run = async (a: HttpAgent, turnID: string, params: Parameters<HttpAgent['runAgent']>[0]) => {
    setRunning(true)
    setError(null)
    setPending(null)
    try {
      await a.runAgent(params, {
          onRunFinishedEvent: (p) => {
            if (p.outcome !== 'interrupt') return
            const it = p.interrupts[0]
            if (it) setPending({ id: it.id, message: it.message, responseSchema: it.responseSchema as Record<string, unknown> | undefined })
          },
          onRunErrorEvent: ({ event }) => setError(t('chat.runFailed', { message: event.message })),
          onCustomEvent: ({ event }) => {
            if (event.name !== 'citations') return
            const list = (event.value as { citations?: Citation[] } | undefined)?.citations ?? []
            setCites((cur) => ({ ...cur, [turnID]: list }))
          },
        },
      )
    } catch (err) {
      if ((err as Error).name !== 'AbortError') setError(t('chat.runFailed', { message: (err as Error).message }))
    } finally {
      setRunning(false)
    }
  }

  // answer resumes the waiting human node (or cancels the run).
  const answer = (status: 'resolved' | 'cancelled', payload?: unknown) => {
    const a = runner.current
    if (!a || !pending) return
    const turnID = turnsOf(a.messages).filter((x) => x.user !== undefined).at(-1)?.id ?? crypto.randomUUID()
    void run(a, turnID, { resume: [{ interruptId: pending.id, status, ...(status === 'resolved' ? { payload } : {}) }] })
  }

  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault()
      void send()
    }
  }

  const turns = useMemo(
    () => turnsOf(messages).map((turn) => (turn.calls.length ? turn : { ...turn, ...folded.current.get(turn.id) })),
    [messages],
  )
  const activeRef = threadPrefix + threadId

  return (
    <div className="flex h-full">
      <aside aria-label={t('chat.conversations')} className="flex w-64 shrink-0 flex-col gap-2 border-r border-slate-200 p-3 dark:border-slate-800">
        <fieldset className="text-sm">
          <legend className="mb-1">{t('chat.talkTo')}</legend>
          <div className="flex gap-3">
            {(['agent', 'workflow'] as const).map((m) => (
              <label key={m} className="flex items-center gap-1">
                <input type="radio" name="chat-mode" value={m} checked={mode === m} onChange={() => { setMode(m); startNew() }} />
                {t(m === 'agent' ? 'chat.modeAgent' : 'chat.modeWorkflow')}
              </label>
            ))}
          </div>
        </fieldset>
        {mode === 'agent' ? (
          <NamePicker label={t('chat.agent')} names={agents} value={agent} onChange={(n) => { setAgent(n); startNew() }} none={t('chat.noAgents')} />
        ) : (
          <NamePicker label={t('chat.workflow')} names={workflows} value={workflow} onChange={(n) => { setWorkflow(n); startNew() }} none={t('chat.noWorkflows')} />
        )}
        <button type="button" className={control} onClick={startNew}>
          {t('chat.newConversation')}
        </button>
        <h2 className="mt-2 text-sm font-semibold">{t('chat.conversations')}</h2>
        {conversations.length === 0 ? (
          <p className="text-sm text-slate-600 dark:text-slate-400">{t('chat.noConversations')}</p>
        ) : (
          <ul className="min-h-0 flex-1 space-y-1 overflow-auto">
            {conversations.map((c) => (
              <li key={c.id}>
                <button
                  type="button"
                  aria-current={c.external_ref === activeRef ? 'true' : undefined}
                  className={
                    'w-full truncate rounded px-2 py-1 text-left text-sm ' +
                    (c.external_ref === activeRef ? 'bg-indigo-100 dark:bg-indigo-900' : 'hover:bg-slate-100 dark:hover:bg-slate-800')
                  }
                  onClick={() => void open(c)}
                >
                  {c.title || t('chat.untitled')}
                </button>
              </li>
            ))}
          </ul>
        )}
      </aside>
      <section aria-label={t('chat.messages')} className="flex min-w-0 flex-1 flex-col">
        <h1 className="sr-only">{t('chat.title')}</h1>
        <ol className="flex-1 space-y-4 overflow-auto p-4" aria-live="polite">
          {turns.length === 0 && <li className="text-slate-600 dark:text-slate-400">{t('chat.empty')}</li>}
          {turns.map((turn) => (
            <li key={turn.id} className="space-y-2">
              {turn.user !== undefined && (
                <article aria-label={t('chat.you')} className="ml-auto max-w-[75%] rounded-lg bg-indigo-600 px-3 py-2 text-white">
                  <p className="whitespace-pre-wrap">{turn.user}</p>
                </article>
              )}
              {(turn.answer || turn.calls.length > 0) && (
                <article aria-label={t('chat.assistant')} className="max-w-[75%] rounded-lg bg-slate-100 px-3 py-2 dark:bg-slate-800">
                  <p className="whitespace-pre-wrap">{turn.answer}</p>
                  <ToolCalls turn={turn} />
                  <Citations cites={cites[turn.id] ?? []} onOpen={setPassage} />
                </article>
              )}
            </li>
          ))}
          {running && (
            <li role="status" className="text-sm text-slate-600 dark:text-slate-400">
              {t('chat.thinking')}
            </li>
          )}
        </ol>
        {error && (
          <p role="alert" className="mx-4 mb-2 text-sm text-red-700 dark:text-red-300">
            {error}
          </p>
        )}
        {pending && <InterruptForm key={pending.id} pending={pending} busy={running} onAnswer={(p) => answer('resolved', p)} onCancel={() => answer('cancelled')} />}
        <PassageDialog cite={passage} onClose={() => setPassage(null)} />
        <div className="border-t border-slate-200 dark:border-slate-800">
        <AttachmentChips files={files} onRemove={(id) => setFiles((cur) => cur.filter((f) => f.fileId !== id))} />
        <form onSubmit={send} className="flex gap-2 p-3">
          {mode === 'agent' && <AttachButton
            disabled={running}
            onAttached={(f) => setFiles((cur) => (cur.some((x) => x.fileId === f.fileId) ? cur : [...cur, f]))}
            onError={setError}
          />}
          <label className="sr-only" htmlFor="chat-message">
            {t('chat.message')}
          </label>
          <textarea
            id="chat-message"
            rows={2}
            className={control + ' flex-1 resize-none'}
            value={draft}
            onChange={(e) => setDraft(e.target.value)}
            onKeyDown={onKey}
          />
          {running ? (
            <button type="button" className={control} onClick={() => runner.current?.abortRun()}>
              {t('chat.stop')}
            </button>
          ) : (
            <button type="submit" className="rounded bg-indigo-600 px-4 py-1 font-medium text-white disabled:opacity-60" disabled={!(mode === 'agent' ? agent : workflow) || !draft.trim() || !!pending}>
              {t('chat.send')}
            </button>
          )}
        </form>
        </div>
      </section>
    </div>
  )
}

/** NamePicker chooses the agent or the workflow to talk to; none is said when there is nothing to choose. */
function NamePicker({ label, names, value, onChange, none }: { label: string; names: string[] | null; value: string; onChange: (name: string) => void; none: string }) {
  return (
    <>
      <label className="text-sm">
        {label}
        <select className={control + ' mt-1 w-full'} value={value} onChange={(e) => onChange(e.target.value)} disabled={!names?.length}>
          {names?.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </label>
      {names?.length === 0 && <p className="text-sm text-slate-600 dark:text-slate-400">{none}</p>}
    </>
  )
}
