package postings

import "sync"

// Accumulator sums the BM25 contributions of a query's terms per document.
// Over a compact range of doc ids (the usual case: one index's ids are
// allocated in order) it adds into a dense array, which is several times
// faster than a map; otherwise into a map. Get one with Scorer.Accumulate.
type Accumulator struct {
	lo      int64     // doc id of dense[0]
	dense   []float32 // scores by doc-lo, when the range is compact
	seen    []bool    // dense[i] has a contribution
	touched []int64   // docs with a dense score, in first-touch order
	sparse  map[int64]float32
}

// denseSlack bounds the dense array: at most this many slots per posting
// (plus denseMin), so a query over a few scattered docs stays a map.
const (
	denseSlack = 8
	denseMin   = 1 << 16
	denseMax   = 1 << 24
)

var accumulators sync.Pool

// Accumulate returns an Accumulator holding, for every document of lists,
// the sum over i of ws[i] * tf / (tf + k1*(1 - b + b*|d|/avgdl)), added in
// the order of lists in float32, as memory adds a query's terms. Release
// it when done.
func (s Scorer) Accumulate(ws []float32, lists []*List) *Accumulator {
	a, _ := accumulators.Get().(*Accumulator)
	if a == nil {
		a = &Accumulator{}
	}
	lo, hi, n := int64(0), int64(-1), 0
	for _, l := range lists {
		if len(l.Docs) == 0 {
			continue
		}
		if n == 0 || l.Docs[0] < lo {
			lo = l.Docs[0]
		}
		if n == 0 || l.Docs[len(l.Docs)-1] > hi {
			hi = l.Docs[len(l.Docs)-1]
		}
		n += len(l.Docs)
	}
	if n == 0 {
		return a
	}
	span := hi - lo + 1
	if span > denseMax || span > int64(denseSlack*n+denseMin) {
		a.sparse = make(map[int64]float32, n)
		for i, l := range lists {
			w := ws[i]
			for j, doc := range l.Docs {
				tf := l.TF[j]
				a.sparse[doc] += w * tf / (tf + s.base + s.perLen*l.Len[j])
			}
		}
		return a
	}
	a.lo = lo
	if int64(cap(a.dense)) < span {
		a.dense = make([]float32, span)
		a.seen = make([]bool, span)
	}
	a.dense, a.seen = a.dense[:span], a.seen[:span]
	for i, l := range lists {
		w := ws[i]
		for j, doc := range l.Docs {
			k := doc - lo
			if !a.seen[k] {
				a.seen[k] = true
				a.touched = append(a.touched, doc)
			}
			tf := l.TF[j]
			a.dense[k] += w * tf / (tf + s.base + s.perLen*l.Len[j])
		}
	}
	return a
}

// Len reports the number of documents with a score.
func (a *Accumulator) Len() int {
	if a.sparse != nil {
		return len(a.sparse)
	}
	return len(a.touched)
}

// Each calls fn with every scored document.
func (a *Accumulator) Each(fn func(doc int64, score float32)) {
	if a.sparse != nil {
		for doc, s := range a.sparse {
			fn(doc, s)
		}
		return
	}
	for _, doc := range a.touched {
		fn(doc, a.dense[doc-a.lo])
	}
}

// Release clears a and returns it to the pool; a must not be used after.
func (a *Accumulator) Release() {
	for _, doc := range a.touched {
		a.dense[doc-a.lo] = 0
		a.seen[doc-a.lo] = false
	}
	a.touched = a.touched[:0]
	a.sparse = nil
	if cap(a.dense) > denseMax/4 {
		// Do not pin a large array for a rare query over a wide range.
		a.dense, a.seen = nil, nil
	}
	accumulators.Put(a)
}
