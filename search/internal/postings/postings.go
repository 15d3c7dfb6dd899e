// Package postings is the on-disk form of the BM25 inverted index shared by
// the database-backed search engines (search/sqlite, search/postgres) and
// the scoring that reads it, so that every engine ranks exactly as
// search/memory does.
//
// The postings of a term are stored in segments of up to SegmentBytes: a
// row (term, first, data) where data packs (doc delta, tf, doc length) as
// uvarints, doc ids ascending, the first delta taken from first. first is a
// lower bound: every doc of a segment is >= its first and below the next
// segment's. Engines allocate doc ids in increasing order per index, so new
// postings are appended to a term's last segment (AppendSegments) until it
// is full; deletes rewrite the segments they touch (Remove).
//
// A Scorer accumulates memory's BM25 over segments:
//
//	sum over query terms t (with repeats) of idf(t) * tf / (tf + k1*(1 - b + b*|d|/avgdl))
//	idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))
//
// in float32, with the same operations in the same order per term as
// search/memory, so scores agree to float32 rounding.
//
// A query decodes each term's segments into a List once; a Cache keeps
// Lists per (index, term), tagged with the index's generation, so repeated
// terms cost no database read and no decoding until the index is written
// again; Scorer.Accumulate scores Lists into a dense array.
package postings

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
)

// SegmentBytes bounds a segment: appending rewrites the last segment of
// every term a batch touches, so smaller is cheaper to write; larger means
// fewer rows to read per query. A segment may exceed it by one posting.
const SegmentBytes = 4096

// ErrCorrupt reports a segment or id list that does not decode.
var ErrCorrupt = errors.New("corrupt postings segment")

// Posting is one document of a term: its id, the term's frequency in it
// and the document's length in terms.
type Posting struct {
	Doc, TF, Len int64
}

// Segment is one stored run of postings of a term.
type Segment struct {
	First int64
	Data  []byte
}

// Append adds p to data, a segment whose last doc (or first, when empty) is
// prev.
func Append(data []byte, prev int64, p Posting) []byte {
	data = binary.AppendUvarint(data, uint64(p.Doc-prev))
	data = binary.AppendUvarint(data, uint64(p.TF))
	return binary.AppendUvarint(data, uint64(p.Len))
}

// Decode calls fn for each posting of the segment (first, data).
func Decode(first int64, data []byte, fn func(doc, tf, dl int64)) error {
	doc := first
	for len(data) > 0 {
		d, n1 := binary.Uvarint(data)
		if n1 <= 0 {
			return ErrCorrupt
		}
		tf, n2 := binary.Uvarint(data[n1:])
		if n2 <= 0 {
			return ErrCorrupt
		}
		dl, n3 := binary.Uvarint(data[n1+n2:])
		if n3 <= 0 {
			return ErrCorrupt
		}
		data = data[n1+n2+n3:]
		doc += int64(d)
		fn(doc, int64(tf), int64(dl))
	}
	return nil
}

// DecodeAll returns the postings of the segment (first, data).
func DecodeAll(first int64, data []byte) ([]Posting, error) {
	var out []Posting
	err := Decode(first, data, func(doc, tf, dl int64) { out = append(out, Posting{doc, tf, dl}) })
	return out, err
}

// Encode packs ps (doc ids ascending, none below first) as one segment.
func Encode(first int64, ps []Posting) []byte {
	var data []byte
	prev := first
	for _, p := range ps {
		data = Append(data, prev, p)
		prev = p.Doc
	}
	return data
}

// AppendSegments appends ps (doc ids ascending, above every stored doc of
// the term) to a term whose last stored segment is tail (nil when the term
// has none) and returns the segments to write: the grown tail, when it had
// room, and new segments. A full tail is left as it is.
func AppendSegments(tail *Segment, ps []Posting) ([]Segment, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	var first, prev int64
	var data []byte
	if tail != nil && len(tail.Data) < SegmentBytes {
		first, prev = tail.First, tail.First
		if err := Decode(first, tail.Data, func(doc, _, _ int64) { prev = doc }); err != nil {
			return nil, err
		}
		// Copy: the caller's tail may alias a buffer it still reads.
		data = slices.Clip(tail.Data)
	} else {
		first, prev = ps[0].Doc, ps[0].Doc
	}
	var out []Segment
	for _, p := range ps {
		if len(data) >= SegmentBytes {
			out = append(out, Segment{first, data})
			first, prev, data = p.Doc, p.Doc, nil
		}
		data = Append(data, prev, p)
		prev = p.Doc
	}
	return append(out, Segment{first, data}), nil
}

// Remove deletes docs (any order) from the segment (first, data) and
// returns the new data (empty when no posting is left) and how many
// postings it removed.
func Remove(first int64, data []byte, docs []int64) ([]byte, int, error) {
	ps, err := DecodeAll(first, data)
	if err != nil {
		return nil, 0, err
	}
	n := len(ps)
	ps = slices.DeleteFunc(ps, func(p Posting) bool { return slices.Contains(docs, p.Doc) })
	if len(ps) == n {
		return data, 0, nil
	}
	return Encode(first, ps), n - len(ps), nil
}

// EncodeIDs packs sorted ids as varint deltas (the distinct terms of a
// document, kept so a delete can find its postings).
func EncodeIDs(ids []int64) []byte {
	out := make([]byte, 0, 2*len(ids))
	var prev int64
	for _, id := range ids {
		out = binary.AppendUvarint(out, uint64(id-prev))
		prev = id
	}
	return out
}

// DecodeIDs reverses EncodeIDs.
func DecodeIDs(b []byte) ([]int64, error) {
	var out []int64
	var prev int64
	for len(b) > 0 {
		d, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, ErrCorrupt
		}
		prev += int64(d)
		out = append(out, prev)
		b = b[n:]
	}
	return out, nil
}

// Scorer computes BM25 for one index, given its statistics.
type Scorer struct {
	n            float64 // documents in the index
	base, perLen float32
}

// NewScorer returns the scorer of an index holding docs documents of
// totalLen terms in all, with BM25 parameters k1 and b.
func NewScorer(k1, b float64, docs, totalLen int64) Scorer {
	n := float64(docs)
	avgdl := 1.0
	if docs > 0 && totalLen > 0 {
		avgdl = float64(totalLen) / n
	}
	return Scorer{n: n, base: float32(k1 * (1 - b)), perLen: float32(k1 * b / avgdl)}
}

// Weight is the idf of a term with document frequency df, times qtf, the
// number of times the query repeats the term (repeats count again, as in
// Lucene's BooleanQuery).
func (s Scorer) Weight(df int64, qtf float64) float32 {
	d := float64(df)
	return float32(qtf * math.Log(1+(s.n-d+0.5)/(d+0.5)))
}

// Add adds the contribution of the segment (first, data) of a term of
// weight w to scores, keyed by doc id.
func (s Scorer) Add(scores map[int64]float32, w float32, first int64, data []byte) error {
	return Decode(first, data, func(doc, tf, dl int64) {
		tff := float32(tf)
		scores[doc] += w * tff / (tff + s.base + s.perLen*float32(dl))
	})
}
