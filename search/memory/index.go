package memory

import (
	"math"
	"slices"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/internal/vec"
)

// doc is one stored document; slot numbers index index.docs.
type doc struct {
	d     search.Document // Metadata is the engine's own copy
	terms []string        // distinct terms, to remove postings on delete
}

type posting struct {
	slot int32
	tf   int32
}

// index is one named collection. Deleted slots stay nil; posting lists stay
// sorted by slot because slots only grow.
type index struct {
	docs     []*doc
	lengths  []float32 // term count per slot
	byID     map[string]int32
	postings map[string][]posting
	totalLen int64
	live     int
	dim      int
	vecs     []float32 // slot*dim .. (slot+1)*dim, unit length or zero
	// hasVec marks live slots with a usable vector; a flat slice keeps the
	// brute-force scan from touching every doc struct.
	hasVec []bool
}

func newIndex() *index {
	return &index{byID: make(map[string]int32), postings: make(map[string][]posting)}
}

func (ix *index) add(d search.Document, meta map[string]string, terms []string, vector []float32) {
	ix.remove(d.ID)
	slot := int32(len(ix.docs))
	d.Metadata = meta
	tf := make(map[string]int32, len(terms))
	for _, t := range terms {
		tf[t]++
	}
	dd := &doc{d: d, terms: make([]string, 0, len(tf))}
	for t, n := range tf {
		dd.terms = append(dd.terms, t)
		ix.postings[t] = append(ix.postings[t], posting{slot: slot, tf: n})
	}
	ix.docs = append(ix.docs, dd)
	ix.lengths = append(ix.lengths, float32(len(terms)))
	ix.byID[d.ID] = slot
	ix.totalLen += int64(len(terms))
	ix.live++
	if vector != nil {
		if ix.dim == 0 {
			// Slots indexed before the first vector get zero vectors.
			ix.dim = len(vector)
			ix.vecs = make([]float32, int(slot)*ix.dim, (int(slot)+1)*ix.dim)
		}
		v := slices.Clone(vector)
		ok := vec.Normalize(v)
		ix.vecs = append(ix.vecs, v...)
		ix.hasVec = append(ix.hasVec, ok)
		return
	}
	if ix.dim > 0 {
		ix.vecs = append(ix.vecs, make([]float32, ix.dim)...)
	}
	ix.hasVec = append(ix.hasVec, false)
}

func (ix *index) remove(id string) {
	slot, ok := ix.byID[id]
	if !ok {
		return
	}
	dd := ix.docs[slot]
	for _, t := range dd.terms {
		pl := ix.postings[t]
		i, found := slices.BinarySearchFunc(pl, slot, func(p posting, s int32) int { return int(p.slot - s) })
		if !found {
			continue
		}
		pl = slices.Delete(pl, i, i+1)
		if len(pl) == 0 {
			delete(ix.postings, t)
		} else {
			ix.postings[t] = pl
		}
	}
	if ix.dim > 0 && int(slot+1)*ix.dim <= len(ix.vecs) {
		clear(ix.vecs[int(slot)*ix.dim : int(slot+1)*ix.dim])
	}
	ix.totalLen -= int64(ix.lengths[slot])
	ix.docs[slot] = nil
	ix.hasVec[slot] = false
	delete(ix.byID, id)
	ix.live--
}

func (ix *index) hit(slot int32, score float64) search.Hit {
	d := &ix.docs[slot].d
	return search.Hit{ID: d.ID, Index: d.Index, Score: score, Title: d.Title, Text: d.Text, Metadata: d.Metadata}
}

// bm25 offers every matching document of ix to top.
func (ix *index) bm25(terms []string, p BM25, filter map[string]string, top *topK) {
	if ix.live == 0 {
		return
	}
	n := float64(ix.live)
	avgdl := float64(ix.totalLen) / n
	if avgdl == 0 {
		avgdl = 1
	}
	// Repeated query terms count again, as Lucene's BooleanQuery does.
	qtf := make(map[string]float64, len(terms))
	for _, t := range terms {
		qtf[t]++
	}
	scores := make([]float32, len(ix.docs))
	touched := make([]int32, 0, 256)
	base := float32(p.K1 * (1 - p.B))
	perLen := float32(p.K1 * p.B / avgdl)
	for t, w := range qtf {
		pl := ix.postings[t]
		if len(pl) == 0 {
			continue
		}
		df := float64(len(pl))
		idf := float32(w * math.Log(1+(n-df+0.5)/(df+0.5)))
		for _, ps := range pl {
			tf := float32(ps.tf)
			if scores[ps.slot] == 0 {
				touched = append(touched, ps.slot)
			}
			scores[ps.slot] += idf * tf / (tf + base + perLen*ix.lengths[ps.slot])
		}
	}
	for _, s := range touched {
		if len(filter) > 0 && !search.Matches(ix.docs[s].d.Metadata, filter) {
			continue
		}
		top.offer(float64(scores[s]), ix, s)
	}
}

// nearest offers top the documents with a vector that score best by cosine
// (vec.TopK: exact, on all cores for a large index).
func (ix *index) nearest(qv []float32, filter map[string]string, top *topK) {
	if ix.dim != len(qv) {
		return
	}
	keep := func(slot int) bool {
		return ix.hasVec[slot] && (len(filter) == 0 || search.Matches(ix.docs[slot].d.Metadata, filter))
	}
	for _, s := range vec.TopK(qv, ix.vecs, top.k, keep) {
		top.offer(float64(s.Score), ix, int32(s.Row))
	}
}
