// The workflow definition as the server stores it (workflow.Definition:
// React Flow's own field names) and the node kinds of GET /api/node-kinds
// (workflow.KindDescription). One shape for the canvas, the run view and
// import/export.

export interface Position {
  x: number
  y: number
}

export interface WorkflowNode {
  id: string
  type: string
  name?: string
  config?: Record<string, unknown>
  position?: Position
}

export interface WorkflowEdge {
  id: string
  source: string
  target: string
  sourceHandle?: string
}

export interface Settings {
  strategy?: string
  timeout?: string
  max_steps?: number
}

export interface Definition {
  name: string
  description?: string
  version?: string
  nodes: WorkflowNode[]
  edges: WorkflowEdge[]
  hooks?: unknown
  settings?: Settings
}

/** JSONSchema is the subset of draft 2020-12 the node kinds' config schemas use. */
export interface JSONSchema {
  type?: string | string[]
  title?: string
  description?: string
  format?: string
  enum?: unknown[]
  default?: unknown
  minimum?: number
  maximum?: number
  minItems?: number
  properties?: Record<string, JSONSchema>
  required?: string[]
  items?: JSONSchema
  additionalProperties?: boolean | JSONSchema
  examples?: unknown[]
  [key: string]: unknown
}

export interface KindFlags {
  available: boolean
  executable: boolean
  requires_imperative: boolean
  agent_like: boolean
  meta: boolean
  data: boolean
  human_in_the_loop: boolean
  network: boolean
  side_effects: boolean
  loops: boolean
  compound?: string
}

export interface KindDescription {
  kind: string
  title: string
  description: string
  category: string
  flags: KindFlags
  unavailable?: string
  handles?: string[]
  handles_from?: string
  rules?: string[]
  config_schema: JSONSchema
}
