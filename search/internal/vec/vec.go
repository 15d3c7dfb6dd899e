// Package vec holds the float32 vector arithmetic and storage format shared
// by the search engines (search/memory, search/sqlite, search/postgres), so
// that all three score a vector query to the same bits.
package vec

import (
	"encoding/binary"
	"math"
	"slices"
)

// Normalize scales v to unit length in place; it reports false for a zero
// (or non-finite) vector.
func Normalize(v []float32) bool {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 || math.IsInf(s, 0) || math.IsNaN(s) {
		return false
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return true
}

// Dot is the inner product of two equal-length vectors, unrolled by four so
// the compiler keeps four independent accumulators.
func Dot(a, b []float32) float32 {
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

// Encode normalises a copy of v and returns it as little-endian float32s,
// or nil (no vector) when v is zero or not finite.
func Encode(v []float32) []byte {
	v = slices.Clone(v)
	if !Normalize(v) {
		return nil
	}
	out := make([]byte, 0, 4*len(v))
	for _, x := range v {
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(x))
	}
	return out
}

// Decode appends the float32s of b (as written by Encode) to dst.
func Decode(dst []float32, b []byte) []float32 {
	for i := 0; i+4 <= len(b); i += 4 {
		dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
	}
	return dst
}
