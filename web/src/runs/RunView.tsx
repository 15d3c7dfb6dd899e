import '@xyflow/react/dist/style.css'
import { Background, Controls, ReactFlow, useNodesState, type Edge } from '@xyflow/react'
import { useCallback, useEffect, useMemo, useRef, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Link, useNavigate, useParams } from 'react-router-dom'
import { api } from '../api'
import { Button, ErrorAlert, Field, PageHeader, Section, Select } from '../components/ui'
import { toFlow, type FlowNode } from '../workflow/graph'
import { useFlowLabels } from '../workflow/flowLabels'
import { HandleRepair } from '../workflow/HandleRepair'
import { edgeTypes } from '../workflow/LabelEdge'
import { nodeTypes } from '../workflow/NodeCard'
import type { KindDescription } from '../workflow/types'
import { formatDuration, formatNumber, formatTime, pretty, runDurationMs } from './format'
import { HumanForm } from './HumanForm'
import { RunStatusBadge } from './RunStatusBadge'
import { readEvents } from './sse'
import { apply, emptyState, statusOf, type RunState } from './state'
import { final, type Checkpoint, type RunWithCheckpoints } from './types'
import { useDark } from '../theme'

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms)
    signal.addEventListener('abort', () => {
      clearTimeout(t)
      resolve()
    })
  })

const pre = 'max-h-64 overflow-auto whitespace-pre-wrap break-words rounded bg-slate-100 p-2 font-mono text-xs dark:bg-slate-800'

/**
 * RunView is /runs/<id>: the run's workflow (the definition of the
 * version it ran) drawn read-only, its nodes coloured live from the event
 * stream, the clicked node's input, output and tokens, a waiting human
 * node's form, cancel, and re-run from a node.
 */
