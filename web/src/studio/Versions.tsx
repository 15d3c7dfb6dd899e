// The versions of a stored workflow: list, diff two, restore one.
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { api } from '../api'
import { Button, ErrorAlert, Select, useLoad } from '../components/ui'
import { diffLines, pretty, type DiffLine } from './diff'

interface Version {
  workflow_id: string
  version: number
  definition: unknown
  created_at: string
}

export function Versions({ id, current, onRestored }: { id: string; current: number; onRestored: () => void }) {
  const { t } = useTranslation()
  const list = useLoad(() => api<{ data: Version[] }>(`/api/workflows/${id}/versions`), [id, current])
  const versions = list.data?.data ?? []
  const [from, setFrom] = useState('')
  const [to, setTo] = useState('')
  const [diff, setDiff] = useState<DiffLine[]>()
  const [error, setError] = useState<unknown>()
  const nums = versions.map((v) => v.version).sort((a, b) => b - a)
  const a = from || String(nums[1] ?? nums[0] ?? '')
  const b = to || String(nums[0] ?? '')
  const compare = async () => {
    setError(undefined)
    try {
      const [va, vb] = await Promise.all([api<Version>(`/api/workflows/${id}/versions/${a}`), api<Version>(`/api/workflows/${id}/versions/${b}`)])
      setDiff(diffLines(pretty(va.definition), pretty(vb.definition)))
    } catch (e) {
      setError(e)
    }
  }
  const restore = async (v: number) => {
    setError(undefined)
    try {
      await api(`/api/workflows/${id}/versions/${v}/restore`, 'POST')
      setDiff(undefined)
      onRestored()
    } catch (e) {
      setError(e)
    }
  }
  return (
    <div>
      <ErrorAlert error={list.error || error} />
      <ul aria-label={t('studio.versions.list')} className="mb-2 text-sm">
        {nums.map((n) => (
          <li key={n} className="flex items-center gap-2 py-0.5">
            <span className="mr-auto">
              {t('studio.versions.version', { n })}
              {n === current && ' ' + t('studio.versions.current')}
            </span>
            {n !== current && (
              <Button aria-label={t('studio.versions.restoreN', { n })} onClick={() => restore(n)}>
                {t('studio.versions.restore')}
              </Button>
            )}
          </li>
        ))}
      </ul>
      {nums.length > 1 && (
        <div className="mb-2 flex flex-wrap items-end gap-2 text-sm">
          <VersionSelect label={t('studio.versions.from')} nums={nums} value={a} onChange={setFrom} />
          <VersionSelect label={t('studio.versions.to')} nums={nums} value={b} onChange={setTo} />
          <Button onClick={compare}>{t('studio.versions.compare')}</Button>
        </div>
      )}
      {diff && (
        <pre aria-label={t('studio.versions.diff', { a, b })} role="region" className="max-h-80 overflow-auto rounded border border-slate-200 text-xs dark:border-slate-700">
          {diff.every((l) => l.op === ' ') && <div className="p-1">{t('studio.versions.same')}</div>}
          {diff.map((l, i) =>
            l.op === ' ' ? (
              <div key={i} className="px-1 text-slate-600 dark:text-slate-400">
                {'  ' + l.text}
              </div>
            ) : (
              <div key={i} className={'px-1 ' + (l.op === '+' ? 'bg-emerald-50 text-emerald-900 dark:bg-emerald-950 dark:text-emerald-200' : 'bg-red-50 text-red-900 dark:bg-red-950 dark:text-red-200')}>
                {l.op + ' ' + l.text}
              </div>
            ),
          )}
        </pre>
      )}
    </div>
  )
}

function VersionSelect({ label, nums, value, onChange }: { label: string; nums: number[]; value: number | string; onChange: (v: string) => void }) {
  return (
    <label className="flex flex-col">
      {label}
      <Select value={value} onChange={(e) => onChange(e.target.value)}>
        {nums.map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </Select>
    </label>
  )
}
