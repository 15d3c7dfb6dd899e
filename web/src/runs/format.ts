// Formatting of run times and token counts in the user's language.

/** durationMs is how long a run took (or has taken so far, when live). */
export function runDurationMs(created: string, finished?: string, now = Date.now()): number {
  const end = finished ? Date.parse(finished) : now
  return Math.max(0, end - Date.parse(created))
}

/** formatDuration writes ms as "850 ms", "4.2 s" or "3 min 5 s". */
export function formatDuration(ms: number, lang: string): string {
  const n = (v: number, digits = 0) => new Intl.NumberFormat(lang, { maximumFractionDigits: digits }).format(v)
  if (ms < 1000) return `${n(ms)} ms`
  if (ms < 60_000) return `${n(ms / 1000, 1)} s`
  const m = Math.floor(ms / 60_000)
  return `${n(m)} min ${n(Math.round((ms % 60_000) / 1000))} s`
}

export function formatTime(iso: string, lang: string): string {
  return new Intl.DateTimeFormat(lang, { dateStyle: 'medium', timeStyle: 'medium' }).format(new Date(iso))
}

export function formatNumber(v: number, lang: string): string {
  return new Intl.NumberFormat(lang).format(v)
}

/** pretty shows a JSON value: strings as they are, anything else indented. */
export function pretty(v: unknown): string {
  if (v === undefined) return ''
  if (typeof v === 'string') return v
  return JSON.stringify(v, null, 2)
}
