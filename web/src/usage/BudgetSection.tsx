import { useEffect, useId, useState, type FormEvent, type ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import { allows, fieldError, fieldOf } from '../api'
import { ConfirmDialog } from '../components/ConfirmDialog'
import { Button, ErrorAlert, Field, Section, TextInput, useLoad } from '../components/ui'
import { useWorkspace } from '../session'
import { getBudget, percentOf, resetBudget, restoreDefault, setBudget, warnAt, type BudgetStatus } from './budget'
import { moneyFormat } from './money'

/**
 * BudgetSection is the workspace's monthly budget on the Usage page: a
 * meter per budget (tokens, cost) of what the month has used against its
 * limit, when the count resets and whose limits they are. Admins edit the
 * limits, go back to the server's default and reset the month's count
 * (confirmed first); other roles read the figures. reload changes when the
 * page's Refresh is pressed.
 */
export function BudgetSection({ reload }: { reload: number }) {
  const { t, i18n } = useTranslation()
  const ws = useWorkspace()
  const admin = allows(ws, 'admin_workspace')
  const budget = useLoad(getBudget, [ws?.id, reload])
  const b = budget.data

  const num = new Intl.NumberFormat(i18n.language)
  const money = moneyFormat(i18n.language, b?.currency || 'USD')
  const when = new Intl.DateTimeFormat(i18n.language, { year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZoneName: 'short' })
  const date = (s: string) => when.format(new Date(s))

  return (
    <Section title={t('usage.budget.title')}>
      <ErrorAlert error={budget.error} />
      {b && (
        <div aria-busy={budget.loading}>
          <dl className="mb-3 grid gap-x-4 gap-y-1 text-sm sm:grid-cols-[auto_1fr]">
            <dt className="text-slate-600 dark:text-slate-400">{t('usage.budget.whose')}</dt>
            <dd>{b.custom ? t('usage.budget.custom') : t('usage.budget.serverDefault')}</dd>
            <dt className="text-slate-600 dark:text-slate-400">{t('usage.budget.since')}</dt>
            <dd>
              <time dateTime={b.since}>{date(b.since)}</time>
            </dd>
            <dt className="text-slate-600 dark:text-slate-400">{t('usage.budget.resets')}</dt>
            <dd>
              <time dateTime={b.resets_at}>{date(b.resets_at)}</time>
            </dd>
          </dl>
          <div className="grid gap-4 md:grid-cols-2">
            <BudgetMeter
              label={t('usage.budget.tokenBudget')}
              noLimit={t('usage.budget.noTokenLimit')}
              used={b.used.tokens}
              limit={b.limits.tokens}
              usedText={
                b.limits.tokens > 0
                  ? t('usage.budget.tokensUsedOf', { used: num.format(b.used.tokens), limit: num.format(b.limits.tokens) })
                  : t('usage.budget.tokensUsed', { used: num.format(b.used.tokens) })
              }
              resetsAt={date(b.resets_at)}
            />
            <BudgetMeter
              label={t('usage.budget.costBudget')}
              noLimit={t('usage.budget.noCostLimit')}
              used={b.used.cost}
              limit={b.limits.cost}
              usedText={
                b.limits.cost > 0
                  ? t('usage.budget.costUsedOf', { used: money(b.used.cost), limit: money(b.limits.cost) })
                  : t('usage.budget.costUsed', { used: money(b.used.cost) })
              }
              resetsAt={date(b.resets_at)}
            />
          </div>
          {(b.in_flight.tokens > 0 || b.in_flight.cost > 0) && (
            <p className="mt-2 text-sm text-slate-600 dark:text-slate-400">
              {t('usage.budget.inFlight', { tokens: num.format(b.in_flight.tokens), cost: money(b.in_flight.cost) })}
            </p>
          )}
          {admin ? (
            <BudgetControls status={b} onChange={budget.set} />
          ) : (
            <p className="mt-3 text-sm text-slate-600 dark:text-slate-400">{t('usage.budget.adminOnly')}</p>
          )}
        </div>
      )}
    </Section>
  )
}

/**
 * BudgetMeter is one budget: a meter of used against limit with its
 * percentage, amber from the server's warning share (80 %) and red when
 * spent, saying what a spent budget does; or, without a limit, says so
 * and what was used.
 */
function BudgetMeter({ label, noLimit, used, limit, usedText, resetsAt }: { label: string; noLimit: string; used: number; limit: number; usedText: string; resetsAt: string }) {
  const { t, i18n } = useTranslation()
  const labelID = useId()
  const pct = percentOf(used, limit)
  // Shown rounded down, since 99.6 % is not yet the 100 % that refuses
  // runs; a little above nothing is "under 1 %", not 0 %.
  const pf = new Intl.NumberFormat(i18n.language, { style: 'percent', maximumFractionDigits: 0 })
  const percent = pct > 0 && pct < 1 ? t('usage.budget.underOnePercent', { percent: pf.format(0.01) }) : pf.format(Math.floor(pct) / 100)
  const spent = limit > 0 && pct >= 100
  const warn = limit > 0 && !spent && pct >= warnAt
  const box = spent
    ? 'border-red-400 bg-red-50 dark:border-red-700 dark:bg-red-950'
    : warn
      ? 'border-amber-400 bg-amber-50 dark:border-amber-600 dark:bg-amber-950'
      : 'border-slate-200 dark:border-slate-700'
  const fill = spent ? 'fill-red-600 dark:fill-red-400' : warn ? 'fill-amber-500 dark:fill-amber-300' : 'fill-indigo-600 dark:fill-indigo-400'
  let note: ReactNode = null
  if (spent) note = <p className="mt-2 text-sm font-medium text-red-800 dark:text-red-200">{t('usage.budget.spent', { date: resetsAt })}</p>
  else if (warn) note = <p className="mt-2 text-sm font-medium text-amber-900 dark:text-amber-200">{t('usage.budget.nearly', { warn: warnAt })}</p>
  return (
    <div className={`rounded border p-3 ${box}`}>
      <div className="mb-1 flex flex-wrap items-baseline justify-between gap-2">
        <span id={labelID} className="text-sm font-semibold">
          {label}
        </span>
        {limit > 0 && <span className="text-lg font-semibold tabular-nums">{percent}</span>}
      </div>
      {limit > 0 ? (
        <>
          <div
            role="meter"
            aria-labelledby={labelID}
            aria-valuemin={0}
            aria-valuemax={limit}
            // A meter's value stays within its range; the text says by how much it is over.
            aria-valuenow={Math.min(used, limit)}
            aria-valuetext={t('usage.budget.meterText', { used: usedText, percent })}
            className="h-3 w-full overflow-hidden rounded bg-slate-200 dark:bg-slate-700"
          >
            <svg aria-hidden="true" viewBox="0 0 100 1" preserveAspectRatio="none" className="block h-full w-full">
              <rect x={0} y={0} height={1} width={Math.min(100, pct)} className={fill} />
            </svg>
          </div>
          <p className="mt-1 text-sm tabular-nums">{usedText}</p>
        </>
      ) : (
        <>
          <p className="text-sm">{noLimit}</p>
          <p className="mt-1 text-sm text-slate-600 tabular-nums dark:text-slate-400">{usedText}</p>
        </>
      )}
      {note}
    </div>
  )
}

// decimal writes a cost limit as the plain decimal the form edits (never
// 1e-7, which the server would refuse), "" for no limit.
const decimal = (v: number) => (v > 0 ? v.toFixed(9).replace(/\.?0+$/, '') : '')

/**
 * BudgetControls are an admin's: the workspace's own limits (PUT
 * /api/budget, a refusal shown beside the field it names), back to the
 * server's default (DELETE) and a reset of the month's count (POST
 * /api/budget/reset, after the confirm dialog).
 */
function BudgetControls({ status, onChange }: { status: BudgetStatus; onChange: (s: BudgetStatus) => void }) {
  const { t } = useTranslation()
  const [tokens, setTokens] = useState('')
  const [cost, setCost] = useState('')
  const [error, setError] = useState<unknown>()
  const [done, setDone] = useState('')
  const [busy, setBusy] = useState(false)
  const [confirming, setConfirming] = useState(false)
  // The form shows the limits in force, afresh after every change.
  useEffect(() => {
    setTokens(status.limits.tokens > 0 ? String(status.limits.tokens) : '')
    setCost(decimal(status.limits.cost))
  }, [status])

  const act = async (call: () => Promise<BudgetStatus>, message: string) => {
    setBusy(true)
    setError(undefined)
    setDone('')
    try {
      onChange(await call())
      setDone(message)
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }
  const save = (e: FormEvent) => {
    e.preventDefault()
    const tk = tokens.trim()
    void act(() => setBudget({ tokens: tk === '' ? 0 : Number(tk), cost: cost.trim() || '0' }), t('usage.budget.saved'))
  }
  // A refusal about neither field (a 403, the network) shows above the buttons.
  const other = error && fieldOf(error) !== 'tokens' && fieldOf(error) !== 'cost' ? error : undefined

  return (
    <div className="mt-4 border-t border-slate-200 pt-3 dark:border-slate-700">
      <h3 className="mb-2 text-sm font-semibold">{t('usage.budget.edit')}</h3>
      {/* noValidate: the server's answer names the field and the fix (a negative cost, a fractional token count). */}
      <form onSubmit={save} noValidate className="flex flex-wrap items-start gap-3">
        <div className="w-56">
          <Field label={t('usage.budget.tokenLimit')} help={t('usage.budget.tokenLimitHelp')} error={fieldError(error, 'tokens')}>
            {(id, d) => (
              <TextInput
                id={id}
                aria-describedby={d}
                aria-invalid={fieldOf(error) === 'tokens' || undefined}
                type="number"
                min={0}
                step={1}
                inputMode="numeric"
                className="w-full"
                value={tokens}
                onChange={(e) => setTokens(e.target.value)}
              />
            )}
          </Field>
        </div>
        <div className="w-56">
          <Field label={t('usage.budget.costLimit')} help={t('usage.budget.costLimitHelp', { currency: status.currency })} error={fieldError(error, 'cost')}>
            {(id, d) => (
              <TextInput
                id={id}
                aria-describedby={d}
                aria-invalid={fieldOf(error) === 'cost' || undefined}
                type="number"
                min={0}
                step="any"
                inputMode="decimal"
                className="w-full"
                value={cost}
                onChange={(e) => setCost(e.target.value)}
              />
            )}
          </Field>
        </div>
        <Button type="submit" variant="primary" className="mt-6" disabled={busy}>
          {t('usage.budget.save')}
        </Button>
      </form>
      <ErrorAlert error={other} />
      <div className="flex flex-wrap items-center gap-2">
        <Button disabled={busy || !status.custom} onClick={() => void act(restoreDefault, t('usage.budget.defaultRestored'))}>
          {t('usage.budget.useDefault')}
        </Button>
        <Button variant="danger" disabled={busy} onClick={() => setConfirming(true)}>
          {t('usage.budget.reset')}
        </Button>
      </div>
      {!status.custom && <p className="mt-2 text-xs text-slate-600 dark:text-slate-400">{t('usage.budget.isDefault')}</p>}
      <p role="status" className="mt-2 text-sm text-green-800 dark:text-green-300">
        {done}
      </p>
      <ConfirmDialog
        open={confirming}
        title={t('usage.budget.resetTitle')}
        body={t('usage.budget.resetBody')}
        confirm={t('usage.budget.resetConfirm')}
        onConfirm={async () => {
          setDone('')
          setError(undefined)
          onChange(await resetBudget())
          setDone(t('usage.budget.resetDone'))
        }}
        onClose={() => setConfirming(false)}
      />
    </div>
  )
}
