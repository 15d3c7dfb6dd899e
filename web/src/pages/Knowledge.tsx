import { useEffect, useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { api } from '../api'
import { Button, cellClass, EmptyState, ErrorAlert, Field, PageHeader, Section, Select, Table, TextInput, useLoad } from '../components/ui'
import type { KnowledgeBase, SourceInfo } from '../knowledge/api'
import { SearchTester } from '../knowledge/SearchTester'
import { Upload } from '../knowledge/Upload'
import { useSession } from '../session'

/** Knowledge creates knowledge bases, ingests files into them and tests their search. */
export default function Knowledge() {
  const { t } = useTranslation()
  const { workspace } = useSession()
  const bases = useLoad(() => api<{ data: KnowledgeBase[] }>('/api/kbs').then((r) => r.data), [workspace])
  const [selected, setSelected] = useState('')
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const [createError, setCreateError] = useState<unknown>()

  useEffect(() => {
    const list = bases.data ?? []
    if (!list.some((b) => b.id === selected)) setSelected(list[0]?.id ?? '')
  }, [bases.data, selected])

  const sources = useLoad(
    () => (selected ? api<{ data: SourceInfo[] }>(`/api/kbs/${encodeURIComponent(selected)}/sources`).then((r) => r.data) : Promise.resolve([])),
    [selected],
  )

  const create = async (e: FormEvent) => {
    e.preventDefault()
    setCreateError(undefined)
    try {
      const k = await api<KnowledgeBase>('/api/kbs', 'POST', { name: name.trim(), description })
      setName('')
      setDescription('')
      setSelected(k.id)
      bases.reload()
    } catch (err) {
      setCreateError(err)
    }
  }

  const current = bases.data?.find((b) => b.id === selected)

  return (
    <div className="mx-auto max-w-6xl p-4">
      <PageHeader title={t('knowledge.title')}>
        {bases.data && bases.data.length > 0 && (
          <label className="flex items-center gap-2 text-sm">
            {t('knowledge.base')}
            <Select value={selected} onChange={(e) => setSelected(e.target.value)}>
              {bases.data.map((b) => (
                <option key={b.id} value={b.id}>
                  {b.name}
                </option>
              ))}
            </Select>
          </label>
        )}
      </PageHeader>
      <ErrorAlert error={bases.error} />
      <Section title={t('knowledge.create')}>
        <form onSubmit={create} className="flex items-start gap-3">
          <div className="flex-1">
            <Field label={t('knowledge.name')} help={t('knowledge.nameHelp')}>
              {(id, d) => <TextInput id={id} aria-describedby={d} className="w-full" value={name} onChange={(e) => setName(e.target.value)} required />}
            </Field>
          </div>
          <div className="flex-1">
            <Field label={t('knowledge.description')}>
              {(id) => <TextInput id={id} className="w-full" value={description} onChange={(e) => setDescription(e.target.value)} />}
            </Field>
          </div>
          <Button type="submit" variant="primary" className="mt-6" disabled={!name.trim()}>
            {t('knowledge.createButton')}
          </Button>
        </form>
        <ErrorAlert error={createError} />
      </Section>
      {bases.data && bases.data.length === 0 && <EmptyState>{t('knowledge.empty')}</EmptyState>}
      {current && (
        <>
          <Section title={t('knowledge.addFiles', { name: current.name })}>
            <Upload kbID={current.id} onIngested={sources.reload} />
          </Section>
          <Section title={t('knowledge.sources')}>
            <ErrorAlert error={sources.error} />
            {sources.data && sources.data.length === 0 ? (
              <p className="text-sm text-slate-600 dark:text-slate-400">{t('knowledge.noSources')}</p>
            ) : (
              <Table caption={t('knowledge.sourcesOf', { name: current.name })} head={[t('knowledge.sourceName'), t('knowledge.documents'), t('knowledge.chunks')]}>
                {sources.data?.map((s) => (
                  <tr key={s.name}>
                    <td className={cellClass}>{s.name}</td>
                    <td className={cellClass}>{s.documents}</td>
                    <td className={cellClass}>{s.chunks}</td>
                  </tr>
                ))}
              </Table>
            )}
          </Section>
          <Section title={t('knowledge.searchTester')}>
            <SearchTester kbID={current.id} />
          </Section>
        </>
      )}
    </div>
  )
}
