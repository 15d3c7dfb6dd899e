// The service tester's protocols and their prefilled requests: each
// template is a request to one of this server's own surfaces, written as a
// client of that protocol would send it, for the agent chosen.

/** Protocol is one tab of the tester. */
export type Protocol = 'openai' | 'mcp' | 'a2a' | 'agui' | 'http'

export const protocols: Protocol[] = ['openai', 'mcp', 'a2a', 'agui', 'http']

/** Draft is a request as the compose pane edits it. */
export interface Draft {
  method: string
  path: string
  /** headers are "Name: value" lines. */
  headers: string
  body: string
}

/** Template is one prefilled request of a protocol; its label is tester.template.<id>. */
export interface Template {
  id: string
  /** agent says whether the request names an agent (the agent picker shows). */
  agent: boolean
  build: (agent: string) => Draft
}

export const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']

const json = 'Content-Type: application/json'
const pretty = (v: unknown) => JSON.stringify(v, null, 2)
const prompt = 'Say hello in one short sentence.'
// A fresh id per request, as clients of these protocols make one.
const newID = () => (crypto.randomUUID ? crypto.randomUUID() : String(Date.now()))

/** mcpVersion is the MCP protocol revision the templates speak. */
export const mcpVersion = '2025-06-18'
const mcpHeaders = [json, 'Accept: application/json, text/event-stream', 'MCP-Protocol-Version: ' + mcpVersion].join('\n')
const mcp = (id: string, build: (agent: string) => unknown, agent = false): Template => ({
  id,
  agent,
  build: (a) => ({ method: 'POST', path: '/mcp', headers: mcpHeaders, body: pretty(build(a)) }),
})

const seg = (agent: string) => encodeURIComponent(agent || 'AGENT')

const a2aSend = (method: string) => (agent: string) => ({
  method: 'POST',
  path: `/a2a/${seg(agent)}`,
  headers: method === 'message/stream' ? json + '\nAccept: text/event-stream' : json,
  body: pretty({
    jsonrpc: '2.0',
    id: 1,
    method,
    params: { message: { kind: 'message', messageId: newID(), role: 'user', parts: [{ kind: 'text', text: prompt }] } },
  }),
})

/** templates are each protocol's prefilled requests, the first the default. */
export const templates: Record<Protocol, Template[]> = {
  openai: [
    {
      id: 'chat',
      agent: true,
      build: (agent) => ({ method: 'POST', path: '/v1/chat/completions', headers: json, body: pretty({ model: agent, messages: [{ role: 'user', content: prompt }], stream: false }) }),
    },
    {
      id: 'chatStream',
      agent: true,
      build: (agent) => ({
        method: 'POST',
        path: '/v1/chat/completions',
        headers: json + '\nAccept: text/event-stream',
        body: pretty({ model: agent, messages: [{ role: 'user', content: prompt }], stream: true }),
      }),
    },
    { id: 'models', agent: false, build: () => ({ method: 'GET', path: '/v1/models', headers: '', body: '' }) },
  ],
  mcp: [
    mcp('initialize', () => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: mcpVersion, capabilities: {}, clientInfo: { name: 'agentcraft-tester', version: '1' } },
    })),
    mcp('toolsList', () => ({ jsonrpc: '2.0', id: 2, method: 'tools/list' })),
    mcp('toolsCall', (agent) => ({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'agent_' + (agent || 'AGENT'), arguments: { message: prompt } } }), true),
  ],
  a2a: [
    { id: 'card', agent: true, build: (agent) => ({ method: 'GET', path: `/a2a/${seg(agent)}/.well-known/agent-card.json`, headers: '', body: '' }) },
    { id: 'index', agent: false, build: () => ({ method: 'GET', path: '/a2a', headers: '', body: '' }) },
    { id: 'send', agent: true, build: a2aSend('message/send') },
    { id: 'stream', agent: true, build: a2aSend('message/stream') },
  ],
  agui: [
    {
      id: 'run',
      agent: true,
      build: (agent) => ({
        method: 'POST',
        path: `/agui/${seg(agent)}`,
        headers: json + '\nAccept: text/event-stream',
        body: pretty({
          threadId: newID(),
          runId: newID(),
          state: {},
          messages: [{ id: newID(), role: 'user', content: prompt }],
          tools: [],
          context: [],
          forwardedProps: {},
        }),
      }),
    },
  ],
  http: [
    { id: 'agents', agent: false, build: () => ({ method: 'GET', path: '/api/agents', headers: '', body: '' }) },
    { id: 'health', agent: false, build: () => ({ method: 'GET', path: '/health', headers: '', body: '' }) },
  ],
}

/** parseHeaders reads "Name: value" lines; it throws naming the first bad line. */
export function parseHeaders(text: string): [string, string][] {
  const out: [string, string][] = []
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim()
    if (line === '') return
    const colon = line.indexOf(':')
    const name = colon > 0 ? line.slice(0, colon).trim() : ''
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new HeaderError(i + 1, line)
    out.push([name, line.slice(colon + 1).trim()])
  })
  return out
}

/** HeaderError is a headers line that is not "Name: value". */
export class HeaderError extends Error {
  line: number
  text: string
  constructor(line: number, text: string) {
    super(`line ${line}: ${text}`)
    this.line = line
    this.text = text
  }
}
