import { useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { ConfirmDialog } from '../components/ConfirmDialog'
import { api, fieldError, fieldOf } from '../api'
import { Button, cellClass, ErrorAlert, Field, Table, TextArea, TextInput } from '../components/ui'
import type { OpenAPIResult, ToolInfo } from './types'

/**
 * OpenAPIImports lists the workspace's OpenAPI imports (from the tools'
 * openapi:<name> sources), imports a pasted OpenAPI 3 document (JSON or
 * YAML) and shows the operations it became, and deletes an import.
 */
export function OpenAPIImports({ tools, canManage, onChanged }: { tools: ToolInfo[]; canManage: boolean; onChanged: () => void }) {
  const { t } = useTranslation()
  const [name, setName] = useState('')
  const [doc, setDoc] = useState('')
  const [baseURL, setBaseURL] = useState('')
  const [bearer, setBearer] = useState('')
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const [result, setResult] = useState<OpenAPIResult | null>(null)
  const [deleting, setDeleting] = useState<string | null>(null)

  const imports = new Map<string, ToolInfo[]>()
  for (const x of tools) {
    if (!x.source.startsWith('openapi:')) continue
    const n = x.source.slice('openapi:'.length)
    imports.set(n, [...(imports.get(n) ?? []), x])
  }

  const submit = async (e: FormEvent) => {
    e.preventDefault()
    setBusy(true)
    setError(undefined)
    setResult(null)
    try {
      const r = await api<OpenAPIResult>('/api/tools/openapi', 'POST', {
        name: name.trim(),
        document: doc,
        base_url: baseURL.trim() || undefined,
        auth: bearer ? { bearer } : undefined,
      })
      setResult(r)
      setName('')
      setDoc('')
      setBaseURL('')
      setBearer('')
      onChanged()
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }

  const remove = async () => {
    if (!deleting) return
    await api('/api/tools/openapi/' + encodeURIComponent(deleting), 'DELETE')
    if (result?.name === deleting) setResult(null)
    onChanged()
  }

  const field = fieldOf(error)
  const errorFor = (f: string) => fieldError(error, f)

  return (
    <>
      {imports.size === 0 ? (
        <p className="mb-3 text-sm text-slate-600 dark:text-slate-400">{t('tools.noImports')}</p>
      ) : (
        <Table caption={t('tools.importsCaption')} head={[t('tools.name'), t('tools.operations'), t('common.actions')]}>
          {[...imports.entries()].map(([n, ops]) => (
            <tr key={n}>
              <td className={cellClass + ' font-medium'}>{n}</td>
              <td className={cellClass + ' font-mono text-xs'}>{ops.map((o) => o.name).join(', ')}</td>
              <td className={cellClass}>
                {canManage && (
                  <Button variant="danger" aria-label={t('tools.deleteImportName', { name: n })} onClick={() => setDeleting(n)}>
                    {t('common.delete')}
                  </Button>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
      {result && (
        <div role="region" aria-label={t('tools.imported', { name: result.name })} className="mt-3 rounded border border-green-300 bg-green-50 p-3 text-sm text-green-950 dark:border-green-700 dark:bg-green-950 dark:text-green-100">
          <p className="mb-1 font-medium">{t('tools.importedCount', { name: result.name, count: result.tools.length })}</p>
          <ul className="list-disc pl-5">
            {result.tools.map((x) => (
              <li key={x.name} translate="no">
                <span className="font-mono">{x.name}</span>
                {x.description && ' — ' + x.description}
              </li>
            ))}
          </ul>
        </div>
      )}
      {canManage && (
        <form onSubmit={submit} aria-label={t('tools.importTitle')} className="mt-4" noValidate>
          <h3 className="mb-2 text-sm font-semibold">{t('tools.importTitle')}</h3>
          <div className="grid gap-x-4 md:grid-cols-3">
            <Field label={t('tools.importName')} help={t('tools.importNameHelp')} error={errorFor('name')}>
              {(id, d) => <TextInput id={id} aria-describedby={d} aria-invalid={!!errorFor('name')} value={name} onChange={(e) => setName(e.target.value)} required />}
            </Field>
            <Field label={t('tools.baseURL')} help={t('tools.baseURLHelp')} error={errorFor('base_url')}>
              {(id, d) => <TextInput id={id} aria-describedby={d} type="url" value={baseURL} onChange={(e) => setBaseURL(e.target.value)} />}
            </Field>
            <Field label={t('tools.bearer')} help={t('tools.importBearerHelp')} error={errorFor('auth')}>
              {(id, d) => <TextInput id={id} aria-describedby={d} type="password" autoComplete="off" value={bearer} onChange={(e) => setBearer(e.target.value)} />}
            </Field>
          </div>
          <Field label={t('tools.document')} help={t('tools.documentHelp')} error={errorFor('document')}>
            {(id, d) => <TextArea id={id} aria-describedby={d} aria-invalid={!!errorFor('document')} rows={8} className="font-mono" value={doc} onChange={(e) => setDoc(e.target.value)} required />}
          </Field>
          {!['name', 'base_url', 'auth', 'document'].includes(field) && <ErrorAlert error={error} />}
          <Button type="submit" variant="primary" disabled={busy || !name.trim() || !doc.trim()}>
            {t('tools.importButton')}
          </Button>
        </form>
      )}
      <ConfirmDialog
        open={deleting !== null}
        title={t('tools.confirmImportTitle', { name: deleting ?? '' })}
        body={t('tools.confirmImportBody')}
        confirm={t('tools.confirmDelete')}
        onConfirm={remove}
        onClose={() => setDeleting(null)}
      />
    </>
  )
}
