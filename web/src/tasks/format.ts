// Times of tasks and approvals in the user's language.

/** relativeTime writes iso relative to now: "in 5 minutes", "2 hours ago". */
export function relativeTime(iso: string, lang: string, now = Date.now()): string {
  const s = Math.round((Date.parse(iso) - now) / 1000)
  const f = new Intl.RelativeTimeFormat(lang, { numeric: 'auto' })
  const abs = Math.abs(s)
  if (abs < 60) return f.format(s, 'second')
  if (abs < 3600) return f.format(Math.round(s / 60), 'minute')
  if (abs < 86400) return f.format(Math.round(s / 3600), 'hour')
  return f.format(Math.round(s / 86400), 'day')
}
