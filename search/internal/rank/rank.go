// Package rank orders the scored candidates of the database-backed search
// engines (search/sqlite, search/postgres) and reads the best of them in
// batches, so both break ties and stop reading exactly as search/memory
// ranks.
package rank

import (
	"cmp"
	"container/heap"
	"slices"

	"github.com/agentcraftlab/agentcraft/search"
)

// Candidate is a scored document not yet read; Index is the engine's
// description of the index it belongs to.
type Candidate[I any] struct {
	Score float64
	Doc   int64
	Index I
}

// FetchBatch bounds the documents read per statement.
const FetchBatch = 256

// Best reads the best candidates with read and returns the k best hits,
// ordered by score, then ID, then index name (memory's order). read returns
// the hits of a batch that pass the query's filter; filtered says there is a
// filter, so more candidates are read per batch. Candidates are read best
// first, in batches, until k have passed and the next candidate scores below
// the k-th: it still reads every candidate tied with the k-th, because the
// tie is broken by the ID stored in the row.
func Best[I any](cands []Candidate[I], k int, filtered bool, read func([]Candidate[I]) ([]search.Hit, error)) ([]search.Hit, error) {
	if k == 0 || len(cands) == 0 {
		return nil, nil
	}
	sorted := OrderBest(cands, k)
	var hits []search.Hit
	for i := 0; i < len(cands); {
		if len(hits) >= k && cands[i].Score < hits[k-1].Score {
			break
		}
		if i == sorted {
			Sort(cands[i:])
			sorted = len(cands)
		}
		need := max(k-len(hits), 1)
		if filtered {
			need *= 4
		}
		end := min(i+min(need, FetchBatch), sorted)
		// Extend over ties with the last candidate of the batch.
		for end < sorted && end-i < FetchBatch && cands[end].Score == cands[end-1].Score {
			end++
		}
		batch, err := read(cands[i:end])
		if err != nil {
			return nil, err
		}
		hits = append(hits, batch...)
		i = end
	}
	slices.SortFunc(hits, func(a, b search.Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		return cmp.Compare(a.Index, b.Index)
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, nil
}

// Sort orders c by descending score.
func Sort[I any](c []Candidate[I]) {
	slices.SortFunc(c, func(a, b Candidate[I]) int { return cmp.Compare(b.Score, a.Score) })
}

// OrderBest moves the n best candidates, and every candidate tied with the
// n-th, to the front in descending score order, and returns how many it
// ordered; the rest score lower and stay unordered. Sorting only the head
// keeps a top-10 query over thousands of matches cheap.
func OrderBest[I any](c []Candidate[I], n int) int {
	if n >= len(c)/4 {
		Sort(c)
		return len(c)
	}
	h := make(minHeap, 0, n)
	for _, x := range c {
		if len(h) < n {
			heap.Push(&h, x.Score)
		} else if x.Score > h[0] {
			h[0] = x.Score
			heap.Fix(&h, 0)
		}
	}
	threshold := h[0]
	m := 0
	for i := range c {
		if c[i].Score >= threshold {
			c[i], c[m] = c[m], c[i]
			m++
		}
	}
	Sort(c[:m])
	return m
}

type minHeap []float64

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Up restores the min-heap h, ordered by less, after h[i] was appended or
// lowered. The bounded top-k scans of the engines keep their worst kept
// candidate at h[0] with it.
func Up[T any](h []T, i int, less func(a, b T) bool) {
	for i > 0 {
		p := (i - 1) / 2
		if !less(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

// Down restores the min-heap h, ordered by less, after h[i] was raised.
func Down[T any](h []T, i int, less func(a, b T) bool) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && less(h[r], h[l]) {
			m = r
		}
		if !less(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
