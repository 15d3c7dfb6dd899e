package vec

import (
	"cmp"
	"runtime"
	"slices"
	"sync"

	"github.com/agentcraftlab/agentcraft/search/internal/rank"
)

// Scored is a row of a vector list (Set.Docs[Row] for a Set) and its dot
// product with the query.
type Scored struct {
	Row   int
	Score float32
}

// ParallelRows is the number of rows from which TopK splits its scan over
// GOMAXPROCS goroutines: below it, starting them costs more than the scan
// (16k 768-dimension rows take about 2 ms on one core).
const ParallelRows = 16 << 10

// TopK returns the k best rows of s for q (see the package function TopK).
// A q of another dimension matches nothing.
func (s *Set) TopK(q []float32, k int) []Scored {
	if len(q) != s.Dim {
		return nil
	}
	return TopK(q, s.Vecs, k, nil)
}

// TopK scores every row of vecs (len(q) float32s each) that keep accepts
// (nil keeps all) against q and returns the k best, best first, and with
// them every row tied with the k-th: callers break ties by something vecs
// does not know (a document's ID), so a tied row must not be dropped here.
// Rows with equal scores are in row order. keep is only called for rows
// that score well enough to enter; it must be safe for concurrent use, as
// a scan of ParallelRows or more rows runs on GOMAXPROCS goroutines.
//
// The scan is exact: every row's score is computed, with Dot.
func TopK(q, vecs []float32, k int, keep func(row int) bool) []Scored {
	dim := len(q)
	if dim == 0 || k <= 0 {
		return nil
	}
	rows := len(vecs) / dim
	parts := min(runtime.GOMAXPROCS(0), rows/(ParallelRows/2))
	if rows < ParallelRows || parts < 2 {
		var h topK
		h.init(k)
		h.scan(q, vecs, 0, rows, keep)
		return h.result()
	}
	found := make([][]Scored, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*rows/parts, (p+1)*rows/parts
		wg.Go(func() {
			var h topK
			h.init(k)
			h.scan(q, vecs, lo, hi, keep)
			found[p] = h.result()
		})
	}
	wg.Wait()
	var all []Scored
	for _, f := range found {
		all = append(all, f...)
	}
	sortScored(all)
	if len(all) <= k {
		return all
	}
	// Each part kept its k best and their ties, so the k best overall
	// and their ties are among them.
	kth := all[k-1].Score
	n := k
	for n < len(all) && all[n].Score == kth {
		n++
	}
	return all[:n]
}

// topK keeps the k best rows seen in a min-heap (the worst at the root),
// and in ties the rows that score exactly as the root but did not fit.
type topK struct {
	k    int
	heap []Scored
	ties []Scored // rows outside heap scoring heap[0].Score
}

func (t *topK) init(k int) {
	t.k = k
	t.heap = make([]Scored, 0, min(k, 1024))
}

// scan offers rows lo..hi of vecs.
func (t *topK) scan(q, vecs []float32, lo, hi int, keep func(int) bool) {
	dim := len(q)
	for r := lo; r < hi; r++ {
		s := Dot(q, vecs[r*dim:(r+1)*dim])
		if len(t.heap) == t.k && s < t.heap[0].Score {
			continue
		}
		if keep != nil && !keep(r) {
			continue
		}
		t.offer(Scored{r, s})
	}
}

// offer adds c, which scores no lower than the root when the heap is full.
func (t *topK) offer(c Scored) {
	if len(t.heap) < t.k {
		t.heap = append(t.heap, c)
		rank.Up(t.heap, len(t.heap)-1, lower)
		return
	}
	root := t.heap[0]
	if c.Score == root.Score {
		t.ties = append(t.ties, c)
		return
	}
	t.heap[0] = c
	rank.Down(t.heap, 0, lower)
	switch {
	case t.heap[0].Score == root.Score:
		t.ties = append(t.ties, root)
	default:
		t.ties = t.ties[:0] // they scored below the new root
	}
}

// lower orders the heap: the lowest score at the root.
func lower(a, b Scored) bool { return a.Score < b.Score }

// result returns the kept rows best first, nil if none.
func (t *topK) result() []Scored {
	if len(t.heap) == 0 {
		return nil
	}
	out := append(t.heap, t.ties...)
	sortScored(out)
	return out
}

// sortScored orders by descending score, then ascending row.
func sortScored(s []Scored) {
	slices.SortFunc(s, func(a, b Scored) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Row, b.Row)
	})
}

// A filtered vector query first takes the max(k×FilterFetch, FilterMin)
// best rows of each set, then FilterFetch times as many while fewer than k
// of them pass. Engines read candidates lazily, so a generous first take
// costs heap entries, not rows.
const (
	FilterFetch = 16
	FilterMin   = 1024
)

// Widen feeds try the best rows of every set for q: the k best (and their
// ties), which hold the k best overall, or, when filtered, a larger take
// that grows until try reports enough (k rows passed the filter) or no set
// has rows left out. top[i] are the rows of sets[i].
func Widen(sets []*Set, q []float32, k int, filtered bool, try func(top [][]Scored) (enough bool, err error)) error {
	n := k
	if filtered {
		n = max(k*FilterFetch, FilterMin)
	}
	top := make([][]Scored, len(sets))
	for {
		more := false
		for i, s := range sets {
			top[i] = s.TopK(q, n)
			more = more || (len(top[i]) >= n && len(top[i]) < len(s.Docs))
		}
		if enough, err := try(top); err != nil || enough || !more {
			return err
		}
		n *= FilterFetch
	}
}
