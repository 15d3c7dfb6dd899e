// The studio's small component kit: Tailwind classes in one place so every
// page looks alike and every control has an accessible name. Pages build
// on these instead of repeating class strings.
import {
  useCallback,
  useEffect,
  useId,
  useState,
  type ButtonHTMLAttributes,
  type InputHTMLAttributes,
  type ReactNode,
  type SelectHTMLAttributes,
  type TextareaHTMLAttributes,
} from 'react'
import { useTranslation } from 'react-i18next'
import { APIError } from '../api'

export const controlClass =
  'rounded border border-slate-500 bg-white px-2 py-1 text-sm text-slate-900 disabled:opacity-50 dark:border-slate-500 dark:bg-slate-900 dark:text-slate-100'

type Variant = 'primary' | 'secondary' | 'danger'

const variants: Record<Variant, string> = {
  primary: 'bg-indigo-700 text-white hover:bg-indigo-800 border-indigo-700 dark:bg-indigo-400 dark:border-indigo-400 dark:text-slate-950 dark:hover:bg-indigo-300',
  secondary:
    'bg-white text-slate-900 hover:bg-slate-100 border-slate-300 dark:bg-slate-900 dark:text-slate-100 dark:border-slate-600 dark:hover:bg-slate-800',
  danger: 'bg-red-700 text-white hover:bg-red-800 border-red-700 dark:bg-red-400 dark:text-slate-950 dark:border-red-400',
}

/** Button is a button; type defaults to "button" so forms submit only on purpose. */
export function Button({ variant = 'secondary', className = '', type = 'button', ...rest }: ButtonHTMLAttributes<HTMLButtonElement> & { variant?: Variant }) {
  return (
    <button
      type={type}
      className={`whitespace-nowrap rounded border px-3 py-1 text-sm font-medium disabled:opacity-50 ${variants[variant]} ${className}`}
      {...rest}
    />
  )
}

/** Field labels its one control and shows help and an error beneath it. */
export function Field({ label, help, error, children }: { label: ReactNode; help?: ReactNode; error?: ReactNode; children: (id: string, describedBy?: string) => ReactNode }) {
  const id = useId()
  const helpID = help || error ? id + '-help' : undefined
  return (
    <div className="mb-3 flex flex-col gap-1">
      <label htmlFor={id} className="text-sm font-medium">
        {label}
      </label>
      {children(id, helpID)}
      {(help || error) && (
        <p id={helpID} className={'text-xs ' + (error ? 'text-red-700 dark:text-red-300' : 'text-slate-600 dark:text-slate-400')}>
          {error || help}
        </p>
      )}
    </div>
  )
}

export function TextInput({ className = '', ...rest }: InputHTMLAttributes<HTMLInputElement>) {
  return <input className={`${controlClass} ${className}`} {...rest} />
}

export function TextArea({ className = '', ...rest }: TextareaHTMLAttributes<HTMLTextAreaElement>) {
  return <textarea className={`${controlClass} ${className}`} {...rest} />
}

export function Select({ className = '', ...rest }: SelectHTMLAttributes<HTMLSelectElement>) {
  return <select className={`${controlClass} ${className}`} {...rest} />
}

/** PageHeader is a page's one h1 with its actions on the right. */
export function PageHeader({ title, children }: { title: ReactNode; children?: ReactNode }) {
  return (
    <div className="mb-4 flex flex-wrap items-center gap-2">
      <h1 className="mr-auto text-xl font-semibold">{title}</h1>
      {children}
    </div>
  )
}

/** Section is a titled region (role region, named by its heading). */
export function Section({ title, children, className = '' }: { title: ReactNode; children: ReactNode; className?: string }) {
  const id = useId()
  return (
    <section aria-labelledby={id} className={`mb-4 rounded border border-slate-200 p-4 dark:border-slate-700 ${className}`}>
      <h2 id={id} className="mb-3 text-base font-semibold">
        {title}
      </h2>
      {children}
    </section>
  )
}

/**
 * Notice announces the change a page just made: a status region (read
 * out by screen readers, hidden) and, while there is one, the text shown.
 */
export function Notice({ children }: { children: string }) {
  return (
    <>
      <p role="status" className="sr-only">
        {children}
      </p>
      {children && <p className="mb-3 rounded border border-green-300 bg-green-50 p-2 text-sm text-green-900 dark:border-green-700 dark:bg-green-950 dark:text-green-100">{children}</p>}
    </>
  )
}

export function EmptyState({ children }: { children: ReactNode }) {
  return <p className="rounded border border-dashed border-slate-300 p-6 text-center text-slate-600 dark:border-slate-600 dark:text-slate-400">{children}</p>
}

/** ErrorAlert shows an error (an APIError's server message) as an alert. */
export function ErrorAlert({ error }: { error: unknown }) {
  const { t } = useTranslation()
  if (!error) return null
  const message = error instanceof Error ? error.message : String(error)
  return (
    <p role="alert" className="mb-3 rounded border border-red-300 bg-red-50 p-2 text-sm text-red-800 dark:border-red-700 dark:bg-red-950 dark:text-red-200">
      {t('common.error', { message })}
    </p>
  )
}

/** Table is a data table with a caption (its accessible name). */
export function Table({ caption, head, children }: { caption: string; head: ReactNode[]; children: ReactNode }) {
  return (
    <table className="w-full border-collapse text-sm">
      <caption className="sr-only">{caption}</caption>
      <thead>
        <tr className="border-b border-slate-300 text-left dark:border-slate-600">
          {head.map((h, i) => (
            <th key={i} scope="col" className="px-2 py-1 font-medium">
              {h}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  )
}

export const cellClass = 'border-b border-slate-100 px-2 py-1 align-top dark:border-slate-800'

/** Loaded is the state of one GET: data, error, a reload, and set for a write whose answer is the new data. */
export interface Loaded<T> {
  data: T | undefined
  error: APIError | Error | undefined
  loading: boolean
  reload: () => void
  set: (data: T) => void
}

/** useLoad runs load now and whenever deps change or reload is called. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T>()
  const [error, setError] = useState<Error>()
  const [loading, setLoading] = useState(true)
  const [tick, setTick] = useState(0)
  const reload = useCallback(() => setTick((n) => n + 1), [])
  useEffect(() => {
    let live = true
    setLoading(true)
    load()
      .then((d) => {
        if (!live) return
        setData(d)
        setError(undefined)
      })
      .catch((e: Error) => live && setError(e))
      .finally(() => live && setLoading(false))
    return () => {
      live = false
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick])
  return { data, error, loading, reload, set: setData }
}
