package postings

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

func listOf(docs ...int64) *List {
	ps := make([]Posting, len(docs))
	for i, d := range docs {
		ps[i] = Posting{Doc: d, TF: 1, Len: 3}
	}
	return FromPostings(int64(len(docs)), ps)
}

func TestCacheGenerations(t *testing.T) {
	c := NewCache(1 << 20)
	old, cur := listOf(1, 2), listOf(1, 2, 3)
	c.Put(7, 1, "apple", old)
	if got := c.Get(7, 1, "apple"); got != old {
		t.Fatalf("Get at the cached generation = %v, want the cached list", got)
	}
	if got := c.Get(8, 1, "apple"); got != nil {
		t.Errorf("Get of another index = %v, want nil", got)
	}
	if got := c.Get(7, 2, "apple"); got != nil {
		t.Errorf("Get after the generation moved = %v, want nil", got)
	}
	if n := c.Bytes(); n != 0 {
		t.Errorf("Bytes after the stale entry was asked for = %d, want 0 (dropped)", n)
	}
	c.Put(7, 3, "apple", cur)
	c.Put(7, 2, "apple", old) // a slower reader of an older generation
	if got := c.Get(7, 3, "apple"); got != cur {
		t.Errorf("Get(gen 3) after an older Put = %v, want the gen-3 list", got)
	}
}

func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	l := listOf(1, 2, 3, 4)
	per := l.bytes() + 1 // one-letter terms
	c := NewCache(3 * per)
	for _, term := range []string{"a", "b", "c"} {
		c.Put(1, 1, term, l)
	}
	c.Get(1, 1, "a") // b is now the least recently used
	c.Put(1, 1, "d", l)
	var kept []string
	for _, term := range []string{"a", "b", "c", "d"} {
		if c.Get(1, 1, term) != nil {
			kept = append(kept, term)
		}
	}
	if diff := gocmp.Diff([]string{"a", "c", "d"}, kept); diff != "" {
		t.Errorf("kept terms (-want +got):\n%s", diff)
	}
	if got, max := c.Bytes(), 3*per; got > max {
		t.Errorf("Bytes = %d, over the bound %d", got, max)
	}
	c.Put(1, 1, "huge", listOf(make([]int64, 1000)...))
	if c.Get(1, 1, "huge") != nil || c.Get(1, 1, "a") == nil {
		t.Error("a list larger than the bound was cached or evicted the others")
	}
}

func TestCacheDisabled(t *testing.T) {
	c := NewCache(-1)
	c.Put(1, 1, "a", listOf(1))
	if got := c.Get(1, 1, "a"); got != nil || c.Bytes() != 0 {
		t.Errorf("disabled cache returned %v", got)
	}
}

func TestCacheConcurrent(t *testing.T) {
	c := NewCache(20 * listOf(1, 2).bytes())
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				term := fmt.Sprint(i % 37)
				gen := int64(i / 100)
				if l := c.Get(int64(g%2), gen, term); l != nil && len(l.Docs) != 2 {
					t.Errorf("got a list of %d docs", len(l.Docs))
				}
				c.Put(int64(g%2), gen, term, listOf(1, 2))
			}
		})
	}
	wg.Wait()
	if got, max := c.Bytes(), 20*listOf(1, 2).bytes()+40; got > max {
		t.Errorf("Bytes = %d, over the bound %d", got, max)
	}
}

// TestAccumulateMatchesAdd checks that scoring cached lists gives exactly
// (bit for bit) the scores of decoding segments with Scorer.Add, over
// compact doc ranges (dense accumulation) and scattered ones (map).
func TestAccumulateMatchesAdd(t *testing.T) {
	for _, tc := range []struct {
		name    string
		spread  int64
		perTerm int
		dense   bool
	}{
		{"compact", 1, 300, true},
		{"scattered", 1 << 20, 50, false},
		{"one doc", 1, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tc.spread)))
			s := NewScorer(1.5, 0.75, 5000, 5000*120)
			want := map[int64]float32{}
			var lists []*List
			var ws []float32
			for term := range 4 {
				var ps []Posting
				doc := int64(1000)
				for range tc.perTerm {
					doc += 1 + r.Int64N(3*tc.spread)
					ps = append(ps, Posting{Doc: doc, TF: 1 + r.Int64N(5), Len: 1 + r.Int64N(300)})
				}
				segs, err := AppendSegments(nil, ps)
				if err != nil {
					t.Fatal(err)
				}
				w := s.Weight(int64(len(ps)), float64(1+term%2))
				for _, seg := range segs {
					if err := s.Add(want, w, seg.First, seg.Data); err != nil {
						t.Fatal(err)
					}
				}
				l, err := NewList(int64(len(ps)), segs)
				if err != nil {
					t.Fatal(err)
				}
				lists = append(lists, l)
				ws = append(ws, w)
			}
			acc := s.Accumulate(ws, lists)
			if dense := acc.sparse == nil; dense != tc.dense {
				t.Errorf("dense accumulation = %v, want %v", dense, tc.dense)
			}
			got := map[int64]float32{}
			acc.Each(func(doc int64, score float32) { got[doc] = score })
			if acc.Len() != len(got) {
				t.Errorf("Len = %d, Each gave %d docs", acc.Len(), len(got))
			}
			acc.Release()
			if diff := gocmp.Diff(want, got); diff != "" {
				t.Errorf("scores (-Add +Accumulate):\n%s", diff)
			}
			// A released accumulator comes back clean.
			again := s.Accumulate(ws[:1], lists[:1])
			defer again.Release()
			if again.Len() != len(lists[0].Docs) {
				t.Errorf("reused accumulator scored %d docs, want %d", again.Len(), len(lists[0].Docs))
			}
		})
	}
}

func TestNewListSortsSegments(t *testing.T) {
	ps := []Posting{{1, 1, 4}, {5, 2, 6}, {9, 1, 2}}
	a := Segment{First: 1, Data: Encode(1, ps[:2])}
	b := Segment{First: 9, Data: Encode(9, ps[2:])}
	l, err := NewList(3, []Segment{b, a})
	if err != nil {
		t.Fatal(err)
	}
	want := &List{DF: 3, Docs: []int64{1, 5, 9}, TF: []float32{1, 2, 1}, Len: []float32{4, 6, 2}}
	if diff := gocmp.Diff(want, l); diff != "" {
		t.Errorf("NewList (-want +got):\n%s", diff)
	}
	if _, err := NewList(1, []Segment{{First: 1, Data: []byte{0x80}}}); err == nil {
		t.Error("NewList of a corrupt segment: no error")
	}
}
