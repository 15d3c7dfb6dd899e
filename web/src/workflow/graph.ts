// Between a workflow definition and React Flow's nodes and edges: the
// canvas edits the latter and saves the former; the run view draws the
// same graph and colours it.
import type { Edge, Node } from '@xyflow/react'
import type { Definition, KindDescription, WorkflowNode } from './types'

/** NodeData is what a canvas node carries: the workflow node and its kind. */
export interface NodeData extends Record<string, unknown> {
  node: WorkflowNode
  kind?: KindDescription
  /** problems are the validation and lint messages naming this node (canvas). */
  problems?: string[]
  /** status is the node's state in a run (run view): pending, running, done, failed, skipped, waiting, reused. */
  status?: string
  /** detail is a short line under the name, such as tokens and cost in a run. */
  detail?: string
}

export type FlowNode = Node<NodeData, 'workflow'>

// Spacing of the automatic layout, in canvas pixels.
const columnWidth = 240
const rowHeight = 120

/**
 * layout places the nodes that have no position: by their depth from the
 * nodes nothing points at (longest path, so a node sits right of every
 * node feeding it), one column per depth. Nodes with a position keep it.
 */
export function layout(def: Definition): Map<string, { x: number; y: number }> {
  const incoming = new Map<string, string[]>()
  for (const n of def.nodes) incoming.set(n.id, [])
  for (const e of def.edges) incoming.get(e.target)?.push(e.source)
  const depth = new Map<string, number>()
  const visiting = new Set<string>()
  const depthOf = (id: string): number => {
    const known = depth.get(id)
    if (known !== undefined) return known
    if (visiting.has(id)) return 0 // a loop's back edge
    visiting.add(id)
    let d = 0
    for (const p of incoming.get(id) ?? []) d = Math.max(d, depthOf(p) + 1)
    visiting.delete(id)
    depth.set(id, d)
    return d
  }
  const rows = new Map<number, number>()
  const out = new Map<string, { x: number; y: number }>()
  for (const n of def.nodes) {
    if (n.position) {
      out.set(n.id, n.position)
      continue
    }
    const d = depthOf(n.id)
    const r = rows.get(d) ?? 0
    rows.set(d, r + 1)
    out.set(n.id, { x: d * columnWidth, y: r * rowHeight })
  }
  return out
}

/** cardWidth and cardHeight are a NodeCard's size before it is measured, in px. */
const cardWidth = 160
const cardHeight = 56

/** toFlow turns a definition into React Flow nodes and edges. */
export function toFlow(def: Definition, kinds: KindDescription[]): { nodes: FlowNode[]; edges: Edge[] } {
  const byKind = new Map(kinds.map((k) => [k.kind, k]))
  const pos = layout(def)
  const nodes: FlowNode[] = def.nodes.map((n) => ({
    id: n.id,
    type: 'workflow',
    position: pos.get(n.id) ?? { x: 0, y: 0 },
    // A card's usual size (NodeCard: min-w-40, two lines): React Flow
    // shows a node, and fits the view, only once it knows its size, so
    // with these the first render already draws the graph instead of
    // waiting a frame for every card to be measured (which then refines
    // them).
    initialWidth: cardWidth,
    initialHeight: cardHeight,
    data: { node: n, kind: byKind.get(n.type) },
  }))
  const edges: Edge[] = def.edges.map((e) => ({
    id: e.id,
    source: e.source,
    target: e.target,
    sourceHandle: e.sourceHandle || null,
    label: e.sourceHandle || undefined,
  }))
  return { nodes, edges }
}

/** fromFlow turns the canvas back into a definition, keeping base's other fields. */
export function fromFlow(base: Definition, nodes: FlowNode[], edges: Edge[]): Definition {
  return {
    ...base,
    nodes: nodes.map((n) => {
      const out: WorkflowNode = { ...n.data.node, id: n.id, position: { x: Math.round(n.position.x), y: Math.round(n.position.y) } }
      if (!out.name) delete out.name
      if (!out.config || Object.keys(out.config).length === 0) delete out.config
      return out
    }),
    edges: edges.map((e) => (e.sourceHandle ? { id: e.id, source: e.source, target: e.target, sourceHandle: e.sourceHandle } : { id: e.id, source: e.source, target: e.target })),
  }
}

/**
 * outputHandles are the sourceHandle values a node's outgoing edges may
 * use: the kind's fixed ones, or (router) the names in its config. Empty
 * means one unnamed output.
 */
export function outputHandles(node: WorkflowNode, kind?: KindDescription): string[] {
  if (!kind) return []
  if (kind.handles?.length) return kind.handles
  if (kind.handles_from) {
    // "routes[].name": the name of each element of config.routes.
    const m = /^(\w+)\[\]\.(\w+)$/.exec(kind.handles_from)
    const list = m ? node.config?.[m[1]] : undefined
    if (Array.isArray(list)) return list.map((r) => (r && typeof r === 'object' ? String((r as Record<string, unknown>)[m![2]] ?? '') : '')).filter(Boolean)
  }
  return []
}

/** hasInput says whether a node of this kind takes incoming edges (start does not). */
export function hasInput(node: WorkflowNode): boolean {
  return node.type !== 'start'
}

/** hasOutput says whether a node of this kind has outgoing edges (end does not). */
export function hasOutput(node: WorkflowNode): boolean {
  return node.type !== 'end'
}
