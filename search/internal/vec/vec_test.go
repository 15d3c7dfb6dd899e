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
