// The workflow editor: palette, React Flow canvas, the selected node's
// config form, live problems from POST /api/workflows/check, versions and
// import/export.
import {
  addEdge,
  applyEdgeChanges,
  applyNodeChanges,
  Background,
  Controls,
  MiniMap,
  ReactFlow,
  ReactFlowProvider,
  useReactFlow,
  type Connection,
  type Edge,
  type EdgeChange,
  type NodeChange,
} from '@xyflow/react'
import '@xyflow/react/dist/style.css'
import { useCallback, useEffect, useMemo, useRef, useState, type DragEvent, type KeyboardEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { useNavigate } from 'react-router-dom'
import { api, apiFetch, apiRequest, errorOf, fetchOnce } from '../api'
import { Button, ErrorAlert, PageHeader, Section } from '../components/ui'
import { useDark } from '../theme'
import { fromFlow, toFlow, type FlowNode } from '../workflow/graph'
import { useFlowLabels } from '../workflow/flowLabels'
import { nodeTypes } from '../workflow/NodeCard'
import type { Definition, KindDescription, WorkflowNode } from '../workflow/types'
import { ConfigForm } from './ConfigForm'
import { useHistory } from './history'
import { kindMime, Palette } from './Palette'
import { Versions } from './Versions'

export interface Problem {
  node_id?: string
  edge_id?: string
  path: string
  message: string
  hint?: string
  severity: 'error' | 'warning'
}

export interface CheckResult {
  valid: boolean
  problems: Problem[]
  strategy: { detected?: string; configured?: string; error?: string }
  definition: Definition
}

interface StoredWorkflow {
  id: string
  name: string
  version: number
  definition: Definition
}

interface Snapshot {
  nodes: FlowNode[]
  edges: Edge[]
}

const checkDelay = 400

function download(name: string, type: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type }))
  const a = document.createElement('a')
  a.href = url
  a.download = name
  a.click()
  setTimeout(() => URL.revokeObjectURL(url), 1000)
}

function freshID(kind: string, taken: Set<string>): string {
  const base = kind.replace(/[^A-Za-z0-9_-]/g, '_')
  if (!taken.has(base)) return base
  for (let i = 2; ; i++) if (!taken.has(`${base}_${i}`)) return `${base}_${i}`
}

/** check posts a definition (or a file's text) to the check endpoint. */
export async function checkDefinition(body: string, contentType = 'application/json'): Promise<CheckResult> {
  return apiRequest<CheckResult>('/api/workflows/check', { method: 'POST', body, headers: { 'Content-Type': contentType } })
}

