// The usage API (GET /api/usage?by=…) as the Usage page reads it.
import { api } from '../api'

/** UsageGroup is what the API totals per (by=): a UTC day, an agent, an actor or a provider/model. */
export type UsageGroup = 'day' | 'agent' | 'actor' | 'model'

/** UsageTotal is store.UsageTotal: one group's requests, tokens and cost. */
export interface UsageTotal {
  key: string
  requests: number
  errors: number
  input_tokens: number
  output_tokens: number
  cached_tokens: number
  latency_ms: number
  upstream_ms: number
  /** cost is a decimal amount of the answer's currency; it leaves out unpriced_requests, whose model has no price. */
  cost: number
  unpriced_requests: number
}

/** Usage is one answer of GET /api/usage?by=…: every group's total, with the currency of their costs. */
export interface Usage {
  currency: string
  data: UsageTotal[]
}

/** ranges are the periods the page offers, each as its length. */
export const ranges = { '24h': 24 * 3600_000, '7d': 7 * 24 * 3600_000, '30d': 30 * 24 * 3600_000 } as const
export type Range = keyof typeof ranges

/** usageBy totals the workspace's usage since since (RFC 3339) per group of by. */
export function usageBy(by: UsageGroup, since: string): Promise<Usage> {
  const q = new URLSearchParams({ by, since })
  return api<Usage>('/api/usage?' + q)
}

export const emptyTotal = (key: string): UsageTotal => ({
  key,
  requests: 0,
  errors: 0,
  input_tokens: 0,
  output_tokens: 0,
  cached_tokens: 0,
  latency_ms: 0,
  upstream_ms: 0,
  cost: 0,
  unpriced_requests: 0,
})

/**
 * everyDay gives one total per UTC day from since's day to now's, the
 * server's totals where it has them and zeros for days without requests,
 * so the chart's bars stand for equal lengths of time.
 */
export function everyDay(totals: UsageTotal[], since: Date, now: Date): UsageTotal[] {
  const have = new Map(totals.map((t) => [t.key, t]))
  const out: UsageTotal[] = []
  const d = new Date(Date.UTC(since.getUTCFullYear(), since.getUTCMonth(), since.getUTCDate()))
  while (d.getTime() <= now.getTime()) {
    const key = d.toISOString().slice(0, 10)
    out.push(have.get(key) ?? emptyTotal(key))
    d.setUTCDate(d.getUTCDate() + 1)
  }
  // A day the server counted that the range missed (a clock skew) still shows.
  for (const t of totals) if (!out.some((o) => o.key === t.key)) out.push(t)
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
}

// The server's costs are exact (integer nano-units, sent as decimals of
// at most nine places): adding them as floats would show 0.30000000000000004
// for 0.1 + 0.2, so sums are made in nano-units and turned back at the end.
const nanosPerUnit = 1e9
const nanos = (amount: number) => Math.round(amount * nanosPerUnit)

/** sum adds totals up, costs exactly. */
export function sum(totals: UsageTotal[]): UsageTotal {
  const s = emptyTotal('')
  let cost = 0
  for (const t of totals) {
    cost += nanos(t.cost)
    s.unpriced_requests += t.unpriced_requests
    s.requests += t.requests
    s.errors += t.errors
    s.input_tokens += t.input_tokens
    s.output_tokens += t.output_tokens
    s.cached_tokens += t.cached_tokens
    s.latency_ms += t.latency_ms
    s.upstream_ms += t.upstream_ms
  }
  s.cost = cost / nanosPerUnit
  return s
}

export const tokens = (t: UsageTotal) => t.input_tokens + t.output_tokens
