package workflow

import "slices"

// graph is the node/edge structure of a definition with the broken parts
// left out: edges whose ends are missing, and nodes whose id repeats an
// earlier one (those are reported separately). Nodes are identified by their
// index in Definition.Nodes.
type graph struct {
	index map[string]int // node id → index of its first occurrence
	succ  [][]int        // successors by node index
	pred  [][]int        // predecessors by node index
	outs  [][]int        // outgoing edge indexes by node index
}

func newGraph(def *Definition) *graph {
	g := &graph{
		index: make(map[string]int, len(def.Nodes)),
		succ:  make([][]int, len(def.Nodes)),
		pred:  make([][]int, len(def.Nodes)),
		outs:  make([][]int, len(def.Nodes)),
	}
	for i, n := range def.Nodes {
		if _, dup := g.index[n.ID]; !dup && n.ID != "" {
			g.index[n.ID] = i
		}
	}
	for ei, e := range def.Edges {
		s, okS := g.index[e.Source]
		t, okT := g.index[e.Target]
		if !okS || !okT {
			continue
		}
		g.succ[s] = append(g.succ[s], t)
		g.pred[t] = append(g.pred[t], s)
		g.outs[s] = append(g.outs[s], ei)
	}
	return g
}

// reach marks every node reachable from the given nodes along next,
// the given nodes included.
func reach(next [][]int, from ...int) []bool {
	seen := make([]bool, len(next))
	stack := append([]int(nil), from...)
	for _, f := range from {
		seen[f] = true
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, m := range next[n] {
			if !seen[m] {
				seen[m] = true
				stack = append(stack, m)
			}
		}
	}
	return seen
}

// cycles returns the strongly connected components that contain a cycle,
// among the nodes for which keep is true, each sorted by index. It is
// Tarjan's algorithm, iterative so that a long chain cannot exhaust the stack.
func cycles(succ [][]int, keep func(int) bool) [][]int {
	n := len(succ)
	index := make([]int, n)
	low := make([]int, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	var out [][]int
	next := 0
	type frame struct{ v, i int }
	for root := range n {
		if index[root] >= 0 || !keep(root) {
			continue
		}
		call := []frame{{root, 0}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			v := f.v
			if f.i < len(succ[v]) {
				w := succ[v][f.i]
				f.i++
				if !keep(w) {
					continue
				}
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{w, 0})
				} else if onStack[w] {
					low[v] = min(low[v], index[w])
				}
				continue
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].v
				low[p] = min(low[p], low[v])
			}
			if low[v] != index[v] {
				continue
			}
			var comp []int
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			selfLoop := false
			for _, w := range succ[v] {
				selfLoop = selfLoop || w == v
			}
			if len(comp) > 1 || selfLoop {
				slices.Sort(comp)
				out = append(out, comp)
			}
		}
	}
	slices.SortFunc(out, func(a, b []int) int { return a[0] - b[0] })
	return out
}
