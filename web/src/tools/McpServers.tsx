import { useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { ConfirmDialog } from '../components/ConfirmDialog'
import { api, fieldError, fieldOf } from '../api'
import { Button, cellClass, ErrorAlert, Field, Table, TextInput } from '../components/ui'
import type { MCPServer, MCPTest } from './types'

/**
 * McpServers lists the workspace's MCP servers with their health and tool
 * count, and lets admins add a streamable HTTP server, test one (a fresh
 * connection listing its tools) and delete one.
 */
export function McpServers({ servers, canManage, onChanged }: { servers: MCPServer[]; canManage: boolean; onChanged: () => void }) {
  const { t } = useTranslation()
  const [name, setName] = useState('')
  const [url, setURL] = useState('')
  const [bearer, setBearer] = useState('')
  const [addError, setAddError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const [tests, setTests] = useState<Record<string, MCPTest | { failed: string } | 'running'>>({})
  const [deleting, setDeleting] = useState<string | null>(null)

  const add = async (e: FormEvent) => {
    e.preventDefault()
    setBusy(true)
    setAddError(undefined)
    try {
      await api('/api/mcp/servers', 'POST', { name: name.trim(), url: url.trim(), bearer: bearer || undefined })
      setName('')
      setURL('')
      setBearer('')
      onChanged()
    } catch (err) {
      setAddError(err)
    } finally {
      setBusy(false)
    }
  }

  const test = async (n: string) => {
    setTests((m) => ({ ...m, [n]: 'running' }))
    try {
      const r = await api<MCPTest>('/api/mcp/servers/' + encodeURIComponent(n) + '/test', 'POST')
      setTests((m) => ({ ...m, [n]: r }))
    } catch (err) {
      setTests((m) => ({ ...m, [n]: { failed: err instanceof Error ? err.message : String(err) } }))
    }
  }

  const remove = async () => {
    if (!deleting) return
    await api('/api/mcp/servers/' + encodeURIComponent(deleting), 'DELETE')
    setTests((m) => {
      const next = { ...m }
      delete next[deleting]
      return next
    })
    onChanged()
  }

  const field = fieldOf(addError)
  const errorFor = (f: string) => fieldError(addError, f)

  return (
    <>
      {servers.length === 0 ? (
        <p className="mb-3 text-sm text-slate-600 dark:text-slate-400">{t('tools.noServers')}</p>
      ) : (
        <Table caption={t('tools.serversCaption')} head={[t('tools.name'), t('tools.url'), t('tools.status'), t('tools.toolCount'), t('common.actions')]}>
          {servers.map((s) => {
            const r = tests[s.name]
            return (
              <tr key={s.source + s.name}>
                <td className={cellClass}>
                  <span className="font-medium">{s.name}</span>
                  <span className="block text-xs text-slate-600 dark:text-slate-400">{s.source === 'config' ? t('tools.fromConfig') : t('tools.auth.' + (s.auth || 'none'))}</span>
                </td>
                <td className={cellClass + ' break-all font-mono text-xs'}>{s.url ?? s.transport}</td>
                <td className={cellClass}>
                  {s.connected ? (
                    <span className="text-green-800 dark:text-green-300">{t('tools.connected')}</span>
                  ) : (
                    <span className="text-red-700 dark:text-red-300">
                      {t('tools.down')}
                      {s.error && <span translate="no" className="block text-xs">{s.error}</span>}
                    </span>
                  )}
                </td>
                <td className={cellClass}>{s.tools}</td>
                <td className={cellClass}>
                  {canManage && (
                    <div className="flex gap-2">
                      <Button aria-label={t('tools.testName', { name: s.name })} disabled={r === 'running'} onClick={() => void test(s.name)}>
                        {t('tools.test')}
                      </Button>
                      {s.source === 'api' && (
                        <Button variant="danger" aria-label={t('tools.deleteServerName', { name: s.name })} onClick={() => setDeleting(s.name)}>
                          {t('common.delete')}
                        </Button>
                      )}
                    </div>
                  )}
                  {r && (
                    <div role="region" aria-label={t('tools.testOf', { name: s.name })} className="mt-2 text-xs">
                      {r === 'running' ? (
                        <p role="status">{t('tools.testing')}</p>
                      ) : 'failed' in r ? (
                        <p className="text-red-700 dark:text-red-300">{r.failed}</p>
                      ) : r.connected ? (
                        <>
                          <p className="text-green-800 dark:text-green-300">{t('tools.testOK', { count: r.tools.length })}</p>
                          <ul className="list-disc pl-4">
                            {r.tools.map((x) => (
                              <li key={x.name} translate="no">
                                <span className="font-mono">{x.name}</span>
                                {x.description && ' — ' + x.description}
                              </li>
                            ))}
                          </ul>
                        </>
                      ) : (
                        <p className="text-red-700 dark:text-red-300">{t('tools.testFailed', { error: r.error ?? '' })}</p>
                      )}
                    </div>
                  )}
                </td>
              </tr>
            )
          })}
        </Table>
      )}
      {canManage && (
        <form onSubmit={add} aria-label={t('tools.addServer')} className="mt-4" noValidate>
          <h3 className="mb-2 text-sm font-semibold">{t('tools.addServer')}</h3>
          <div className="grid gap-x-4 md:grid-cols-3">
            <Field label={t('tools.serverName')} help={t('tools.serverNameHelp')} error={errorFor('name')}>
              {(id, d) => <TextInput id={id} aria-describedby={d} aria-invalid={!!errorFor('name')} value={name} onChange={(e) => setName(e.target.value)} required />}
            </Field>
            <Field label={t('tools.url')} help={t('tools.urlHelp')} error={errorFor('url')}>
              {(id, d) => <TextInput id={id} aria-describedby={d} aria-invalid={!!errorFor('url')} type="url" value={url} onChange={(e) => setURL(e.target.value)} required />}
            </Field>
            <Field label={t('tools.bearer')} help={t('tools.bearerHelp')} error={errorFor('bearer')}>
              {(id, d) => <TextInput id={id} aria-describedby={d} type="password" autoComplete="off" value={bearer} onChange={(e) => setBearer(e.target.value)} />}
            </Field>
          </div>
          {!['name', 'url', 'bearer'].includes(field) && <ErrorAlert error={addError} />}
          <Button type="submit" variant="primary" disabled={busy || !name.trim() || !url.trim()}>
            {t('tools.addButton')}
          </Button>
        </form>
      )}
      <ConfirmDialog
        open={deleting !== null}
        title={t('tools.confirmServerTitle', { name: deleting ?? '' })}
        body={t('tools.confirmServerBody')}
        confirm={t('tools.confirmDelete')}
        onConfirm={remove}
        onClose={() => setDeleting(null)}
      />
    </>
  )
}
