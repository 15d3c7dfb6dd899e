import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { api } from '../api'
import { cellClass, ErrorAlert, Table } from '../components/ui'
import type { ToolInfo } from './types'

/** Switch is an on/off button (role switch) named for what it turns on. */
function Switch({ on, label, disabled, onChange }: { on: boolean; label: string; disabled?: boolean; onChange: (on: boolean) => void }) {
  return (
    <button
      type="button"
      role="switch"
      aria-checked={on}
      aria-label={label}
      disabled={disabled}
      onClick={() => onChange(!on)}
      className={
        'relative inline-flex h-5 w-9 shrink-0 items-center rounded-full border transition-colors disabled:opacity-60 ' +
        (on ? 'border-indigo-700 bg-indigo-700 dark:border-indigo-400 dark:bg-indigo-400' : 'border-slate-500 bg-slate-300 dark:border-slate-400 dark:bg-slate-700')
      }
    >
      <span className={'inline-block h-4 w-4 rounded-full bg-white shadow transition-transform dark:bg-slate-100 ' + (on ? 'translate-x-4' : 'translate-x-0')} />
    </button>
  )
}

/** ToolTable lists the workspace's tools with a switch each that turns it on or off for its agents (admins). */
export function ToolTable({ tools, canManage, onChange }: { tools: ToolInfo[]; canManage: boolean; onChange: (tools: ToolInfo[]) => void }) {
  const { t } = useTranslation()
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState('')
  const toggle = async (name: string, on: boolean) => {
    setBusy(name)
    setError(undefined)
    try {
      const r = await api<{ data: ToolInfo[] }>('/api/tools/settings', 'POST', { tools: { [name]: on } })
      onChange(r.data)
    } catch (e) {
      setError(e)
    } finally {
      setBusy('')
    }
  }
  return (
    <>
      <ErrorAlert error={error} />
      <Table caption={t('tools.caption')} head={[t('tools.name'), t('tools.description'), t('tools.source'), t('tools.capability'), t('tools.enabled')]}>
        {tools.map((x) => (
          <tr key={x.name}>
            <td className={cellClass + ' font-mono'}>{x.name}</td>
            <td className={cellClass} translate="no">{x.description}</td>
            <td className={cellClass + ' font-mono text-xs'}>{x.source}</td>
            <td className={cellClass}>{t('tools.cap.' + x.capability, { defaultValue: x.capability })}</td>
            <td className={cellClass}>
              <div className="flex items-center gap-2">
                <Switch on={x.enabled} label={t('tools.enable', { name: x.name })} disabled={!canManage || busy === x.name} onChange={(on) => void toggle(x.name, on)} />
                <span className="text-xs">{x.enabled ? t('tools.on') : t('tools.off')}</span>
              </div>
            </td>
          </tr>
        ))}
      </Table>
    </>
  )
}
