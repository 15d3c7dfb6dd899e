import { useTranslation } from 'react-i18next'
import { api } from '../api'
import { ErrorAlert, PageHeader, Section, useLoad } from '../components/ui'
import { McpServers } from '../tools/McpServers'
import { OpenAPIImports } from '../tools/OpenAPIImports'
import { ToolTable } from '../tools/ToolTable'
import type { MCPServer, ToolInfo } from '../tools/types'
import { useCan, useSession } from '../session'

/** Tools turns the workspace's tools on and off and manages its MCP servers and OpenAPI imports (admins; others read). */
export default function Tools() {
  const { t } = useTranslation()
  const { workspace } = useSession()
  const canManage = useCan('manage_tools')
  const loaded = useLoad(() => api<{ data: ToolInfo[] }>('/api/tools').then((r) => r.data), [workspace])
  const servers = useLoad(() => api<{ data: MCPServer[] }>('/api/mcp/servers').then((r) => r.data), [workspace])
  const tools = loaded.data
  const reloadAll = () => {
    loaded.reload()
    servers.reload()
  }

  return (
    <div className="mx-auto max-w-6xl p-4">
      <PageHeader title={t('tools.title')} />
      {!canManage && <p className="mb-3 text-sm text-slate-600 dark:text-slate-400">{t('tools.readOnly')}</p>}
      <Section title={t('tools.toolsTitle')}>
        <p className="mb-2 text-xs text-slate-600 dark:text-slate-400">{t('tools.toolsHelp')}</p>
        <ErrorAlert error={loaded.error} />
        {/* The settings call answers with the updated list: shown without a reload. */}
        {tools && <ToolTable tools={tools} canManage={canManage} onChange={loaded.set} />}
      </Section>
      <Section title={t('tools.serversTitle')}>
        <ErrorAlert error={servers.error} />
        {servers.data && <McpServers servers={servers.data} canManage={canManage} onChanged={reloadAll} />}
      </Section>
      <Section title={t('tools.openapiTitle')}>
        {tools && <OpenAPIImports tools={tools} canManage={canManage} onChanged={loaded.reload} />}
      </Section>
    </div>
  )
}
