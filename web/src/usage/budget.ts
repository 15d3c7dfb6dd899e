// The budget API (GET/PUT/DELETE /api/budget, POST /api/budget/reset) as
// the Usage page reads and changes it.
import { api } from '../api'

/** Limits are a month's budgets (or spending): tokens, and cost in the status's currency; 0 as a limit is none. */
export interface Limits {
  tokens: number
  cost: number
}

/** BudgetStatus is budget.Status: the limits in force, whose they are and what the month has used. */
export interface BudgetStatus {
  limits: Limits
  /** custom is true for the workspace's own limits, false when the server's default applies. */
  custom: boolean
  default: Limits
  /** month is "2026-12"; since is when its count began (the month's start or the last reset). */
  month: string
  since: string
  resets_at: string
  used: Limits
  /** in_flight is the part of used spent by runs still under way. */
  in_flight: Limits
  currency: string
}

export const getBudget = () => api<BudgetStatus>('/api/budget')

/**
 * setBudget stores the workspace's own limits. cost goes as the decimal
 * text typed ("12.50"), which the server reads exactly, rather than as
 * a float that JSON could write as 1e-7.
 */
export const setBudget = (l: { tokens: number; cost: string }) => api<BudgetStatus>('/api/budget', 'PUT', l)

/** useServerDefault drops the workspace's own limits, so the server's default applies. */
export const restoreDefault = () => api<BudgetStatus>('/api/budget', 'DELETE')

/** resetBudget counts the month afresh from now. */
export const resetBudget = () => api<BudgetStatus>('/api/budget/reset', 'POST')

/** percentOf is used as a percentage of limit (0 for no limit). */
export const percentOf = (used: number, limit: number) => (limit > 0 ? (used / limit) * 100 : 0)

/** warnAt is the share of a budget at which the server warns (audited budget.warning), as a percentage. */
export const warnAt = 80