function EditorInner({ wf, kinds, reload }: { wf: StoredWorkflow; kinds: KindDescription[]; reload: () => void }) {
  const { t } = useTranslation()
  const navigate = useNavigate()
  const flow = useReactFlow<FlowNode, Edge>()
  const initial = useMemo(() => toFlow(wf.definition, kinds), [wf, kinds])
  const [nodes, setNodes] = useState<FlowNode[]>(initial.nodes)
  const [edges, setEdges] = useState<Edge[]>(initial.edges)
  const [base, setBase] = useState<Definition>(wf.definition)
  const [check, setCheck] = useState<CheckResult>()
  const [checkError, setCheckError] = useState<unknown>()
  const [error, setError] = useState<unknown>()
  // A notice is kept as its catalogue key and values, so it follows a
  // language switch.
  const [notice, setNotice] = useState<{ key: string; values: Record<string, unknown> } | null>(null)
  const history = useHistory<Snapshot>()
  const dark = useDark()
  const flowLabels = useFlowLabels()
  const clipboard = useRef<Snapshot | undefined>(undefined)
  const fileInput = useRef<HTMLInputElement>(null)
  const byKind = useMemo(() => new Map(kinds.map((k) => [k.kind, k])), [kinds])

  useEffect(() => {
    setNodes(initial.nodes)
    setEdges(initial.edges)
    setBase(wf.definition)
  }, [initial, wf])

  const definition = useCallback(() => fromFlow(base, nodes, edges), [base, nodes, edges])

  // What the check depends on: not positions, so dragging does not re-check.
  const checkKey = useMemo(
    () => JSON.stringify([base, nodes.map((n) => n.data.node), edges.map((e) => [e.id, e.source, e.target, e.sourceHandle])]),
    [base, nodes, edges],
  )
  const latest = useRef(definition)
  latest.current = definition

  // Live check, debounced: problems follow the edits without a request per keystroke.
  useEffect(() => {
    let live = true
    const timer = setTimeout(() => {
      checkDefinition(JSON.stringify(latest.current()))
        .then((r) => {
          if (!live) return
          setCheck(r)
          setCheckError(undefined)
        })
        .catch((e) => live && setCheckError(e))
    }, checkDelay)
    return () => {
      live = false
      clearTimeout(timer)
    }
  }, [checkKey])

  const problemsByNode = useMemo(() => {
    const m = new Map<string, string[]>()
    for (const p of check?.problems ?? []) {
      if (!p.node_id) continue
      if (!m.has(p.node_id)) m.set(p.node_id, [])
      m.get(p.node_id)!.push((p.severity === 'warning' ? t('studio.warningPrefix') : '') + p.message)
    }
    return m
  }, [check, t])

  // The nodes React Flow draws: the state's, with the check's problems;
  // unchanged nodes keep their identity so memoized cards do not re-render.
  const shown = useMemo(
    () =>
      nodes.map((n) => {
        const p = problemsByNode.get(n.id)
        return p ? { ...n, data: { ...n.data, problems: p } } : n
      }),
    [nodes, problemsByNode],
  )

  const snapshot = useCallback((): Snapshot => ({ nodes, edges }), [nodes, edges])
  const record = useCallback(() => history.push({ nodes, edges }), [history, nodes, edges])

  const onNodesChange = useCallback(
    (changes: NodeChange<FlowNode>[]) => {
      if (changes.some((c) => c.type === 'remove')) record()
      setNodes((ns) => applyNodeChanges(changes, ns))
    },
    [record],
  )
  const onEdgesChange = useCallback(
    (changes: EdgeChange[]) => {
      if (changes.some((c) => c.type === 'remove')) record()
      setEdges((es) => applyEdgeChanges(changes, es))
    },
    [record],
  )
  const onConnect = useCallback(
    (c: Connection) => {
      record()
      setEdges((es) => {
        const taken = new Set(es.map((e) => e.id))
        const id = freshID(`e_${c.source}_${c.target}`, taken)
        return addEdge({ ...c, id, label: c.sourceHandle || undefined }, es)
      })
    },
    [record],
  )

  const addNode = useCallback(
    (kind: string, position?: { x: number; y: number }) => {
      const k = byKind.get(kind)
      if (!k || !k.flags.available) return
      record()
      const id = freshID(kind, new Set(nodes.map((n) => n.id)))
      let pos = position
      if (!pos) {
        // Keyboard add: right of the rightmost node, so it is never hidden under another.
        const maxX = nodes.reduce((m, n) => Math.max(m, n.position.x), -240)
        pos = { x: maxX + 240, y: 0 }
      }
      const node: WorkflowNode = { id, type: kind }
      setNodes((ns) => [...ns.map((n) => (n.selected ? { ...n, selected: false } : n)), { id, type: 'workflow', position: pos!, selected: true, data: { node, kind: k } }])
    },
    [byKind, nodes, record],
  )

  const onDrop = useCallback(
    (e: DragEvent) => {
      const kind = e.dataTransfer.getData(kindMime)
      if (!kind) return
      e.preventDefault()
      addNode(kind, flow.screenToFlowPosition({ x: e.clientX, y: e.clientY }))
    },
    [addNode, flow],
  )

  const restore = (s: Snapshot | undefined) => {
    if (!s) return
    setNodes(s.nodes)
    setEdges(s.edges)
  }
  const undo = () => restore(history.undo(snapshot()))
  const redo = () => restore(history.redo(snapshot()))

  const selectedNodes = nodes.filter((n) => n.selected)
  const selectedEdges = edges.filter((e) => e.selected)
  const removeSelected = () => {
    if (selectedNodes.length === 0 && selectedEdges.length === 0) return
    record()
    const gone = new Set(selectedNodes.map((n) => n.id))
    setNodes((ns) => ns.filter((n) => !n.selected))
    setEdges((es) => es.filter((e) => !e.selected && !gone.has(e.source) && !gone.has(e.target)))
  }
  const copy = () => {
    if (selectedNodes.length === 0) return
    const ids = new Set(selectedNodes.map((n) => n.id))
    clipboard.current = { nodes: selectedNodes, edges: edges.filter((e) => ids.has(e.source) && ids.has(e.target)) }
    setNotice({ key: 'studio.copied', values: { count: selectedNodes.length } })
  }
  const paste = () => {
    const c = clipboard.current
    if (!c) return
    record()
    const taken = new Set(nodes.map((n) => n.id))
    const rename = new Map<string, string>()
    for (const n of c.nodes) {
      const id = freshID(n.data.node.type, taken)
      taken.add(id)
      rename.set(n.id, id)
    }
    const added: FlowNode[] = c.nodes.map((n) => ({
      ...n,
      id: rename.get(n.id)!,
      selected: true,
      position: { x: n.position.x + 40, y: n.position.y + 40 },
      data: { ...n.data, node: { ...n.data.node, id: rename.get(n.id)! } },
    }))
    const edgeIDs = new Set(edges.map((e) => e.id))
    const addedEdges = c.edges.map((e) => {
      const id = freshID(`e_${rename.get(e.source)}_${rename.get(e.target)}`, edgeIDs)
      edgeIDs.add(id)
      return { ...e, id, source: rename.get(e.source)!, target: rename.get(e.target)!, selected: false }
    })
    setNodes((ns) => [...ns.map((n) => ({ ...n, selected: false })), ...added])
    setEdges((es) => [...es, ...addedEdges])
  }

  const onKeyDown = (e: KeyboardEvent) => {
    const target = e.target as HTMLElement
    if (target.closest('input, textarea, select, [contenteditable="true"]')) return
    const mod = e.ctrlKey || e.metaKey
    if (!mod) return
    const key = e.key.toLowerCase()
    if (key === 'z' && !e.shiftKey) undo()
    else if ((key === 'z' && e.shiftKey) || key === 'y') redo()
    else if (key === 'c') copy()
    else if (key === 'v') paste()
    else return
    e.preventDefault()
  }

  const updateNode = (n: WorkflowNode) => {
    setNodes((ns) => ns.map((x) => (x.id === n.id ? { ...x, data: { ...x.data, node: n } } : x)))
  }
  // One undo step per field edit session, not per keystroke: record when the form gains focus.
  const onFormFocus = () => record()

  const save = async () => {
    setError(undefined)
    setNotice(null)
    try {
      const saved = await api<StoredWorkflow>(`/api/workflows/${wf.id}`, 'PUT', definition())
      setNotice({ key: 'studio.saved', values: { n: saved.version } })
      reload()
    } catch (e) {
      setError(e)
    }
  }
  const run = async () => {
    setError(undefined)
    try {
      const r = await api<{ id: string }>(`/api/workflows/${wf.id}/runs`, 'POST', { input: '' })
      navigate(`/runs/${r.id}`)
    } catch (e) {
      setError(e)
    }
  }
  const exportJSON = () => download(`${base.name || 'workflow'}.json`, 'application/json', JSON.stringify(definition(), null, 2) + '\n')
  const exportYAML = async () => {
    setError(undefined)
    try {
      const resp = await apiFetch('/api/workflows/yaml', { method: 'POST', body: JSON.stringify(definition()), headers: { 'Content-Type': 'application/json' } })
      if (!resp.ok) throw await errorOf(resp)
      download(`${base.name || 'workflow'}.yaml`, 'application/yaml', await resp.text())
    } catch (e) {
      setError(e)
    }
  }
  const importFile = async (file: File) => {
    setError(undefined)
    setNotice(null)
    try {
      const text = await file.text()
      const yaml = /\.ya?ml$/i.test(file.name) || !text.trim().startsWith('{')
      const r = await checkDefinition(text, yaml ? 'application/yaml' : 'application/json')
      record()
      const f = toFlow(r.definition, kinds)
      setNodes(f.nodes)
      setEdges(f.edges)
      setBase({ ...r.definition, nodes: [], edges: [] })
      setNotice({ key: 'studio.imported', values: { name: file.name } })
    } catch (e) {
      setError(new Error(t('studio.importFailed', { name: file.name, message: (e as Error).message })))
    }
  }

  const selected = selectedNodes.length === 1 ? selectedNodes[0] : undefined
  const unplaced = (check?.problems ?? []).filter((p) => !p.node_id)
  const strategy = check?.strategy

  return (
    <div className="flex h-[calc(100vh-6rem)] flex-col p-4" onKeyDown={onKeyDown}>
      <PageHeader title={t('studio.editorTitle', { name: base.name })}>
        <Button onClick={undo} disabled={!history.canUndo} aria-keyshortcuts="Control+Z">
          {t('studio.undo')}
        </Button>
        <Button onClick={redo} disabled={!history.canRedo} aria-keyshortcuts="Control+Shift+Z">
          {t('studio.redo')}
        </Button>
        <Button onClick={copy} disabled={selectedNodes.length === 0} aria-keyshortcuts="Control+C">
          {t('studio.copy')}
        </Button>
        <Button onClick={paste} aria-keyshortcuts="Control+V">
          {t('studio.paste')}
        </Button>
        <Button onClick={removeSelected} disabled={selectedNodes.length + selectedEdges.length === 0} aria-keyshortcuts="Delete">
          {t('studio.delete')}
        </Button>
        <Button onClick={exportJSON}>{t('studio.exportJSON')}</Button>
        <Button onClick={exportYAML}>{t('studio.exportYAML')}</Button>
        <Button onClick={() => fileInput.current?.click()}>{t('studio.import')}</Button>
        <input
          ref={fileInput}
          type="file"
          accept=".json,.yaml,.yml,application/json,application/yaml"
          aria-label={t('studio.importFile')}
          className="sr-only"
          tabIndex={-1}
          onChange={(e) => {
            const f = e.target.files?.[0]
            e.target.value = ''
            if (f) void importFile(f)
          }}
        />
        <Button onClick={run}>{t('studio.run')}</Button>
        <Button variant="primary" onClick={save}>
          {t('studio.save')}
        </Button>
      </PageHeader>
      <ErrorAlert error={error} />
      <p role="status" className="mb-1 text-sm text-slate-700 dark:text-slate-300">
        {notice && t(notice.key, notice.values)}
      </p>
      <div className="flex min-h-0 flex-1 border border-slate-200 dark:border-slate-700">
        <Palette kinds={kinds} onAdd={(k) => addNode(k)} />
        <div
          className="min-w-0 flex-1"
          role="region"
          aria-label={t('studio.canvas')}
          onDragOver={(e) => {
            if (e.dataTransfer.types.includes(kindMime)) {
              e.preventDefault()
              e.dataTransfer.dropEffect = 'copy'
            }
          }}
          onDrop={onDrop}
        >
          <ReactFlow<FlowNode, Edge>
            nodes={shown}
            edges={edges}
            nodeTypes={nodeTypes}
            onNodesChange={onNodesChange}
            onEdgesChange={onEdgesChange}
            onConnect={onConnect}
            onNodeDragStart={record}
            deleteKeyCode={['Delete', 'Backspace']}
            onlyRenderVisibleElements
            fitView
            minZoom={0.1}
            colorMode={dark ? 'dark' : 'light'}
            ariaLabelConfig={flowLabels}
          >
            <Background />
            <Controls />
            <MiniMap pannable zoomable ariaLabel={t('studio.minimap')} />
          </ReactFlow>
        </div>
        <aside aria-label={t('studio.inspector')} className="w-80 shrink-0 overflow-y-auto border-l border-slate-200 p-3 dark:border-slate-700" onFocus={onFormFocus}>
          <Section title={t('studio.strategy.title')}>
            <p className="text-sm">
              {strategy?.detected
                ? t('studio.strategy.detected', { name: t('studio.strategy.' + strategy.detected, { defaultValue: strategy.detected }) })
                : strategy?.error
                  ? t('studio.strategy.none', { message: strategy.error })
                  : t('studio.checking')}
            </p>
            {strategy?.configured && <p className="text-sm">{t('studio.strategy.configured', { name: strategy.configured })}</p>}
          </Section>
          <Section title={t('studio.problems.title')}>
            <ErrorAlert error={checkError} />
            {check && check.problems.length === 0 && <p className="text-sm">{t('studio.problems.none')}</p>}
            {check && check.problems.length > 0 && (
              <ul aria-label={t('studio.problems.list')} className="text-sm">
                {check.problems.map((p, i) => (
                  <li key={i} className="mb-1">
                    <span className={p.severity === 'error' ? 'font-semibold text-red-700 dark:text-red-300' : 'font-semibold text-amber-800 dark:text-amber-300'}>
                      {t('studio.problems.' + p.severity)}
                    </span>{' '}
                    {p.node_id ? (
                      <button
                        type="button"
                        className="underline"
                        onClick={() => setNodes((ns) => ns.map((n) => ({ ...n, selected: n.id === p.node_id })))}
                      >
                        {p.node_id}
                      </button>
                    ) : (
                      <code>{p.edge_id ?? p.path}</code>
                    )}
                    {': '}
                    {p.message}
                    {p.hint && <span className="block text-xs text-slate-600 dark:text-slate-400">{p.hint}</span>}
                  </li>
                ))}
              </ul>
            )}
            {unplaced.length > 0 && <p className="sr-only">{t('studio.problems.unplaced', { count: unplaced.length })}</p>}
          </Section>
          <Section title={t('studio.node')}>
            {selected ? (
              <ConfigForm key={selected.id} node={selected.data.node} kind={byKind.get(selected.data.node.type)} onChange={updateNode} />
            ) : (
              <p className="text-sm text-slate-600 dark:text-slate-400">{t('studio.selectNode')}</p>
            )}
          </Section>
          <Section title={t('studio.versions.title')}>
            <Versions id={wf.id} current={wf.version} onRestored={reload} />
          </Section>
        </aside>
      </div>
    </div>
  )
}

/** Editor loads a workflow and the node kinds, then edits it. */
export function Editor({ id }: { id: string }) {
  const { t } = useTranslation()
  const [wf, setWf] = useState<StoredWorkflow>()
  const [kinds, setKinds] = useState<KindDescription[]>()
  const [error, setError] = useState<unknown>()
  const [tick, setTick] = useState(0)
  useEffect(() => {
    let live = true
    Promise.all([fetchOnce<StoredWorkflow>(`/api/workflows/${id}`), kinds ? Promise.resolve({ kinds }) : fetchOnce<{ kinds: KindDescription[] }>('/api/node-kinds')])
      .then(([w, k]) => {
        if (!live) return
        setWf(w)
        setKinds(k.kinds)
      })
      .catch((e) => live && setError(e))
    return () => {
      live = false
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [id, tick])
  if (error) return <ErrorAlert error={error} />
  if (!wf || !kinds) return <p role="status">{t('studio.loading')}</p>
  return (
    <ReactFlowProvider>
      <EditorInner wf={wf} kinds={kinds} reload={() => setTick((n) => n + 1)} />
    </ReactFlowProvider>
  )
}
