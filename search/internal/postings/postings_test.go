package postings

import (
	"errors"
	"math"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

// all decodes a term's segments in order, checking the invariants an
// engine relies on: each segment's docs are >= its First and below the
// next segment's First, and no segment but the last is under SegmentBytes.
func all(t *testing.T, segs []Segment) []Posting {
	t.Helper()
	var out []Posting
	for i, s := range segs {
		ps, err := DecodeAll(s.First, s.Data)
		if err != nil {
			t.Fatalf("segment %d: %v", i, err)
		}
		for _, p := range ps {
			if p.Doc < s.First || i+1 < len(segs) && p.Doc >= segs[i+1].First {
				t.Errorf("segment %d (first %d): doc %d out of its range", i, s.First, p.Doc)
			}
		}
		if i+1 < len(segs) && len(s.Data) < SegmentBytes {
			t.Errorf("segment %d of %d holds %d bytes: only the last may be under %d", i, len(segs), len(s.Data), SegmentBytes)
		}
		out = append(out, ps...)
	}
	return out
}

func TestAppendSegmentsSplitsAndGrows(t *testing.T) {
	var want []Posting
	for d := int64(1); d <= 3000; d++ {
		want = append(want, Posting{Doc: d * 3, TF: d%7 + 1, Len: 100 + d%50})
	}
	// First batch: a fresh term.
	segs, err := AppendSegments(nil, want[:1000])
	if err != nil {
		t.Fatal(err)
	}
	// Second batch: grows the last segment, then starts new ones.
	last := segs[len(segs)-1]
	more, err := AppendSegments(&last, want[1000:])
	if err != nil {
		t.Fatal(err)
	}
	if more[0].First != last.First {
		t.Errorf("second batch starts a segment at %d, want it to grow the tail at %d", more[0].First, last.First)
	}
	segs = append(segs[:len(segs)-1], more...)
	if len(segs) < 3 {
		t.Fatalf("%d segments for 3,000 postings, want several of at most %d bytes", len(segs), SegmentBytes)
	}
	if diff := gocmp.Diff(want, all(t, segs)); diff != "" {
		t.Errorf("postings (-want +got):\n%s", diff)
	}
}

func TestRemove(t *testing.T) {
	ps := []Posting{{10, 1, 5}, {12, 2, 6}, {20, 3, 7}}
	data := Encode(10, ps)
	out, n, err := Remove(10, data, []int64{12, 99})
	if err != nil || n != 1 {
		t.Fatalf("Remove = %d, %v; want 1 removed", n, err)
	}
	got, err := DecodeAll(10, out)
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff([]Posting{{10, 1, 5}, {20, 3, 7}}, got); diff != "" {
		t.Errorf("after removing 12 (-want +got):\n%s", diff)
	}
	out, n, _ = Remove(10, out, []int64{10, 20})
	if n != 2 || len(out) != 0 {
		t.Errorf("removing every doc left %d bytes (%d removed), want an empty segment", len(out), n)
	}
}

func TestDecodeRejectsTruncated(t *testing.T) {
	data := Encode(1, []Posting{{1, 300, 70000}})
	if err := Decode(1, data[:len(data)-1], func(_, _, _ int64) {}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated segment: err = %v, want ErrCorrupt", err)
	}
	if _, err := DecodeIDs([]byte{0x80}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated id list: err = %v, want ErrCorrupt", err)
	}
}

func TestIDsRoundTrip(t *testing.T) {
	ids := []int64{3, 4, 200, 70000, 1 << 40}
	got, err := DecodeIDs(EncodeIDs(ids))
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(ids, got); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
}

// TestScorer checks the formula on numbers worked by hand: N=4 documents
// of 40 terms in all (avgdl 10), k1=1.5, b=0.75.
func TestScorer(t *testing.T) {
	s := NewScorer(1.5, 0.75, 4, 40)
	w := s.Weight(1, 2) // df=1, the query repeats the term
	idf := math.Log(1 + (4-1+0.5)/(1+0.5))
	if math.Abs(float64(w)-2*idf) > 1e-6 {
		t.Errorf("Weight = %v, want %v", w, 2*idf)
	}
	scores := map[int64]float32{}
	if err := s.Add(scores, w, 7, Encode(7, []Posting{{7, 3, 20}})); err != nil {
		t.Fatal(err)
	}
	want := 2 * idf * 3 / (3 + 1.5*(1-0.75+0.75*20/10.0))
	if math.Abs(float64(scores[7])-want) > 1e-5 {
		t.Errorf("score = %v, want %v", scores[7], want)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(int64(1), Encode(1, []Posting{{1, 2, 3}, {9, 1, 4}}))
	f.Add(int64(0), []byte{0xff, 0xff})
	f.Fuzz(func(t *testing.T, first int64, data []byte) {
		ps, err := DecodeAll(first, data)
		if err != nil {
			return
		}
		if got, _ := DecodeAll(first, Encode(first, ps)); len(got) != len(ps) {
			t.Errorf("re-encoded segment decodes to %d postings, want %d", len(got), len(ps))
		}
	})
}
