import { useTranslation } from 'react-i18next'
import { EmptyState, PageHeader } from '../components/ui'
import { CredentialsSection } from '../settings/CredentialsSection'
import { KeysSection } from '../settings/KeysSection'
import { MembersSection } from '../settings/MembersSection'
import { RetentionSection } from '../settings/RetentionSection'
import { WorkspaceSection } from '../settings/WorkspaceSection'
import { useWorkspace } from '../session'

/**
 * Settings is the workspace's name, its provider keys, its API keys, its
 * members and invitations, and how long its data is kept. Each section shows only what the signed-in
 * role may do, and asks the server only for what it may read.
 */
export default function Settings() {
  const { t } = useTranslation()
  const ws = useWorkspace()
  return (
    <div className="mx-auto max-w-6xl p-4">
      <PageHeader title={t('settings.title')} />
      {!ws ? (
        <EmptyState>{t('settings.noWorkspace')}</EmptyState>
      ) : (
        // Keyed by workspace, so a switch in the top bar starts each section afresh.
        <div key={ws.id}>
          <WorkspaceSection ws={ws} />
          <CredentialsSection ws={ws} />
          <KeysSection ws={ws} />
          <MembersSection ws={ws} />
          <RetentionSection ws={ws} />
        </div>
      )}
    </div>
  )
}
