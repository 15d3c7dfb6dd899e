package rank

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/search"
)

// TestBestMatchesFullSort checks that reading only the head of the
// candidates (OrderBest, batches, the stop at the k-th score) returns what
// sorting all of them would, ties broken by ID.
func TestBestMatchesFullSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, n := range []int{1, 7, 100, 2000} {
		var cands []Candidate[string]
		for i := range n {
			// Few distinct scores, so ties are common.
			cands = append(cands, Candidate[string]{Score: float64(rng.IntN(20)), Doc: int64(i), Index: "ix"})
		}
		all := make([]search.Hit, n)
		for i, c := range cands {
			all[i] = search.Hit{ID: fmt.Sprintf("d%05d", c.Doc), Index: c.Index, Score: c.Score}
		}
		slices.SortFunc(all, func(a, b search.Hit) int {
			if a.Score != b.Score {
				if a.Score > b.Score {
					return -1
				}
				return 1
			}
			return cmp.Compare(a.ID, b.ID)
		})
		for _, k := range []int{1, 10, n} {
			reads := 0
			got, err := Best(slices.Clone(cands), k, false, func(batch []Candidate[string]) ([]search.Hit, error) {
				reads += len(batch)
				out := make([]search.Hit, len(batch))
				for i, c := range batch {
					out[i] = search.Hit{ID: fmt.Sprintf("d%05d", c.Doc), Index: c.Index, Score: c.Score}
				}
				return out, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(all[:min(k, n)], got); diff != "" {
				t.Errorf("n=%d k=%d (-want +got):\n%s", n, k, diff)
			}
			if k == 1 && n == 2000 && reads > n/2 {
				t.Errorf("n=%d k=1 read %d candidates, want only the head", n, reads)
			}
		}
	}
}
