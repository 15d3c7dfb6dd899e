package search

import (
	"cmp"
	"slices"
)

// DefaultRRFK is the rank constant of Reciprocal Rank Fusion used when none
// is given (Cormack, Clarke and Büttcher 2009).
const DefaultRRFK = 60

// FuseRRF combines ranked lists with Reciprocal Rank Fusion: a document's
// fused score is the sum over lists of weight/(k+rank), rank starting at 1.
// k <= 0 means DefaultRRFK. weights[i] applies to lists[i]; a missing or
// non-positive weight is 1 (so nil weights is plain RRF). Documents are
// identified by (Index, ID); the first occurrence supplies Title, Text and
// Metadata. Equal fused scores are ordered by the best single rank, then by
// Index and ID, so the output is deterministic.
func FuseRRF(k float64, weights []float64, lists ...[]Hit) []Hit {
	if k <= 0 {
		k = DefaultRRFK
	}
	type key struct{ index, id string }
	type acc struct {
		hit      Hit
		bestRank int
	}
	byKey := make(map[key]*acc)
	var order []*acc
	for i, list := range lists {
		w := 1.0
		if i < len(weights) && weights[i] > 0 {
			w = weights[i]
		}
		for r, h := range list {
			rank := r + 1
			kk := key{h.Index, h.ID}
			a, ok := byKey[kk]
			if !ok {
				a = &acc{hit: h, bestRank: rank}
				a.hit.Score = 0
				byKey[kk] = a
				order = append(order, a)
			}
			a.hit.Score += w / (k + float64(rank))
			a.bestRank = min(a.bestRank, rank)
		}
	}
	slices.SortStableFunc(order, func(a, b *acc) int {
		if c := cmp.Compare(b.hit.Score, a.hit.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(a.bestRank, b.bestRank); c != 0 {
			return c
		}
		if c := cmp.Compare(a.hit.Index, b.hit.Index); c != 0 {
			return c
		}
		return cmp.Compare(a.hit.ID, b.hit.ID)
	})
	out := make([]Hit, len(order))
	for i, a := range order {
		out[i] = a.hit
	}
	return out
}
