import { useEffect, useId, useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { useSearchParams } from 'react-router-dom'
import { useActorNames } from '../audit/actors'
import { actionFamilies, detailText, listAudit, type AuditFilters } from '../audit/api'
import { Button, cellClass, EmptyState, ErrorAlert, Field, PageHeader, Select, Table, TextInput, useLoad } from '../components/ui'
import { formatTime } from '../runs/format'
import { useSession } from '../session'

const pageSizes = [25, 50, 100]
const defaultPageSize = 50
const filterKeys = ['actor', 'action', 'target', 'since', 'until'] as const

/** localInput writes an RFC 3339 time as a datetime-local input's value (the browser's zone). */
function localInput(iso: string): string {
  if (!iso) return ''
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return ''
  const p = (n: number) => String(n).padStart(2, '0')
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`
}

/** fromLocalInput reads a datetime-local value (the browser's zone) as RFC 3339 in UTC. */
function fromLocalInput(v: string): string {
  if (!v) return ''
  const d = new Date(v)
  return Number.isNaN(d.getTime()) ? '' : d.toISOString()
}

/** Named shows an actor or target ("user:<id>") by the name people know, with the id beneath. */
function Named({ id, name }: { id: string; name?: string }) {
  if (!name) return <span className="font-mono">{id}</span>
  return (
    <>
      {name}
      <span className="block font-mono text-xs text-slate-600 dark:text-slate-400">{id}</span>
    </>
  )
}

/**
 * Audit is /audit: the workspace's audit log, newest first, filtered by
 * actor, action, target and time (kept in the URL), a page at a time.
 * The API pages forward with a cursor; the page keeps the cursors it has
 * used so that Previous goes back.
 */
export default function Audit() {
  const { t, i18n } = useTranslation()
  const { workspace } = useSession()
  const actors = useActorNames(workspace)
  const [params, setParams] = useSearchParams()
  const filters: AuditFilters = { actor: '', action: '', target: '', since: '', until: '' }
  for (const k of filterKeys) filters[k] = params.get(k) ?? ''
  const limitParam = Number(params.get('limit'))
  const limit = pageSizes.includes(limitParam) ? limitParam : defaultPageSize
  const filterKey = JSON.stringify([workspace, filters, limit])

  // cursors[i] is the cursor of page i (the first page has none); other
  // filters start again from the first page, at once, so that no request
  // pairs the new filters with an old cursor.
  const [paging, setPaging] = useState({ key: filterKey, cursors: [''], index: 0 })
  if (paging.key !== filterKey) setPaging({ key: filterKey, cursors: [''], index: 0 })
  const { cursors, index: pageIndex } = paging.key === filterKey ? paging : { cursors: [''], index: 0 }
  const cursor = cursors[pageIndex] ?? ''
  const events = useLoad(() => listAudit(filters, limit, cursor), [filterKey, cursor])

  // The form edits a draft; Apply puts it in the URL, which loads.
  const [draft, setDraft] = useState(filters)
  useEffect(() => {
    setDraft({ ...filters, since: localInput(filters.since), until: localInput(filters.until) })
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [filterKey])
  const edit = (k: keyof AuditFilters) => (e: { target: { value: string } }) => setDraft((d) => ({ ...d, [k]: e.target.value }))
  const apply = (e: FormEvent) => {
    e.preventDefault()
    const next = new URLSearchParams()
    const values: AuditFilters = {
      actor: actors.actorOf(draft.actor),
      action: draft.action.trim(),
      target: draft.target.trim(),
      since: fromLocalInput(draft.since),
      until: fromLocalInput(draft.until),
    }
    for (const k of filterKeys) if (values[k]) next.set(k, values[k])
    if (limit !== defaultPageSize) next.set('limit', String(limit))
    setParams(next, { replace: true })
  }
  const clear = () => setParams(limit !== defaultPageSize ? { limit: String(limit) } : {}, { replace: true })
  const setLimit = (n: number) => {
    const next = new URLSearchParams(params)
    if (n === defaultPageSize) next.delete('limit')
    else next.set('limit', String(n))
    setParams(next, { replace: true })
  }
  const goNext = () => {
    const next = events.data?.next
    if (!next) return
    setPaging((p) => ({ ...p, cursors: [...p.cursors.slice(0, p.index + 1), next], index: p.index + 1 }))
  }
  const filtered = filterKeys.some((k) => filters[k])
  const actionsID = useId()
  const actorsID = useId()
  const list = events.data?.events ?? []
  const first = pageIndex * limit + 1

  return (
    <div className="p-6">
      <PageHeader title={t('audit.title')}>
        <Button onClick={events.reload}>{t('audit.refresh')}</Button>
      </PageHeader>
      <form role="search" aria-label={t('audit.filters')} onSubmit={apply} className="mb-4">
        <div className="flex flex-wrap items-start gap-x-4">
          <Field label={t('audit.actor')} help={t('audit.actorHelp')}>
            {(id, d) => <TextInput id={id} aria-describedby={d} list={actorsID} value={draft.actor} onChange={edit('actor')} autoComplete="off" />}
          </Field>
          <datalist id={actorsID}>
            {actors.emails.map((e) => (
              <option key={e.actor} value={e.email} />
            ))}
          </datalist>
          <Field label={t('audit.action')} help={t('audit.actionHelp')}>
            {(id, d) => <TextInput id={id} aria-describedby={d} list={actionsID} value={draft.action} onChange={edit('action')} autoComplete="off" />}
          </Field>
          <datalist id={actionsID}>
            {actionFamilies.map((a) => (
              <option key={a} value={a} />
            ))}
          </datalist>
          <Field label={t('audit.target')} help={t('audit.targetHelp')}>
            {(id, d) => <TextInput id={id} aria-describedby={d} value={draft.target} onChange={edit('target')} autoComplete="off" />}
          </Field>
          <Field label={t('audit.since')}>
            {(id) => <TextInput id={id} type="datetime-local" value={draft.since} onChange={edit('since')} />}
          </Field>
          <Field label={t('audit.until')}>
            {(id) => <TextInput id={id} type="datetime-local" value={draft.until} onChange={edit('until')} />}
          </Field>
        </div>
        <div className="flex flex-wrap items-center gap-2">
          <Button type="submit" variant="primary">
            {t('audit.apply')}
          </Button>
          <Button onClick={clear} disabled={!filtered}>
            {t('audit.clear')}
          </Button>
          <label className="ml-auto flex items-center gap-2 text-sm">
            {t('audit.pageSize')}
            <Select value={limit} onChange={(e) => setLimit(Number(e.target.value))}>
              {pageSizes.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </Select>
          </label>
        </div>
      </form>
      <ErrorAlert error={events.error} />
      <div aria-busy={events.loading}>
        {events.data && list.length === 0 && <EmptyState>{filtered || pageIndex > 0 ? t('audit.noneMatching') : t('audit.none')}</EmptyState>}
        {list.length > 0 && (
          <Table caption={t('audit.caption')} head={[t('audit.time'), t('audit.actor'), t('audit.action'), t('audit.target'), t('audit.details')]}>
            {list.map((e) => (
                <tr key={e.id}>
                  <td className={cellClass + ' whitespace-nowrap'}>
                    <time dateTime={e.created_at}>{formatTime(e.created_at, i18n.language)}</time>
                  </td>
                  <td className={cellClass}>
                    <Named id={e.actor} name={actors.name(e.actor)} />
                  </td>
                  <td className={cellClass + ' font-mono'}>{e.action}</td>
                  <td className={cellClass}>{e.target && <Named id={e.target} name={actors.name(e.target)} />}</td>
                  <td className={cellClass + ' min-w-40 break-words text-xs'}>{detailText(e.details)}</td>
                </tr>
            ))}
          </Table>
        )}
      </div>
      {(pageIndex > 0 || events.data?.next) && (
        <nav aria-label={t('audit.pages')} className="mt-3 flex items-center gap-3">
          <Button onClick={() => setPaging((p) => ({ ...p, index: Math.max(0, p.index - 1) }))} disabled={pageIndex === 0 || events.loading}>
            {t('audit.previous')}
          </Button>
          <span className="text-sm" aria-live="polite">
            {list.length > 0 ? t('audit.showing', { page: pageIndex + 1, first, last: first + list.length - 1 }) : t('audit.page', { page: pageIndex + 1 })}
          </span>
          <Button onClick={goNext} disabled={!events.data?.next || events.loading}>
            {t('audit.next')}
          </Button>
        </nav>
      )}
    </div>
  )
}
