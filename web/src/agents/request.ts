import { apiFetch, APIError, errorOf } from '../api'

/** FieldError is an APIError that also says which field of the body it is about (the error's param). */
export class FieldError extends APIError {
  param: string
  constructor(e: APIError, param: string) {
    super(e.status, e.message, e.code, e.retryAfter)
    this.param = param
  }
}

/**
 * send is api() for forms: a failed answer throws a FieldError whose
 * param is the server's error.param ("" when it names none), so the form
 * can show the message beside that field.
 */
export async function send<T>(path: string, method: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method }
  if (body !== undefined) {
    init.body = JSON.stringify(body)
    init.headers = { 'Content-Type': 'application/json' }
  }
  const resp = await apiFetch(path, init)
  if (!resp.ok) {
    const param = await resp
      .clone()
      .json()
      .then((b) => (typeof b?.error?.param === 'string' ? (b.error.param as string) : ''))
      .catch(() => '')
    throw new FieldError(await errorOf(resp), param)
  }
  if (resp.status === 204) return undefined as T
  return (await resp.json()) as T
}

/** fieldOf is the top-level field an error's param names: "guard" for "guard.rules[0].name". */
export function fieldOf(err: unknown): string {
  if (!(err instanceof FieldError)) return ''
  return err.param.split(/[.[]/)[0]
}
