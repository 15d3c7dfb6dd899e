import { BaseEdge, EdgeLabelRenderer, getBezierPath, type EdgeProps } from '@xyflow/react'
import { memo, type CSSProperties } from 'react'

/**
 * LabelEdge is React Flow's default (bezier) edge with its label laid out
 * as HTML above the canvas (EdgeLabelRenderer) rather than as SVG text.
 * React Flow sizes an SVG label from one getBBox() when the label changes
 * and keeps it hidden while that measure is empty; taken too early (the
 * run view sets a contract's label from the event stream, as the graph
 * lays out) it stays empty, and the label never shows (xyflow #5432). An
 * HTML label is laid out by the browser like any other text.
 */
function LabelEdge({ id, sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition, label, style, labelStyle, markerEnd, interactionWidth }: EdgeProps) {
  const [path, labelX, labelY] = getBezierPath({ sourceX, sourceY, sourcePosition, targetX, targetY, targetPosition })
  return (
    <>
      <BaseEdge id={id} path={path} style={style} markerEnd={markerEnd} interactionWidth={interactionWidth} />
      {label ? (
        <EdgeLabelRenderer>
          <div
            className="pointer-events-none absolute rounded bg-white px-1 text-[10px] leading-4 text-slate-900 dark:bg-slate-900 dark:text-slate-100"
            style={{ transform: `translate(-50%, -50%) translate(${labelX}px, ${labelY}px)`, ...(labelStyle as CSSProperties | undefined) }}
          >
            {label}
          </div>
        </EdgeLabelRenderer>
      ) : null}
    </>
  )
}

/** edgeTypes is the run view's one edge type, label (see LabelEdge). */
export const edgeTypes = { label: memo(LabelEdge) }
