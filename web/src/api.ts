// The one way the studio calls the server: same-origin fetch with the
// session cookie, the chosen workspace as X-Workspace on every call and
// the CSRF token as X-CSRF-Token on every call that writes. A 401 from any
// call sends the user to sign-in (through onUnauthorized).

const csrfKey = 'agentcraft.csrf'
const workspaceKey = 'agentcraft.workspace'

let csrfToken: string | null = sessionStorage.getItem(csrfKey)
let workspace: string | null = localStorage.getItem(workspaceKey)
let onUnauthorized: () => void = () => {}

/** setCSRFToken keeps the token of the session for this tab only. */
export function setCSRFToken(token: string | null) {
  csrfToken = token
  if (token) sessionStorage.setItem(csrfKey, token)
  else sessionStorage.removeItem(csrfKey)
}

/** setWorkspace chooses the workspace every later call acts in. */
export function setWorkspace(id: string | null) {
  workspace = id
  if (id) localStorage.setItem(workspaceKey, id)
  else localStorage.removeItem(workspaceKey)
}

export function currentWorkspace(): string | null {
  return workspace
}

/** setUnauthorizedHandler names what a 401 does (the app goes to sign-in). */
export function setUnauthorizedHandler(f: () => void) {
  onUnauthorized = f
}

/** APIError is the server's {"error":{"message","code","param"}} answer. */
export class APIError extends Error {
  status: number
  code: string
  retryAfter: number | null
  /** param is the field of the request body the error is about ("guard.rules[0].name"), "" when it names none. */
  param: string
  constructor(status: number, message: string, code: string, retryAfter: number | null, param = '') {
    super(message)
    this.status = status
    this.code = code
    this.retryAfter = retryAfter
    this.param = param
  }
}

