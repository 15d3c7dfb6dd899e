package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestNormalizeAndEncode(t *testing.T) {
	v := []float32{3, 4}
	if !Normalize(v) || math.Abs(float64(Dot(v, v))-1) > 1e-6 {
		t.Errorf("Normalize({3,4}) = %v, want a unit vector", v)
	}
	if Normalize([]float32{0, 0}) {
		t.Error("Normalize of a zero vector reported true")
	}
	if Encode([]float32{0, 0}) != nil {
		t.Error("Encode of a zero vector is not nil")
	}
	got := Decode(nil, Encode([]float32{3, 4}))
	if len(got) != 2 || got[0] != 0.6 || got[1] != 0.8 {
		t.Errorf("Decode(Encode({3,4})) = %v, want [0.6 0.8]", got)
	}
}

func BenchmarkDot768(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	v := make([][]float32, 2)
	for i := range v {
		v[i] = make([]float32, 768)
		for j := range v[i] {
			v[i][j] = float32(r.NormFloat64())
		}
	}
	b.ReportAllocs()
	var s float32
	for b.Loop() {
		s += Dot(v[0], v[1])
	}
	_ = s
}

func TestCache(t *testing.T) {
	var c Cache
	s1 := &Set{Name: "a", Gen: 1}
	if !s1.Add(7, Encode([]float32{1, 0})) || s1.Add(8, Encode([]float32{1, 0, 0})) {
		t.Fatal("Add: the first vector sets the dimension; another size is refused")
	}
	c.Put(1, s1)
	if c.Get(1, 1) != s1 || c.Get(1, 2) != nil {
		t.Fatal("Get must match the generation")
	}
	c.Put(1, &Set{Name: "a", Gen: 0}) // a slower, older loader
	if c.Get(1, 1) != s1 {
		t.Fatal("an older generation replaced a newer one")
	}
	var got []int64
	s1.Scan([]float32{1, 0}, func(doc int64, score float32) {
		if score != 1 {
			t.Errorf("score %v", score)
		}
		got = append(got, doc)
	})
	s1.Scan([]float32{1, 0, 0}, func(int64, float32) { t.Error("a query of another dimension matched") })
	if len(got) != 1 || got[0] != 7 {
		t.Errorf("scan %v", got)
	}
	c.DropIndex("a")
	if c.Get(1, 1) != nil {
		t.Error("DropIndex kept the set")
	}
}
