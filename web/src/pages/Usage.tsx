import { useId, useState, type ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import { useSearchParams } from 'react-router-dom'
import { useActorNames } from '../audit/actors'
import { Button, cellClass, EmptyState, ErrorAlert, PageHeader, Section, Select, Table, useLoad } from '../components/ui'
import { useSession } from '../session'
import { BudgetSection } from '../usage/BudgetSection'
import { BarChart, ColumnChart, Legend, type ChartRow } from '../usage/charts'
import { everyDay, ranges, sum, tokens, usageBy, type Range, type UsageGroup, type UsageTotal } from '../usage/api'
import { moneyFormat } from '../usage/money'

const groups: UsageGroup[] = ['day', 'agent', 'actor', 'model']
// The bar charts show the largest groups; their tables list every one.
const chartRows = 10

/**
 * Usage is /usage: the workspace's model requests, tokens and cost over
 * the last day, week or month, its monthly budget (BudgetSection), then
 * the period per day (UTC), agent, user and model, each as a chart with
 * its numbers in a table. Requests whose model has no price are counted
 * and said to be left out of the cost, never priced at a guess.
 */
export default function Usage() {
  const { t, i18n } = useTranslation()
  const { workspace } = useSession()
  const actors = useActorNames(workspace)
  const totalsID = useId()
  const [params, setParams] = useSearchParams()
  const range: Range = (params.get('range') as Range) in ranges ? (params.get('range') as Range) : '7d'
  // now moves on Refresh, so the period ends at the moment it is asked for.
  const [now, setNow] = useState(() => Date.now())
  const since = new Date(now - ranges[range])
  const data = useLoad(
    () =>
      Promise.all(groups.map((g) => usageBy(g, since.toISOString()))).then(([day, agent, actor, model]) => ({
        currency: day.currency,
        day: day.data,
        agent: agent.data,
        actor: actor.data,
        model: model.data,
      })),
    [workspace, range, now],
  )

  const num = new Intl.NumberFormat(i18n.language)
  const n = (v: number) => num.format(v)
  const money = moneyFormat(i18n.language, data.data?.currency || 'USD')
  const dayShort = new Intl.DateTimeFormat(i18n.language, { month: 'numeric', day: 'numeric', timeZone: 'UTC' })
  const dayLong = new Intl.DateTimeFormat(i18n.language, { dateStyle: 'medium', timeZone: 'UTC' })
  const dayOf = (key: string) => new Date(key + 'T00:00:00Z')
  const period = t('usage.range.' + range)

  const setRange = (r: string) => {
    const next = new URLSearchParams(params)
    if (r === '7d') next.delete('range')
    else next.set('range', r)
    setParams(next, { replace: true })
  }

  // The numbers' column heads align with their right-aligned numbers.
  const numberHeads = (['requests', 'errors', 'inputTokens', 'outputTokens', 'totalTokens', 'cost'] as const).map((k) => (
    <span key={k} className="block text-right">
      {t('usage.' + k)}
    </span>
  ))
  // numberCells are a row's numbers, in numberHeads' order: the cost
  // last, with the requests it leaves out for want of a price.
  const numberCells = (r: UsageTotal) => [
    ...[r.requests, r.errors, r.input_tokens, r.output_tokens, tokens(r)].map((v, i) => (
      <td key={i} className={cellClass + ' text-right tabular-nums'}>
        {n(v)}
      </td>
    )),
    <td key="cost" className={cellClass + ' text-right tabular-nums'}>
      {money(r.cost)}
      {r.unpriced_requests > 0 && (
        <span className="block text-xs text-slate-600 dark:text-slate-400">{t('usage.unpricedShort', { count: r.unpriced_requests, n: n(r.unpriced_requests) })}</span>
      )}
    </td>,
  ]
  const agentName = (k: string) => k || t('usage.noAgent')
  const actorName = (k: string) => (k ? (actors.name(k) ?? k) : t('usage.unknownActor'))
  const modelName = (k: string) => k

  const d = data.data
  const total = d ? sum(d.day) : undefined
  const days = d ? everyDay(d.day, since, new Date(now)) : []
  const peak = days.reduce<UsageTotal | undefined>((p, x) => (!p || tokens(x) > tokens(p) ? x : p), undefined)

  // ranked orders a group's totals by tokens, largest first (then by key).
  const ranked = (rows: UsageTotal[]) => [...rows].sort((a, b) => tokens(b) - tokens(a) || (a.key < b.key ? -1 : 1))
  const barSummary = (what: string, rows: UsageTotal[], name: (k: string) => string) =>
    t('usage.barSummary', {
      what,
      period,
      top: rows
        .slice(0, 5)
        .map((r) => t('usage.barItem', { name: name(r.key), tokens: n(tokens(r)) }))
        .join(t('usage.listSeparator')),
    })

  const groupSection = (title: string, head: string, rows: UsageTotal[], name: (k: string) => string, mono = false): ReactNode => {
    const sorted = ranked(rows)
    const chart: ChartRow[] = sorted.slice(0, chartRows).map((r) => ({ label: name(r.key), input: r.input_tokens, output: r.output_tokens }))
    return (
      <Section title={title}>
        {sorted.length === 0 ? (
          <p className="text-sm text-slate-600 dark:text-slate-400">{t('usage.noneInPeriod')}</p>
        ) : (
          <>
            <Legend />
            <BarChart rows={chart} label={barSummary(title, sorted, name)} />
            <div className="mt-3 overflow-x-auto">
              <Table caption={t('usage.tableOf', { what: title, period })} head={[head, ...numberHeads]}>
                {sorted.map((r) => (
                  <tr key={r.key}>
                    <th scope="row" className={cellClass + ' text-left font-normal' + (mono && r.key && name(r.key) === r.key ? ' font-mono' : '')}>
                      {name(r.key)}
                    </th>
                    {numberCells(r)}
                  </tr>
                ))}
              </Table>
            </div>
          </>
        )}
      </Section>
    )
  }

  return (
    <div className="p-6">
      <PageHeader title={t('usage.title')}>
        <label className="flex items-center gap-2 text-sm">
          {t('usage.period')}
          <Select value={range} onChange={(e) => setRange(e.target.value)}>
            {(Object.keys(ranges) as Range[]).map((r) => (
              <option key={r} value={r}>
                {t('usage.range.' + r)}
              </option>
            ))}
          </Select>
        </label>
        <Button onClick={() => setNow(Date.now())}>{t('usage.refresh')}</Button>
      </PageHeader>
      <ErrorAlert error={data.error} />
      <div aria-busy={data.loading}>
        {total && (
          // The period's totals, a region named for screen readers' lists of them.
          <section aria-labelledby={totalsID} className="mb-4">
            <h2 id={totalsID} className="sr-only">
              {t('usage.totals', { period })}
            </h2>
            <dl className="grid grid-cols-2 gap-3 sm:grid-cols-3 lg:grid-cols-6">
              {(
                [
                  ['requests', total.requests],
                  ['errors', total.errors],
                  ['inputTokens', total.input_tokens],
                  ['outputTokens', total.output_tokens],
                  ['cachedTokens', total.cached_tokens],
                ] as const
              ).map(([k, v]) => (
                <div key={k} className="rounded border border-slate-200 p-3 dark:border-slate-700">
                  <dt className="text-xs text-slate-600 dark:text-slate-400">{t('usage.' + k)}</dt>
                  <dd className="text-lg font-semibold tabular-nums">{n(v)}</dd>
                </div>
              ))}
              <div className="rounded border border-slate-200 p-3 dark:border-slate-700">
                <dt className="text-xs text-slate-600 dark:text-slate-400">{t('usage.cost')}</dt>
                <dd className="text-lg font-semibold tabular-nums">
                  {money(total.cost)}
                  {total.unpriced_requests > 0 && (
                    <span className="block text-xs font-normal text-amber-900 dark:text-amber-200">
                      {t('usage.unpriced', { count: total.unpriced_requests, n: n(total.unpriced_requests) })}
                    </span>
                  )}
                </dd>
              </div>
            </dl>
            {total.unpriced_requests > 0 && <p className="mt-2 text-xs text-slate-600 dark:text-slate-400">{t('usage.unpricedHint')}</p>}
          </section>
        )}
        <BudgetSection reload={now} />
        {d && total && total.requests === 0 && <EmptyState>{t('usage.empty', { period })}</EmptyState>}
        {d && total && total.requests > 0 && (
          <>
            <Section title={t('usage.perDay')}>
              <p className="mb-2 text-xs text-slate-600 dark:text-slate-400">{t('usage.utcDays')}</p>
              <Legend />
              <ColumnChart
                rows={days.map((r) => ({ label: dayShort.format(dayOf(r.key)), input: r.input_tokens, output: r.output_tokens }))}
                label={t('usage.daySummary', {
                  period,
                  input: n(total.input_tokens),
                  output: n(total.output_tokens),
                  day: peak ? dayLong.format(dayOf(peak.key)) : '',
                  tokens: n(peak ? tokens(peak) : 0),
                })}
              />
              <div className="mt-3 overflow-x-auto">
                <Table caption={t('usage.tableOf', { what: t('usage.perDay'), period })} head={[t('usage.day'), ...numberHeads]}>
                  {days.map((r) => (
                    <tr key={r.key}>
                      <th scope="row" className={cellClass + ' text-left font-normal'}>
                        <time dateTime={r.key}>{dayLong.format(dayOf(r.key))}</time>
                      </th>
                      {numberCells(r)}
                    </tr>
                  ))}
                </Table>
              </div>
            </Section>
            {groupSection(t('usage.perAgent'), t('usage.agent'), d.agent, agentName)}
            {groupSection(t('usage.perActor'), t('usage.actor'), d.actor, actorName, true)}
            {groupSection(t('usage.perModel'), t('usage.model'), d.model, modelName, true)}
          </>
        )}
      </div>
    </div>
  )
}
