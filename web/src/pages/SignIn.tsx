import { useEffect, useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { api, APIError } from '../api'
import { useSession } from '../session'

const input = 'mt-1 w-full rounded border border-slate-500 bg-white px-3 py-2 text-slate-900 dark:border-slate-500 dark:bg-slate-900 dark:text-slate-100'

/** SignIn is email and password, and a button per OpenID provider. */
export default function SignIn() {
  const { t } = useTranslation()
  const { signIn } = useSession()
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<{ message: string; retryAfter: number | null } | null>(null)
  const [providers, setProviders] = useState<string[]>([])

  useEffect(() => {
    api<{ providers: string[] }>('/api/auth/providers')
      .then((r) => setProviders(r.providers ?? []))
      .catch(() => setProviders([]))
  }, [])

  const submit = async (e: FormEvent) => {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      await signIn(email, password)
    } catch (err) {
      if (err instanceof APIError) setError({ message: err.message, retryAfter: err.retryAfter })
      else setError({ message: t('signin.failed'), retryAfter: null })
    } finally {
      setBusy(false)
    }
  }

  return (
    <main className="flex h-full items-center justify-center p-4">
      <div className="w-full max-w-sm rounded-lg border border-slate-200 p-6 shadow-sm dark:border-slate-800">
        <h1 className="mb-4 text-xl font-semibold">{t('signin.title')}</h1>
        <form onSubmit={submit} className="space-y-3">
          <label className="block text-sm">
            {t('signin.email')}
            <input className={input} type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
          </label>
          <label className="block text-sm">
            {t('signin.password')}
            <input className={input} type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
          </label>
          {error && (
            <p role="alert" className="text-sm text-red-700 dark:text-red-300">
              {error.message}
              {error.retryAfter !== null && <> {t('signin.retryAfter', { seconds: error.retryAfter })}</>}
            </p>
          )}
          <button type="submit" disabled={busy} className="w-full rounded bg-indigo-700 px-3 py-2 font-medium text-white hover:bg-indigo-800 disabled:opacity-60 dark:bg-indigo-400 dark:text-slate-950 dark:hover:bg-indigo-300">
            {busy ? t('signin.submitting') : t('signin.submit')}
          </button>
        </form>
        {providers.length > 0 && (
          <div className="mt-4 space-y-2">
            <p className="text-center text-sm text-slate-600 dark:text-slate-400">{t('signin.or')}</p>
            {providers.map((p) => (
              <a key={p} href={`/api/auth/oidc/${encodeURIComponent(p)}`} className="block rounded border border-slate-500 px-3 py-2 text-center">
                {t('signin.withProvider', { provider: p })}
              </a>
            ))}
          </div>
        )}
      </div>
    </main>
  )
}
