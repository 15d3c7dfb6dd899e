package memory

import (
	"cmp"
	"slices"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/internal/rank"
)

type candidate struct {
	score float64
	ix    *index
	slot  int32
}

// worse orders candidates: lower score first, then the larger ID, so that
// equal scores rank by ID ascending and results are deterministic.
func worse(a, b candidate) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.ix.docs[a.slot].d.ID > b.ix.docs[b.slot].d.ID
}

// topK keeps the k best candidates in a min-heap (the worst at the root).
type topK struct {
	k    int
	heap []candidate
}

func (t *topK) init(k int) {
	t.k = k
	t.heap = make([]candidate, 0, min(k, 1024))
}

func (t *topK) offer(score float64, ix *index, slot int32) {
	c := candidate{score, ix, slot}
	if len(t.heap) < t.k {
		t.heap = append(t.heap, c)
		rank.Up(t.heap, len(t.heap)-1, worse)
		return
	}
	if t.k == 0 || !worse(t.heap[0], c) {
		return
	}
	t.heap[0] = c
	rank.Down(t.heap, 0, worse)
}

// hits returns the kept candidates best first.
func (t *topK) hits() []search.Hit {
	slices.SortFunc(t.heap, func(a, b candidate) int {
		if worse(a, b) {
			return 1
		}
		if worse(b, a) {
			return -1
		}
		return cmp.Compare(a.ix.docs[a.slot].d.Index, b.ix.docs[b.slot].d.Index)
	})
	out := make([]search.Hit, len(t.heap))
	for i, c := range t.heap {
		out[i] = c.ix.hit(c.slot, c.score)
	}
	return out
}
