package search

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func hits(ids ...string) []Hit {
	out := make([]Hit, len(ids))
	for i, id := range ids {
		out[i] = Hit{ID: id, Index: "kb", Score: float64(100 - i)}
	}
	return out
}

type fused struct {
	ID    string
	Score float64
}

func simplify(hs []Hit) []fused {
	out := make([]fused, len(hs))
	for i, h := range hs {
		out[i] = fused{h.ID, h.Score}
	}
	return out
}

var approx = cmp.Comparer(func(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 })

func TestFuseRRF(t *testing.T) {
	const k = 60
	tests := []struct {
		name    string
		k       float64
		weights []float64
		lists   [][]Hit
		want    []fused
	}{
		{
			name:  "documents in both lists rise",
			k:     k,
			lists: [][]Hit{hits("a", "b", "c"), hits("c", "b", "d")},
			// c: 1/61+1/63 (0.032266) edges out b: 2/62 (0.032258).
			want: []fused{{"c", 1.0/63 + 1.0/61}, {"b", 2.0 / 62}, {"a", 1.0 / 61}, {"d", 1.0 / 63}},
		},
		{
			name:  "zero k means 60",
			k:     0,
			lists: [][]Hit{hits("a")},
			want:  []fused{{"a", 1.0 / 61}},
		},
		{
			name:  "small k rewards the top rank",
			k:     1,
			lists: [][]Hit{hits("a", "b", "c"), hits("c", "b", "a")},
			// a: 1/2+1/4, b: 1/3+1/3, c: 1/4+1/2 → a and c tie, best rank 1 each, ID breaks it
			want: []fused{{"a", 0.75}, {"c", 0.75}, {"b", 2.0 / 3}},
		},
		{
			name:    "weights favour the second list",
			k:       k,
			weights: []float64{1, 3},
			lists:   [][]Hit{hits("a", "b"), hits("b", "c")},
			// a: 1/61, b: 1/62+3/61, c: 3/62
			want: []fused{{"b", 1.0/62 + 3.0/61}, {"c", 3.0 / 62}, {"a", 1.0 / 61}},
		},
		{
			name:    "non-positive weight means 1",
			k:       k,
			weights: []float64{0, -2},
			lists:   [][]Hit{hits("a"), hits("b")},
			want:    []fused{{"a", 1.0 / 61}, {"b", 1.0 / 61}},
		},
		{
			name:  "tie broken by best rank before id",
			k:     k,
			lists: [][]Hit{hits("z", "x", "y"), hits("y", "w", "x")},
			// z: 1/61, y: 1/63+1/61, x: 1/62+1/63, w: 1/62
			want: []fused{{"y", 1.0/63 + 1.0/61}, {"x", 1.0/62 + 1.0/63}, {"z", 1.0 / 61}, {"w", 1.0 / 62}},
		},
		{
			name:  "empty input",
			k:     k,
			lists: [][]Hit{nil, {}},
			want:  []fused{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := simplify(FuseRRF(tt.k, tt.weights, tt.lists...))
			if diff := cmp.Diff(tt.want, got, approx); diff != "" {
				t.Errorf("FuseRRF mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFuseRRFKeepsIndexesApart(t *testing.T) {
	a := []Hit{{ID: "1", Index: "x", Text: "from x"}}
	b := []Hit{{ID: "1", Index: "y", Text: "from y"}, {ID: "1", Index: "x", Text: "again"}}
	got := FuseRRF(60, nil, a, b)
	want := []Hit{{ID: "1", Index: "x", Text: "from x", Score: 1.0/61 + 1.0/62}, {ID: "1", Index: "y", Text: "from y", Score: 1.0 / 61}}
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("FuseRRF mismatch (-want +got):\n%s", diff)
	}
}

func TestQueryValidate(t *testing.T) {
	if err := (Query{Mode: "semantic"}).Validate(); err == nil {
		t.Error("Validate accepted mode \"semantic\"")
	}
	if err := (Query{TopK: -1}).Validate(); err == nil {
		t.Error("Validate accepted top_k -1")
	}
	if err := (Query{Mode: ModeHybrid, Text: "  "}).Validate(); err == nil {
		t.Error("Validate accepted an empty query text")
	}
	if err := (Query{Mode: ModeHybrid, TopK: 5, Text: "raft"}).Validate(); err != nil {
		t.Errorf("Validate(hybrid, 5) = %v", err)
	}
}

func TestMatches(t *testing.T) {
	meta := map[string]string{"lang": "ja", "team": "ops"}
	for _, tt := range []struct {
		filter map[string]string
		want   bool
	}{
		{nil, true},
		{map[string]string{"lang": "ja"}, true},
		{map[string]string{"lang": "ja", "team": "ops"}, true},
		{map[string]string{"lang": "en"}, false},
		{map[string]string{"owner": ""}, false},
	} {
		if got := Matches(meta, tt.filter); got != tt.want {
			t.Errorf("Matches(%v) = %v, want %v", tt.filter, got, tt.want)
		}
	}
}

func BenchmarkFuseRRF(b *testing.B) {
	var x, y []Hit
	for i := range 100 {
		x = append(x, Hit{ID: string(rune('a'+i%26)) + string(rune('a'+i/26)), Index: "kb"})
		y = append(y, Hit{ID: string(rune('a'+(i*7)%26)) + string(rune('a'+i/26+1)), Index: "kb"})
	}
	b.ReportAllocs()
	for b.Loop() {
		FuseRRF(60, nil, x, y)
	}
}