export default function RunView() {
  const { id = '' } = useParams()
  const { t, i18n } = useTranslation()
  const navigate = useNavigate()
  const dark = useDark()
  const flowLabels = useFlowLabels()
  const [run, setRun] = useState<RunWithCheckpoints>()
  const [loadError, setLoadError] = useState<unknown>()
  const [actionError, setActionError] = useState<unknown>()
  const [kinds, setKinds] = useState<KindDescription[]>([])
  const [state, setState] = useState<RunState>(emptyState)
  const [selected, setSelected] = useState<string>()
  const [streamTick, setStreamTick] = useState(0)
  const [busy, setBusy] = useState(false)
  const lastSeq = useRef(0)

  const loadRun = useCallback(async () => {
    const r = await api<RunWithCheckpoints>(`/api/runs/${encodeURIComponent(id)}?limit=1000`)
    setRun(r)
    return r
  }, [id])

  useEffect(() => {
    api<{ kinds: KindDescription[] }>('/api/node-kinds')
      .then((r) => setKinds(r.kinds))
      .catch(() => setKinds([])) // the graph still draws, with kind ids for titles
  }, [])

  // The stream: replay from the last event seen, follow it live, and
  // reconnect while the run is live; a waiting run's stream ends and is
  // reopened after it is resumed (streamTick).
  useEffect(() => {
    const ac = new AbortController()
    ;(async () => {
      for (let attempt = 0; !ac.signal.aborted; attempt++) {
        try {
          lastSeq.current = await readEvents(
            id,
            lastSeq.current,
            (ev) =>
              setState((s) => {
                const n = apply(s, ev)
                lastSeq.current = n.lastSeq
                return n
              }),
            ac.signal,
          )
          const r = await loadRun()
          setLoadError(undefined)
          if (final(r.status) || r.status === 'waiting') return
          await sleep(300, ac.signal)
        } catch (e) {
          if (ac.signal.aborted) return
          setLoadError(e)
          await sleep(Math.min(5000, 500 * (attempt + 1)), ac.signal)
        }
      }
    })()
    return () => ac.abort()
  }, [id, streamTick, loadRun])

  useEffect(() => {
    loadRun().catch(setLoadError)
  }, [loadRun])

  const saved = useMemo(() => {
    const m = new Map<string, Checkpoint>()
    for (const c of run?.checkpoints ?? []) if (!m.has(c.node_id)) m.set(c.node_id, c)
    return m
  }, [run])

  // The definition of a run never changes: the graph is built once per
  // run (and kinds), not on every reload of the run.
  const definition = run?.definition
  const defKey = run ? run.id : ''
  const base = useMemo(() => (definition ? toFlow(definition, kinds) : { nodes: [] as FlowNode[], edges: [] as Edge[] }), [defKey, kinds])
  // React Flow keeps each node's measured size on the node objects
  // (onNodesChange); a node handed over without it is hidden until measured
  // again (and may lose its handles' positions: see HandleRepair), so the
  // live statuses decorate these, not fresh ones.
  const [flowNodes, setFlowNodes, onNodesChange] = useNodesState<FlowNode>([])
  useEffect(() => setFlowNodes(base.nodes), [base, setFlowNodes])
  const onNodeClick = useCallback((_: unknown, n: FlowNode) => setSelected(n.id), [])
  const onPaneClick = useCallback(() => setSelected(undefined), [])

  const nodes: FlowNode[] = useMemo(
    () =>
      flowNodes.map((n) => {
        const nr = state.nodes[n.id]
        const u = nr?.usage
        const details: string[] = []
        if (nr?.durationMs !== undefined) details.push(formatDuration(nr.durationMs, i18n.language))
        if (u) details.push(t('runs.tokens', { count: u.input_tokens + u.output_tokens, formatted: formatNumber(u.input_tokens + u.output_tokens, i18n.language) }))
        return { ...n, selected: n.id === selected, data: { ...n.data, status: statusOf(state, n.id, saved), detail: details.join(' · ') || undefined } }
      }),
    [flowNodes, state, saved, selected, t, i18n.language],
  )

  const edges: Edge[] = useMemo(
    () =>
      base.edges.map((e) => {
        const c = state.nodes[e.source]?.contract
        const label = c ? [e.label, t('runs.contractLabel', { status: t('runs.contract.' + c, { defaultValue: c }) })].filter(Boolean).join(' · ') : e.label
        const tone = c === 'failed' ? '#dc2626' : c === 'normalized' ? '#d97706' : c ? '#059669' : undefined
        return {
          ...e,
          type: 'label',
          label,
          animated: statusOf(state, e.target, saved) === 'running',
          style: tone ? { stroke: tone, strokeWidth: 2 } : undefined,
          labelStyle: tone ? { fontWeight: 600 } : undefined,
        }
      }),
    [base, state, saved, t],
  )

  const act = async (f: () => Promise<void>) => {
    setBusy(true)
    setActionError(undefined)
    try {
      await f()
    } catch (e) {
      setActionError(e)
    } finally {
      setBusy(false)
    }
  }
  const cancel = () =>
    act(async () => {
      await api(`/api/runs/${encodeURIComponent(id)}/cancel`, 'POST')
      await loadRun()
      setStreamTick((n) => n + 1)
    })
  const resume = async (input: unknown) => {
    await api(`/api/runs/${encodeURIComponent(id)}/resume`, 'POST', { input })
    await loadRun()
    setStreamTick((n) => n + 1)
  }
  const rerun = (from: string) =>
    act(async () => {
      const r = await api<{ id: string }>(`/api/runs/${encodeURIComponent(id)}/rerun?from=${encodeURIComponent(from)}`, 'POST')
      navigate(`/runs/${encodeURIComponent(r.id)}`)
    })

  if (!run) {
    return (
      <div className="p-6">
        <PageHeader title={t('runs.runTitle', { id })} />
        {loadError ? <ErrorAlert error={loadError} /> : <p role="status">{t('app.loading')}</p>}
      </div>
    )
  }

  const waitingNode = run.status === 'waiting' ? run.waiting_node : undefined
  const wait = waitingNode ? state.nodes[waitingNode]?.wait : undefined
  const total = Object.values(state.nodes).reduce((a, n) => a + (n.usage ? n.usage.input_tokens + n.usage.output_tokens : 0), 0)
  const sel = selected ? run.definition.nodes.find((n) => n.id === selected) : undefined
  const nameOf = (nid: string) => run.definition.nodes.find((n) => n.id === nid)?.name || nid

  return (
    <div className="flex h-full flex-col p-6">
      <PageHeader title={t('runs.runTitle', { id: run.id.slice(0, 12) })}>
        <RunStatusBadge status={run.status} />
        {run.workflow_id && (
          <Link className="text-sm text-indigo-700 underline dark:text-indigo-300" to={`/studio/${encodeURIComponent(run.workflow_id)}`}>
            {t('runs.openWorkflow', { name: run.definition.name })}
          </Link>
        )}
        <Link className="text-sm text-indigo-700 underline dark:text-indigo-300" to="/runs">
          {t('runs.backToList')}
        </Link>
        {!final(run.status) && (
          <Button variant="danger" onClick={cancel} disabled={busy}>
            {t('runs.cancel')}
          </Button>
        )}
      </PageHeader>
      <dl className="mb-3 flex flex-wrap gap-x-6 gap-y-1 text-sm">
        <div>
          <dt className="inline font-medium">{t('runs.workflow')}: </dt>
          <dd className="inline">
            {run.definition.name}
            {run.workflow_version ? ' ' + t('runs.version', { version: run.workflow_version }) : ''}
          </dd>
        </div>
        <div>
          <dt className="inline font-medium">{t('runs.started')}: </dt>
          <dd className="inline">{formatTime(run.created_at, i18n.language)}</dd>
        </div>
        <div>
          <dt className="inline font-medium">{t('runs.duration')}: </dt>
          <dd className="inline">{run.finished_at ? formatDuration(runDurationMs(run.created_at, run.finished_at), i18n.language) : t('runs.notFinished')}</dd>
        </div>
        <div>
          <dt className="inline font-medium">{t('runs.totalTokens')}: </dt>
          <dd className="inline">
            {formatNumber(total, i18n.language)} <span className="text-slate-600 dark:text-slate-400">({t('runs.noPrices')})</span>
          </dd>
        </div>
      </dl>
      {run.error && (
        <p role="alert" className="mb-3 rounded border border-red-300 bg-red-50 p-2 text-sm text-red-800 dark:border-red-700 dark:bg-red-950 dark:text-red-200">
          {t('runs.runError', { message: run.error })}
        </p>
      )}
      <ErrorAlert error={actionError ?? loadError} />
      <div className="flex min-h-0 flex-1 gap-4">
        <section aria-label={t('runs.graph')} className="h-[560px] min-w-0 flex-1 rounded border border-slate-200 dark:border-slate-700">
          {/* Drawn once the nodes are known, so fitView frames them. */}
          {nodes.length > 0 && (
          <ReactFlow
            nodes={nodes}
            edges={edges}
            nodeTypes={nodeTypes}
            edgeTypes={edgeTypes}
            onNodesChange={onNodesChange}
            colorMode={dark ? 'dark' : 'light'}
            nodesDraggable={false}
            nodesConnectable={false}
            edgesFocusable={false}
            elementsSelectable
            onNodeClick={onNodeClick}
            onPaneClick={onPaneClick}
            fitView
            fitViewOptions={{ padding: 0.1, minZoom: 0.4, maxZoom: 1 }}
            minZoom={0.3}
            proOptions={{ hideAttribution: true }}
            ariaLabelConfig={flowLabels}
          >
            <Background />
            <Controls showInteractive={false} />
            <HandleRepair />
          </ReactFlow>
          )}
        </section>
        <aside aria-label={t('runs.details')} className="w-80 shrink-0 overflow-auto">
          <Field label={t('runs.nodePicker')}>
            {(fid) => (
              <Select id={fid} value={selected ?? ''} onChange={(e) => setSelected(e.target.value || undefined)}>
                <option value="">{t('runs.noNode')}</option>
                {run.definition.nodes.map((n) => (
                  <option key={n.id} value={n.id}>
                    {n.name || n.id}
                  </option>
                ))}
              </Select>
            )}
          </Field>
          {waitingNode && (
            <Section title={t('runs.form.heading', { name: nameOf(waitingNode) })}>
              {wait ? <HumanForm wait={wait} onSubmit={resume} /> : <p role="status">{t('app.loading')}</p>}
            </Section>
          )}
          {sel ? (
            <NodePanel
              name={sel.name || sel.id}
              status={statusOf(state, sel.id, saved)}
              nodeRun={state.nodes[sel.id]}
              saved={saved.get(sel.id)}
              input={sel.type === 'start' ? run.input : inputOf(sel.id, run, state, saved)}
              inputFrom={run.definition.edges.filter((e) => e.target === sel.id).map((e) => nameOf(e.source))}
              onRerun={sel.type === 'start' || sel.type === 'end' ? undefined : () => rerun(sel.id)}
              busy={busy}
            />
          ) : (
            <p className="mb-3 text-sm text-slate-600 dark:text-slate-400">{t('runs.pickNode')}</p>
          )}
          {final(run.status) && run.output !== undefined && (
            <Section title={t('runs.output')}>
              <pre className={pre}>{pretty(run.output)}</pre>
            </Section>
          )}
        </aside>
      </div>
    </div>
  )
}

