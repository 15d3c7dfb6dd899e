import { useStore, useUpdateNodeInternals, type ReactFlowState } from '@xyflow/react'
import { useEffect } from 'react'

// unanchored lists the nodes React Flow holds as measured but without the
// positions of their handles, one id per line ('' when there are none; a
// string, so the store's equality check compares it by value).
const unanchored = (s: ReactFlowState) => {
  let ids = ''
  for (const n of s.nodeLookup.values()) {
    if (!n.hidden && n.measured.width && n.measured.height && !n.internals.handleBounds) ids += (ids ? '\n' : '') + n.id
  }
  return ids
}

/**
 * HandleRepair re-measures the nodes that React Flow left with a size but
 * no handle positions. A controlled graph whose node objects are replaced
 * while React Flow measures them (the run view redraws every node on each
 * event of the stream) can end in that state, and nothing measures the
 * nodes again while their size stays the same: every edge touching them
 * stays undrawn, with its label (xyflow #4888). Rendered inside
 * <ReactFlow>.
 */
export function HandleRepair() {
  const ids = useStore(unanchored)
  const updateNodeInternals = useUpdateNodeInternals()
  useEffect(() => {
    if (ids) updateNodeInternals(ids.split('\n'))
  }, [ids, updateNodeInternals])
  return null
}
