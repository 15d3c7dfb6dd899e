package searchtest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/memory"
)

// Counter is an engine that counts the documents of an index, as the
// database engines (search/sqlite, search/postgres) do.
type Counter interface {
	search.Engine
	Len(ctx context.Context, index string) (int, error)
}

// scores maps "index/id" to score.
func scores(hs []search.Hit) map[string]float64 {
	out := make(map[string]float64, len(hs))
	for _, h := range hs {
		out[h.Index+"/"+h.ID] = h.Score
	}
	return out
}

// SameScores reports a difference between memory's answer want and the
// answer got of the engine called name: the same documents with the same
// scores (to float32 rounding; both accumulate in float32, memory in map
// order).
func SameScores(t testing.TB, name, what string, want, got []search.Hit) {
	t.Helper()
	if diff := gocmp.Diff(scores(want), scores(got), gocmp.Comparer(func(a, b float64) bool {
		return math.Abs(a-b) <= 1e-5*math.Max(1, math.Abs(a))
	})); diff != "" {
		t.Errorf("%s: scores (-memory +%s):\n%s", what, name, diff)
	}
}

// IDs returns "index/id" of each hit, in order.
func IDs(hs []search.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Index + "/" + h.ID
	}
	return out
}

// nearTie reports adjacent scores closer than float32 rounding, where the
// two engines may legitimately order differently.
func nearTie(hs []search.Hit) bool {
	for i := 1; i < len(hs); i++ {
		if d := hs[i-1].Score - hs[i].Score; d > 0 && d < 1e-5*hs[i].Score {
			return true
		}
	}
	return false
}

// MatchesMemory replays random batches of indexing, replacing and deleting
// on e (a new, empty engine called name in messages) and on search/memory,
// and compares every answer. The vocabulary is small so common terms
// outgrow one postings segment and deletes hit segments in the middle of a
// term.
func MatchesMemory(t *testing.T, name string, e Counter) {
	ctx := t.Context()
	mem, err := memory.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	vocab := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
		"kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango"}
	doc := func(index string, i int) search.Document {
		words := make([]string, 3+rng.IntN(40))
		for j := range words {
			// Skewed: the first words are in nearly every document.
			words[j] = vocab[min(rng.IntN(len(vocab)), rng.IntN(len(vocab)))]
		}
		return search.Document{ID: fmt.Sprintf("d%04d", i), Index: index, Text: strings.Join(words, " "),
			Metadata: map[string]string{"parity": fmt.Sprint(i % 2)}}
	}
	total := 3000
	if raceEnabled {
		t.Log("race detector on: a shorter replay")
		total /= 5
	}
	for i := 0; i < total; {
		batch := []search.Document{}
		for range 1 + rng.IntN(200) {
			index := "a"
			if rng.IntN(4) == 0 {
				index = "b"
			}
			// Ids repeat: some documents are replaced, in the same batch too.
			batch = append(batch, doc(index, rng.IntN(total)))
			i++
		}
		for _, x := range []search.Engine{e, mem} {
			if err := x.Index(ctx, batch...); err != nil {
				t.Fatal(err)
			}
		}
		if rng.IntN(3) == 0 {
			var ids []string
			for range rng.IntN(50) {
				ids = append(ids, fmt.Sprintf("d%04d", rng.IntN(total)))
			}
			for _, x := range []search.Engine{e, mem} {
				if err := x.Delete(ctx, "a", ids...); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, q := range []search.Query{
		{Text: "alpha"},
		{Text: "alpha bravo kilo"},
		{Text: "tango sierra sierra"},
		{Text: "romeo", Indexes: []string{"b"}},
		{Text: "delta echo", Filter: map[string]string{"parity": "1"}},
		{Text: "zulu"},
	} {
		q.TopK = total
		want, err := mem.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		SameScores(t, name, fmt.Sprintf("%+v", q), want.Hits, got.Hits)
		// The top 10 agree in order too, ties included.
		q.TopK = 10
		want, _ = mem.Search(ctx, q)
		got, _ = e.Search(ctx, q)
		if diff := gocmp.Diff(IDs(want.Hits), IDs(got.Hits)); diff != "" && !nearTie(want.Hits) {
			t.Errorf("%q top 10 (-memory +%s):\n%s", q.Text, name, diff)
		}
	}
	for _, index := range []string{"a", "b", "never-indexed"} {
		mn := mem.Len(index)
		n, err := e.Len(ctx, index)
		if err != nil || n != mn {
			t.Errorf("Len(%q) = %d, %v; memory has %d", index, n, err, mn)
		}
	}
}
