import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { api } from '../api'
import { Button, cellClass, ErrorAlert, Table } from '../components/ui'
import { skillPath, type Skill, type SkillFileContent } from './types'

/**
 * SkillView shows one skill read whole: its front matter, its
 * instructions as the agent will read them, and its files, each of which
 * opens below the list (text as it is, other files by their size).
 */
export function SkillView({ skill }: { skill: Skill }) {
  const { t } = useTranslation()
  const [file, setFile] = useState<SkillFileContent | null>(null)
  const [error, setError] = useState<unknown>()

  const open = async (path: string) => {
    setError(undefined)
    try {
      setFile(await api<SkillFileContent>(skillPath(skill.name, path)))
    } catch (err) {
      setError(err)
    }
  }

  const meta = Object.entries(skill.metadata ?? {})
  return (
    <div>
      <dl className="mb-3 grid grid-cols-[max-content_1fr] gap-x-4 gap-y-1 text-sm">
        <dt className="font-medium">{t('skills.description')}</dt>
        <dd translate="no">{skill.description}</dd>
        {skill.license && (
          <>
            <dt className="font-medium">{t('skills.license')}</dt>
            <dd translate="no">{skill.license}</dd>
          </>
        )}
        {skill.compatibility && (
          <>
            <dt className="font-medium">{t('skills.compatibility')}</dt>
            <dd translate="no">{skill.compatibility}</dd>
          </>
        )}
        {skill.allowed_tools && (
          <>
            <dt className="font-medium">{t('skills.allowedTools')}</dt>
            <dd translate="no" className="font-mono">
              {skill.allowed_tools}
            </dd>
          </>
        )}
        {meta.length > 0 && (
          <>
            <dt className="font-medium">{t('skills.metadata')}</dt>
            <dd translate="no" className="font-mono text-xs">
              {meta.map(([k, v]) => k + ': ' + v).join(' · ')}
            </dd>
          </>
        )}
      </dl>
      <h3 className="mb-1 text-sm font-semibold">{t('skills.instructions')}</h3>
      <pre translate="no" tabIndex={0} aria-label={t('skills.instructionsOf', { name: skill.name })} className="mb-3 max-h-96 overflow-auto whitespace-pre-wrap rounded border border-slate-200 bg-slate-50 p-3 text-xs dark:border-slate-700 dark:bg-slate-900">
        {skill.instructions}
      </pre>
      <h3 className="mb-1 text-sm font-semibold">{t('skills.files')}</h3>
      {!skill.files?.length ? (
        <p className="text-sm text-slate-600 dark:text-slate-400">{t('skills.noFiles')}</p>
      ) : (
        <Table caption={t('skills.filesCaption', { name: skill.name })} head={[t('skills.path'), t('skills.size'), t('common.actions')]}>
          {skill.files.map((f) => (
            <tr key={f.path}>
              <td translate="no" className={cellClass + ' font-mono text-xs'}>
                {f.path}
              </td>
              <td className={cellClass}>{t('skills.bytes', { count: f.size })}</td>
              <td className={cellClass}>
                <Button aria-label={t('skills.openFile', { path: f.path })} onClick={() => open(f.path)}>
                  {t('skills.open')}
                </Button>
              </td>
            </tr>
          ))}
        </Table>
      )}
      <ErrorAlert error={error} />
      {file && (
        <div className="mt-3">
          <div className="mb-1 flex items-center gap-2">
            <h4 translate="no" className="mr-auto font-mono text-sm">
              {file.path}
            </h4>
            <Button onClick={() => setFile(null)}>{t('common.close')}</Button>
          </div>
          {file.content != null ? (
            <pre translate="no" tabIndex={0} aria-label={file.path} className="max-h-96 overflow-auto whitespace-pre-wrap rounded border border-slate-200 bg-slate-50 p-3 text-xs dark:border-slate-700 dark:bg-slate-900">
              {file.content}
            </pre>
          ) : (
            <p className="text-sm text-slate-600 dark:text-slate-400">{t('skills.binary', { count: file.size })}</p>
          )}
        </div>
      )}
    </div>
  )
}