/** inputOf is what a node was given: the outputs of the nodes feeding it (one, or each by name). */
function inputOf(nodeID: string, run: RunWithCheckpoints, state: RunState, saved: Map<string, Checkpoint>): unknown {
  const outs = run.definition.edges
    .filter((e) => e.target === nodeID)
    .map((e) => {
      const src = run.definition.nodes.find((n) => n.id === e.source)
      const o = src?.type === 'start' ? run.input : (state.nodes[e.source]?.output ?? saved.get(e.source)?.output)
      return [e.source, o] as const
    })
    .filter(([, o]) => o !== undefined)
  if (outs.length === 0) return undefined
  if (outs.length === 1) return outs[0][1]
  return Object.fromEntries(outs)
}

function NodePanel(props: {
  name: string
  status: string
  nodeRun?: import('./state').NodeRun
  saved?: Checkpoint
  input: unknown
  inputFrom: string[]
  onRerun?: () => void
  busy: boolean
}) {
  const { t, i18n } = useTranslation()
  const { nodeRun: nr } = props
  const output = nr?.output ?? props.saved?.output ?? (nr?.text || undefined)
  return (
    <Section title={t('runs.nodeHeading', { name: props.name })}>
      <dl className="mb-3 grid grid-cols-[auto_1fr] gap-x-3 gap-y-1 text-sm">
        <dt className="font-medium">{t('runs.statusHead')}</dt>
        <dd>{t('workflow.status.' + props.status, { defaultValue: props.status })}</dd>
        {nr?.durationMs !== undefined && (
          <>
            <dt className="font-medium">{t('runs.duration')}</dt>
            <dd>{formatDuration(nr.durationMs, i18n.language)}</dd>
          </>
        )}
        {nr?.usage && (
          <>
            <dt className="font-medium">{t('runs.tokensHead')}</dt>
            <dd>
              {t('runs.tokenSplit', { input: formatNumber(nr.usage.input_tokens, i18n.language), output: formatNumber(nr.usage.output_tokens, i18n.language) })}
            </dd>
          </>
        )}
        {nr?.contract && (
          <>
            <dt className="font-medium">{t('runs.contractHead')}</dt>
            <dd>{t('runs.contract.' + nr.contract, { defaultValue: nr.contract })}</dd>
          </>
        )}
      </dl>
      {nr?.error && (
        <p role="alert" className="mb-3 text-sm text-red-800 dark:text-red-200">
          {nr.error}
        </p>
      )}
      <h3 className="mb-1 text-sm font-medium">{props.inputFrom.length ? t('runs.inputFrom', { from: props.inputFrom.join(', ') }) : t('runs.input')}</h3>
      {props.input === undefined ? <p className="mb-3 text-sm text-slate-600 dark:text-slate-400">{t('runs.nothingYet')}</p> : <pre aria-label={t('runs.input')} className={pre + ' mb-3'}>{pretty(props.input)}</pre>}
      <h3 className="mb-1 text-sm font-medium">{t('runs.output')}</h3>
      {output === undefined ? <p className="mb-3 text-sm text-slate-600 dark:text-slate-400">{t('runs.nothingYet')}</p> : <pre aria-label={t('runs.output')} className={pre + ' mb-3'}>{pretty(output)}</pre>}
      {props.onRerun && (
        <Button onClick={props.onRerun} disabled={props.busy}>
          {t('runs.rerunFrom')}
        </Button>
      )}
    </Section>
  )
}
