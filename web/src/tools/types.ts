// The shapes of /api/tools, /api/mcp/servers and /api/tools/openapi.

export interface ToolInfo {
  name: string
  description: string
  capability: string
  /** source is builtin, mcp:<server> or openapi:<import>. */
  source: string
  enabled: boolean
}

export interface MCPServer {
  name: string
  transport: string
  connected: boolean
  error?: string
  tools: number
  source: 'api' | 'config'
  url?: string
  auth?: string
}

export interface MCPTest {
  name: string
  source: string
  connected: boolean
  error?: string
  tools: { name: string; mcp_name: string; description: string }[]
}

export interface OpenAPIResult {
  name: string
  tools: { name: string; description: string; capability: string }[]
}
