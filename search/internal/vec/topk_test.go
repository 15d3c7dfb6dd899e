package vec

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

// topKReference scores every row, sorts them all and cuts after the k-th
// and its ties: what TopK must return.
func topKReference(q, vecs []float32, k int, keep func(int) bool) []Scored {
	dim := len(q)
	var all []Scored
	for r := range len(vecs) / dim {
		if keep == nil || keep(r) {
			all = append(all, Scored{r, Dot(q, vecs[r*dim:(r+1)*dim])})
		}
	}
	sortScored(all)
	if k <= 0 {
		return nil
	}
	if len(all) <= k {
		return all
	}
	n := k
	for n < len(all) && all[n].Score == all[k-1].Score {
		n++
	}
	return all[:n]
}

// tiedVecs returns n rows, each a copy of one of distinct random vectors,
// so that many rows score exactly alike.
func tiedVecs(r *rand.Rand, n, distinct, dim int) []float32 {
	base := randomVecs(r, distinct, dim)
	v := make([]float32, 0, n*dim)
	for range n {
		i := r.IntN(distinct)
		v = append(v, base[i*dim:(i+1)*dim]...)
	}
	return v
}

func TestTopK(t *testing.T) {
	// More goroutines than this machine may have cores, so the parallel
	// path and its merge run everywhere.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	r := rand.New(rand.NewPCG(7, 9))
	even := func(row int) bool { return row%2 == 0 }
	none := func(int) bool { return false }
	const dim = 8
	big := randomVecs(r, 2*ParallelRows+5, dim)
	bigTied := tiedVecs(r, 2*ParallelRows+5, 40, dim)
	small := randomVecs(r, 100, dim)
	smallTied := tiedVecs(r, 100, 6, dim)
	tests := []struct {
		name string
		vecs []float32
		k    int
		keep func(int) bool
	}{
		{"k=10 of 100", small, 10, nil},
		{"k=1", small, 1, nil},
		{"k above the rows", small, 500, nil},
		{"k=0", small, 0, nil},
		{"no rows", nil, 10, nil},
		{"keep even rows", small, 10, even},
		{"keep nothing", small, 10, none},
		{"ties at the k-th", smallTied, 3, nil},
		{"ties, keep even rows", smallTied, 7, even},
		{"parallel", big, 10, nil},
		{"parallel, keep even rows", big, 25, even},
		{"parallel, ties at the k-th", bigTied, 5, nil},
		{"parallel, k above one part", big, ParallelRows + 3, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := range 3 {
				q := randomVecs(r, 1, dim)
				if i == 0 && len(tt.vecs) > 0 {
					q = slices.Clone(tt.vecs[:dim]) // a query equal to row 0
				}
				got := TopK(q, tt.vecs, tt.k, tt.keep)
				want := topKReference(q, tt.vecs, tt.k, tt.keep)
				if diff := gocmp.Diff(want, got); diff != "" {
					t.Fatalf("query %d (-want +got):\n%s", i, diff)
				}
				if tt.k > 0 && len(got) < min(tt.k, len(want)) {
					t.Fatalf("query %d: %d rows, want at least %d", i, len(got), tt.k)
				}
			}
		})
	}
}

func TestSetTopK(t *testing.T) {
	s := &Set{}
	for i, v := range [][]float32{{1, 0}, {0, 1}, {1, 1}, {-1, 0}} {
		s.Add(int64(100+i), Encode(v))
	}
	got := s.TopK([]float32{1, 0}, 2)
	var docs []int64
	for _, g := range got {
		docs = append(docs, s.Docs[g.Row])
	}
	if !slices.Equal(docs, []int64{100, 102}) {
		t.Errorf("TopK docs = %v, want [100 102]", docs)
	}
}

// BenchmarkTopK scans 32k rows of 768 dimensions for the top 10: serial
// and parallel TopK, and the collect-every-row scan it replaced in the
// database engines.
func BenchmarkTopK(b *testing.B) {
	const rows, dim, k = 2 * ParallelRows, 768, 10
	r := rand.New(rand.NewPCG(3, 4))
	vecs := randomVecs(r, rows, dim)
	q := randomVecs(r, 1, dim)
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			TopK(q, vecs, k, nil)
		}
	})
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var h topK
			h.init(k)
			h.scan(q, vecs, 0, rows, nil)
			h.result()
		}
	})
	b.Run("collect-all", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var all []Scored
			for i := range rows {
				all = append(all, Scored{i, Dot(q, vecs[i*dim:(i+1)*dim])})
			}
			sortScored(all)
		}
	})
}
