// A line diff of two texts (longest common subsequence), for comparing two
// versions of a workflow as pretty-printed JSON.

export interface DiffLine {
  op: ' ' | '+' | '-'
  text: string
}

export function diffLines(a: string, b: string): DiffLine[] {
  const x = a.split('\n')
  const y = b.split('\n')
  const n = x.length
  const m = y.length
  // lcs[i][j] = length of the LCS of x[i:] and y[j:].
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1))
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1])
  const out: DiffLine[] = []
  let i = 0
  let j = 0
  while (i < n && j < m) {
    if (x[i] === y[j]) {
      out.push({ op: ' ', text: x[i] })
      i++
      j++
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) out.push({ op: '-', text: x[i++] })
    else out.push({ op: '+', text: y[j++] })
  }
  while (i < n) out.push({ op: '-', text: x[i++] })
  while (j < m) out.push({ op: '+', text: y[j++] })
  return out
}

/** pretty prints a definition for diffing, without canvas positions (moving a node is not a change worth reading). */
export function pretty(def: unknown): string {
  return JSON.stringify(def, (k, v) => (k === 'position' ? undefined : v), 2)
}
