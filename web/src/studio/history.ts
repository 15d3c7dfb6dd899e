// Undo and redo of the canvas: snapshots of nodes and edges taken before
// each edit. Snapshots are cheap (React Flow state is immutable), so an
// edit stores references, not copies.
import { useCallback, useRef, useState } from 'react'

const limit = 100

export interface History<S> {
  /** push records the state before an edit and clears redo. */
  push: (s: S) => void
  /** undo returns the state to go back to, given the current one. */
  undo: (current: S) => S | undefined
  redo: (current: S) => S | undefined
  canUndo: boolean
  canRedo: boolean
}

export function useHistory<S>(): History<S> {
  const past = useRef<S[]>([])
  const future = useRef<S[]>([])
  const [, setTick] = useState(0)
  const bump = () => setTick((n) => n + 1)
  const push = useCallback((s: S) => {
    past.current.push(s)
    if (past.current.length > limit) past.current.shift()
    future.current = []
    bump()
  }, [])
  const undo = useCallback((current: S) => {
    const s = past.current.pop()
    if (s === undefined) return undefined
    future.current.push(current)
    bump()
    return s
  }, [])
  const redo = useCallback((current: S) => {
    const s = future.current.pop()
    if (s === undefined) return undefined
    past.current.push(current)
    bump()
    return s
  }, [])
  return { push, undo, redo, canUndo: past.current.length > 0, canRedo: future.current.length > 0 }
}