/** fieldOf is the top-level field an error's param names: "guard" for "guard.rules[0].name", "" for none. */
export function fieldOf(err: unknown): string {
  if (!(err instanceof APIError)) return ''
  return err.param.split(/[.[]/)[0]
}

/** fieldError is err's message when it is about the body's field name (fieldOf), so a form shows it beside that field. */
export function fieldError(err: unknown, name: string): string | undefined {
  return err instanceof APIError && fieldOf(err) === name ? err.message : undefined
}

const writes = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** headers are the ones every call carries: workspace and, for writes, CSRF. */
export function apiHeaders(method: string): Record<string, string> {
  const h: Record<string, string> = {}
  if (workspace) h['X-Workspace'] = workspace
  if (csrfToken && writes.has(method.toUpperCase())) h['X-CSRF-Token'] = csrfToken
  return h
}

/** apiFetch is fetch with the studio's headers and 401 handling. */
export async function apiFetch(path: string, init: RequestInit = {}): Promise<Response> {
  const method = (init.method ?? 'GET').toUpperCase()
  const headers = new Headers(init.headers)
  for (const [k, v] of Object.entries(apiHeaders(method))) headers.set(k, v)
  const resp = await fetch(path, { ...init, method, headers, credentials: 'same-origin' })
  if (resp.status === 401 && path !== '/api/auth/login') onUnauthorized()
  // A tab that lost its CSRF token (a new tab shares the cookie, not
  // sessionStorage) cannot write: signing in again gives it a token.
  if (resp.status === 403 && writes.has(method)) {
    const code = await resp
      .clone()
      .json()
      .then((b) => b?.error?.code as string | undefined)
      .catch(() => undefined)
    if (code === 'csrf_token_invalid') onUnauthorized()
  }
  return resp
}

/** errorOf reads a failed response's {"error":{"message","code","param"}} as an APIError. */
export async function errorOf(resp: Response): Promise<APIError> {
  let message = resp.statusText
  let code = ''
  let param = ''
  try {
    const body = await resp.json()
    message = body?.error?.message ?? message
    code = body?.error?.code ?? ''
    if (typeof body?.error?.param === 'string') param = body.error.param
  } catch {
    // not JSON: keep the status text
  }
  const ra = resp.headers.get('Retry-After')
  const retryAfter = ra && /^\d+$/.test(ra) ? Number(ra) : null
  return new APIError(resp.status, message, code, retryAfter, param)
}

/** api calls path and decodes its JSON answer, throwing APIError otherwise. */
export async function api<T>(path: string, method = 'GET', body?: unknown): Promise<T> {
  const init: RequestInit = { method }
  if (body !== undefined) {
    init.body = JSON.stringify(body)
    init.headers = { 'Content-Type': 'application/json' }
  }
  return apiRequest<T>(path, init)
}

// Answers asked for before the page that reads them has loaded its code
// (Page.prefetch), by path, with when they were asked.
const early = new Map<string, { at: number; answer: Promise<unknown> }>()

/**
 * prefetch starts GET path now, so that a page whose code is still loading
 * finds the answer on its way (fetchOnce): on a deep link the request no
 * longer waits for the page's chunks to download and run.
 */
export function prefetch(path: string): void {
  const answer = api(path)
  answer.catch(() => {}) // the page that takes it sees the error
  early.set(path, { at: Date.now(), answer })
}

/** fetchOnce is api(path), taking the answer prefetch started for it when there is a recent one (each is used once). */
export function fetchOnce<T>(path: string): Promise<T> {
  const e = early.get(path)
  early.delete(path)
  if (e && Date.now() - e.at < 10_000) return e.answer as Promise<T>
  return api<T>(path)
}

/** apiRequest is api for a body that is not a JSON value (FormData, a file's text), init as fetch's. */
export async function apiRequest<T>(path: string, init: RequestInit): Promise<T> {
  const resp = await apiFetch(path, init)
  if (!resp.ok) throw await errorOf(resp)
  if (resp.status === 204) return undefined as T
  return (await resp.json()) as T
}

/**
 * apiStream calls path and hands each server-sent event of its answer to
 * onEvent (its event name, "message" when unnamed, and its data lines
 * joined) until the server ends the stream or init.signal aborts; an
 * answer that is not 2xx throws its APIError. Comments (keep-alives) and
 * events without data are skipped. fetch rather than EventSource, so the
 * call carries X-Workspace and works for POST.
 */
export async function apiStream(path: string, init: RequestInit, onEvent: (event: string, data: string) => void): Promise<void> {
  const resp = await apiFetch(path, init)
  if (!resp.ok) throw await errorOf(resp)
  if (!resp.body) return
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader()
  let buf = ''
  let event = 'message'
  let data: string[] = []
  const dispatch = () => {
    if (data.length > 0) onEvent(event, data.join('\n'))
    event = 'message'
    data = []
  }
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      buf += value
      let nl: number
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).replace(/\r$/, '')
        buf = buf.slice(nl + 1)
        if (line === '') dispatch()
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''))
        else if (line.startsWith('event:')) event = line.slice(6).trim()
      }
    }
    dispatch()
  } catch (e) {
    // onEvent threw (or the read failed): stop reading the stream.
    void reader.cancel().catch(() => {})
    throw e
  }
}

export interface User {
  id: string
  email: string
  display_name?: string
}

/** Permission is one of identity's permissions (identity/permission.go). */
export type Permission =
  | 'read' | 'chat' | 'run' | 'edit' | 'approve_low'
  | 'manage_tools' | 'manage_credentials' | 'manage_members' | 'manage_keys' | 'approve_medium' | 'admin_workspace'
  | 'approve_high' | 'manage_owners' | 'delete_workspace'

export interface Workspace {
  id: string
  name: string
  role: string
  /** permissions are what role allows, as the server says (GET /api/me). */
  permissions: Permission[]
}

/** allows reports whether the signed-in user's role in ws has p. */
export function allows(ws: Workspace | undefined, p: Permission): boolean {
  return !!ws?.permissions?.includes(p)
}

export interface Me {
  user: User
  workspaces: Workspace[]
}

export interface Conversation {
  id: string
  title: string
  agent?: string
  external_ref?: string
  updated_at: string
}

export interface StoredMessage {
  seq: number
  role: 'system' | 'user' | 'assistant' | 'tool'
  content: string
  tool_calls?: { id: string; name?: string; arguments?: string; function?: { name: string; arguments: string } }[]
  tool_call_id?: string
}
