// The shapes of /api/agents and /api/providers the agents page reads (the
// tools it offers are tools/types.ts's ToolInfo).

/** GuardRule is one rule of middleware.GuardSettings. */
export interface GuardRule {
  name: string
  keywords?: string[]
  pattern?: string
  action: string
  message?: string
  direction?: string
}

/** Middleware is what an agent stores in params.middleware: llm/middleware.Settings plus tool_progress. */
export interface Middleware {
  guard?: {
    rules?: GuardRule[]
    injection?: boolean
    topics?: unknown[]
    block_message?: string
    off_topic_message?: string
    scan_output?: boolean
  }
  pii?: { locales?: string[]; mode?: string; threshold?: number }
  rate_limit?: { enabled?: boolean; rps?: number; burst?: number; queue?: number; timeout?: number }
  retry?: { enabled?: boolean; max_retries?: number; base_delay?: number; max_delay?: number }
  logging?: { enabled?: boolean }
  tool_progress?: boolean
}

export interface Agent {
  id: string
  name: string
  model: string
  instructions?: string
  tools?: string[]
  source: 'api' | 'config'
  params: {
    temperature?: number
    max_tokens?: number
    max_steps?: number
    token_budget?: number
    tool_timeout_seconds?: number
    max_tool_result_bytes?: number
    middleware?: Middleware
    knowledge_bases?: string[]
    memory?: unknown
    skills?: string[]
  }
  updated_at: string
}

export interface ProviderInfo {
  name: string
  type: string
  models?: string[]
}

/** piiLocales are the locales package pii knows (PIISettings.Locales). */
export const piiLocales = ['Global', 'TW', 'JP', 'KR', 'US', 'UK'] as const
