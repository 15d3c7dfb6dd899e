import { useTranslation } from 'react-i18next'
import { Link } from 'react-router-dom'
import { EmptyState, PageHeader, Section } from '../components/ui'

/**
 * Approvals is the inbox of capability approvals: a tool call an agent
 * may make only once a person with the right role says yes. The server
 * has no approvals API yet (no request is ever pending), so the page says
 * what will appear here and who will approve it, and shows no requests;
 * it lists them once the API exists.
 */
export default function Approvals() {
  const { t } = useTranslation()
  return (
    <div className="mx-auto max-w-4xl p-4">
      <PageHeader title={t('approvals.title')} />
      <EmptyState>{t('approvals.empty')}</EmptyState>
      <Section title={t('approvals.whoTitle')} className="mt-4">
        <ul className="list-disc pl-5 text-sm">
          <li>{t('approvals.low')}</li>
          <li>{t('approvals.medium')}</li>
          <li>{t('approvals.high')}</li>
        </ul>
      </Section>
      <p className="text-sm">
        {t('approvals.humanSteps')}{' '}
        <Link to="/runs" className="text-indigo-700 underline dark:text-indigo-300">
          {t('approvals.runsLink')}
        </Link>
      </p>
    </div>
  )
}
