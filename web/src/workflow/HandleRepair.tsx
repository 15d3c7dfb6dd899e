import { useStore, useStoreApi, useUpdateNodeInternals, type ReactFlowState } from '@xyflow/react'
import { useEffect } from 'react'

// unanchored lists the shown nodes React Flow holds without the positions
// of their handles, one id per line ('' when there are none; a string, so
// the store's equality check compares it by value).
const unanchored = (s: ReactFlowState) => {
  let ids = ''
  for (const n of s.nodeLookup.values()) {
    if (!n.hidden && !n.internals.handleBounds) ids += (ids ? '\n' : '') + n.id
  }
  return ids
}

/**
 * HandleRepair measures again the nodes React Flow left without handle
 * positions. A controlled graph whose node objects are replaced while
 * React Flow measures them (the run view redraws every node on each event
 * of the stream) can end with nodes whose size or handles it dropped while
 * their elements stay on the page; nothing measures them again while their
 * size stays the same, and every edge touching them stays undrawn, with
 * its label (xyflow #4888). A new node is measured by React Flow's own
 * observer within a frame, so only the nodes still unanchored a moment
 * later are measured here. Rendered inside the run view's <ReactFlow>; not
 * the editor's, which draws only the nodes in view (a pan would keep
 * re-measuring the ones it brings in: 59 → 39–48 fps on the 300-node
 * canvas).
 */
export function HandleRepair() {
  const ids = useStore(unanchored)
  const store = useStoreApi()
  const updateNodeInternals = useUpdateNodeInternals()
  useEffect(() => {
    if (!ids) return
    const timer = setTimeout(() => {
      const still = ids.split('\n').filter((id) => {
        const n = store.getState().nodeLookup.get(id)
        return n && !n.hidden && !n.internals.handleBounds
      })
      if (still.length) updateNodeInternals(still)
    }, 100)
    return () => clearTimeout(timer)
  }, [ids, store, updateNodeInternals])
  return null
}
