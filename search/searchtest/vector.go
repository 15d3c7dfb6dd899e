package searchtest

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/search"
)

// VectorFilterWidens checks a filtered vector query whose passing
// documents rank below the first candidates taken (over a thousand), or
// are fewer than k: the engine must widen its take until it has k hits or
// every document, and return what a full sort would. newEngine returns a
// new, empty engine using emb, as in Run.
func VectorFilterWidens(t *testing.T, newEngine func(t *testing.T, emb search.Embedder) search.Engine) {
	const n, dim = 3000, 8
	rng := rand.New(rand.NewPCG(5, 8))
	table := map[string][]float32{}
	vecs := make([][]float32, n)
	for i := range vecs {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		vecs[i] = v
		table[fmt.Sprintf("doc %d", i)] = v
	}
	qv := vecs[0]
	table["probe"] = qv
	// Rank the documents by their cosine with the probe.
	type ranked struct {
		i int
		s float64
	}
	order := make([]ranked, n)
	for i, v := range vecs {
		var d, nv float64
		for j := range v {
			d += float64(v[j]) * float64(qv[j])
			nv += float64(v[j]) * float64(v[j])
		}
		order[i] = ranked{i, d / math.Sqrt(nv)}
	}
	slices.SortFunc(order, func(a, b ranked) int { return cmp.Compare(b.s, a.s) })
	band := map[int]string{}
	for _, r := range order[1500:1530] {
		band[r.i] = "deep" // 30 passing documents, all ranked past 1500
	}
	for _, r := range order[n-4:] {
		band[r.i] = "last" // fewer than k, ranked last
	}
	docs := make([]search.Document, n)
	for i := range docs {
		docs[i] = search.Document{ID: fmt.Sprintf("d%04d", i), Index: "kb", Text: fmt.Sprintf("doc %d", i),
			Metadata: map[string]string{"band": cmp.Or(band[i], "none")}}
	}
	e := newEngine(t, NewTableEmbedder(dim, table))
	if err := e.Index(t.Context(), docs...); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		band string
		want []int // ranks in order
	}{
		{"deep", []int{1500, 1501, 1502, 1503, 1504, 1505, 1506, 1507, 1508, 1509}},
		{"last", []int{n - 4, n - 3, n - 2, n - 1}},
		{"nowhere", nil},
	} {
		res, err := e.Search(t.Context(), search.Query{Text: "probe", Mode: search.ModeVector, TopK: 10, Filter: map[string]string{"band": tt.band}})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{}
		for _, r := range tt.want {
			want = append(want, fmt.Sprintf("kb/d%04d", order[r].i))
		}
		if diff := gocmp.Diff(want, IDs(res.Hits)); diff != "" {
			t.Errorf("band %q (-want +got):\n%s", tt.band, diff)
		}
	}
}
