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

// dotLoop is the Go loop Dot used before gonum's kernel: four
// accumulators. It is the reference for TestDot and BenchmarkDot768's peer.
func dotLoop(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

func randomVecs(r *rand.Rand, n, dim int) []float32 {
	v := make([]float32, n*dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	for i := range n {
		Normalize(v[i*dim : (i+1)*dim])
	}
	return v
}

func TestDot(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, dim := range []int{0, 1, 3, 4, 7, 16, 33, 384, 768, 1536} {
		v := randomVecs(r, 2, max(dim, 1))[:2*dim]
		a, b := v[:dim], v[dim:]
		var want float64
		for i := range a {
			want += float64(a[i]) * float64(b[i])
		}
		if got := Dot(a, b); math.Abs(float64(got)-want) > 1e-5 {
			t.Errorf("dim %d: Dot = %v, want %v", dim, got, want)
		}
	}
}

func BenchmarkDot768(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	v := randomVecs(r, 2, 768)
	for _, bb := range []struct {
		name string
		dot  func(a, b []float32) float32
	}{{"gonum", Dot}, {"go-loop", dotLoop}} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			var s float32
			for b.Loop() {
				s += bb.dot(v[:768], v[768:])
			}
			_ = s
		})
	}
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
	got := s1.TopK([]float32{1, 0}, 10)
	if len(got) != 1 || s1.Docs[got[0].Row] != 7 || got[0].Score != 1 {
		t.Errorf("TopK = %v, want doc 7 scoring 1", got)
	}
	if got := s1.TopK([]float32{1, 0, 0}, 10); got != nil {
		t.Errorf("a query of another dimension matched %v", got)
	}
	c.DropIndex("a")
	if c.Get(1, 1) != nil {
		t.Error("DropIndex kept the set")
	}
}
