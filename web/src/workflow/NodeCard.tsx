import { Handle, Position, type NodeProps } from '@xyflow/react'
import { memo } from 'react'
import { useTranslation } from 'react-i18next'
import { hasInput, hasOutput, outputHandles, type FlowNode } from './graph'
import { kindTitle } from './kinds'

// Colours of a node's run status; the text of the status is shown too, so
// colour is never the only sign.
const statusClass: Record<string, string> = {
  running: 'border-sky-500 ring-2 ring-sky-300 dark:ring-sky-700',
  done: 'border-emerald-600',
  reused: 'border-emerald-600 border-dashed',
  failed: 'border-red-600',
  waiting: 'border-amber-500 ring-2 ring-amber-300 dark:ring-amber-700',
  skipped: 'border-slate-400 opacity-60',
}

/**
 * NodeCard draws one workflow node on the canvas and in the run view: its
 * name, its kind, its problems (canvas) or status (run), and one handle per
 * output the kind has. It is a group named by the node, so tests and
 * screen readers find it by role and name.
 */
function NodeCardImpl({ data, selected }: NodeProps<FlowNode>) {
  const { t } = useTranslation()
  const { node, kind, problems, status, detail } = data
  const outs = outputHandles(node, kind)
  const label = node.name || node.id
  const border = problems?.length ? 'border-red-600' : status ? (statusClass[status] ?? 'border-slate-300') : 'border-slate-300 dark:border-slate-600'
  return (
    <div
      role="group"
      aria-label={t('workflow.nodeLabel', { name: label, kind: kindTitle(t, kind, node.type) })}
      className={`min-w-40 max-w-56 rounded-md border-2 bg-white px-3 py-2 text-xs text-slate-900 shadow-sm dark:bg-slate-900 dark:text-slate-100 ${border} ${selected ? 'outline outline-2 outline-indigo-500' : ''}`}
    >
      {hasInput(node) && <Handle type="target" position={Position.Left} role="button" aria-label={t('workflow.input')} />}
      <div className="truncate text-sm font-semibold">{label}</div>
      <div className="text-slate-600 dark:text-slate-400">{kindTitle(t, kind, node.type)}</div>
      {status && <div className="mt-1 font-medium">{t('workflow.status.' + status, { defaultValue: status })}</div>}
      {detail && <div className="mt-1 text-slate-600 dark:text-slate-400">{detail}</div>}
      {problems && problems.length > 0 && (
        <ul className="mt-1 list-disc pl-4 text-red-700 dark:text-red-300">
          {problems.map((p, i) => (
            <li key={i}>{p}</li>
          ))}
        </ul>
      )}
      {hasOutput(node) && outs.length === 0 && <Handle type="source" position={Position.Right} role="button" aria-label={t('workflow.output')} />}
      {outs.map((h, i) => (
        <Handle
          key={h}
          id={h}
          role="button"
          type="source"
          position={Position.Right}
          style={{ top: `${((i + 1) * 100) / (outs.length + 1)}%` }}
          aria-label={t('workflow.outputNamed', { name: h })}
          title={h}
        />
      ))}
    </div>
  )
}

export const NodeCard = memo(NodeCardImpl)

/** nodeTypes is the one custom node type of both canvases. */
export const nodeTypes = { workflow: NodeCard }
