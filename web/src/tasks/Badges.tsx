import { useTranslation } from 'react-i18next'
import type { ApprovalStatus, Capability, StepStatus, TaskStatus } from './types'

const tone = {
  grey: 'bg-slate-100 text-slate-800 dark:bg-slate-800 dark:text-slate-200',
  blue: 'bg-sky-100 text-sky-900 dark:bg-sky-900 dark:text-sky-100',
  amber: 'bg-amber-100 text-amber-900 dark:bg-amber-900 dark:text-amber-100',
  green: 'bg-emerald-100 text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100',
  red: 'bg-red-100 text-red-900 dark:bg-red-900 dark:text-red-100',
}

const badge = 'whitespace-nowrap rounded px-2 py-0.5 text-xs font-medium '

const taskTone: Record<TaskStatus, string> = {
  open: tone.grey,
  planning: tone.blue,
  awaiting_approval: tone.amber,
  running: tone.blue,
  done: tone.green,
  failed: tone.red,
  cancelled: tone.grey,
  expired: tone.grey,
}

/** TaskStatusBadge is a task's status as text on a colour (the text is the signal; colour helps). */
export function TaskStatusBadge({ status }: { status: TaskStatus }) {
  const { t } = useTranslation()
  return <span className={badge + (taskTone[status] ?? tone.grey)}>{t('tasks.status.' + status, { defaultValue: status })}</span>
}

const capabilityTone: Record<Capability, string> = { low: tone.green, medium: tone.amber, high: tone.red }

/** CapabilityBadge says how much harm an action can do: low, medium or high. */
export function CapabilityBadge({ capability }: { capability: Capability }) {
  const { t } = useTranslation()
  return <span className={badge + (capabilityTone[capability] ?? tone.red)}>{t('tasks.capability.' + capability, { defaultValue: capability })}</span>
}

const approvalTone: Record<ApprovalStatus, string> = { pending: tone.amber, approved: tone.green, rejected: tone.red, expired: tone.grey }

export function ApprovalStatusBadge({ status }: { status: ApprovalStatus }) {
  const { t } = useTranslation()
  return <span className={badge + (approvalTone[status] ?? tone.grey)}>{t('tasks.approvalStatus.' + status, { defaultValue: status })}</span>
}

const stepTone: Record<StepStatus, string> = { pending: tone.blue, ok: tone.green, error: tone.red, skipped: tone.grey, compensated: tone.amber }

export function StepStatusBadge({ status }: { status: StepStatus }) {
  const { t } = useTranslation()
  return <span className={badge + (stepTone[status] ?? tone.grey)}>{t('tasks.stepStatus.' + status, { defaultValue: status })}</span>
}

/** SourceName is the channel a task came from, in words. */
export function SourceName({ source }: { source: string }) {
  const { t } = useTranslation()
  return <>{t('tasks.source.' + source, { defaultValue: source })}</>
}
