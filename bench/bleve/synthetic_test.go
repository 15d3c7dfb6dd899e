package bleve

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/agentcraftlab/agentcraft/search"
)

// The synthetic collection is load, not meaning: it exercises the engines
// at a size where the work per query grows (100k chunks, 768-dimension
// vectors), and says nothing about ranking quality.
const (
	synthChunks   = 100_000
	synthVocab    = 50_000
	synthMinWords = 60
	synthMaxWords = 150
	// synthZipfS is the Zipf exponent of word frequencies (English text is
	// close to 1; math/rand needs s > 1).
	synthZipfS = 1.1
	// synthQueryMinRank keeps the most frequent words out of queries: in
	// real text they are stop words, which every engine drops.
	synthQueryMinRank = 100
	synthQueries      = 500
	synthDim          = 768
	// synthBatch is the size of one Index call (one bleve batch) when
	// ingesting: a bulk load as a knowledge base import would do it.
	synthBatch = 1000
)

// synthWord is word number rank (0 the most frequent) of the vocabulary:
// three consonant-vowel syllables, so none is an English stop word.
func synthWord(rank int) string {
	const cons, vows = "bcdfghjklmnprstvwxz", "aeiou"
	var b strings.Builder
	n := rank
	for range 3 {
		s := n % (len(cons) * len(vows))
		n /= len(cons) * len(vows)
		b.WriteByte(cons[s/len(vows)])
		b.WriteByte(vows[s%len(vows)])
	}
	return b.String()
}

type synthetic struct {
	docs    []search.Document
	queries []string
}

var (
	synthOnce sync.Once
	synth     *synthetic
)

// loadSynthetic generates the chunks and queries once, deterministically
// (seeded PCG): Zipf-distributed words, 60–150 per chunk.
func loadSynthetic() *synthetic {
	synthOnce.Do(func() {
		rng := rand.New(rand.NewPCG(2026, 12))
		zipf := rand.NewZipf(rng, synthZipfS, 1, synthVocab-1)
		vocab := make([]string, synthVocab)
		for i := range vocab {
			vocab[i] = synthWord(i)
		}
		s := &synthetic{docs: make([]search.Document, synthChunks)}
		var b strings.Builder
		for i := range s.docs {
			b.Reset()
			n := synthMinWords + rng.IntN(synthMaxWords-synthMinWords+1)
			for j := range n {
				if j > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(vocab[zipf.Uint64()])
			}
			s.docs[i] = search.Document{ID: fmt.Sprintf("c%06d", i), Index: "synthetic", Text: b.String()}
		}
		for range synthQueries {
			n := 2 + rng.IntN(5)
			words := make([]string, 0, n)
			for len(words) < n {
				if r := zipf.Uint64(); r >= synthQueryMinRank {
					words = append(words, vocab[r])
				}
			}
			s.queries = append(s.queries, strings.Join(words, " "))
		}
		synth = s
	})
	return synth
}

// hashEmbedder is a benchmark fixture, not a model: it maps a text to a
// random unit-length vector drawn from a PCG seeded with the text's FNV-1a
// hash, so a text always gets the same vector and the engines' vector and
// hybrid paths can be timed at 768 dimensions without an embedding model.
// Similarities between its vectors mean nothing.
type hashEmbedder struct{ dim int }

var _ search.Embedder = hashEmbedder{}

func (h hashEmbedder) Dimension() int { return h.dim }

func (h hashEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f := fnv.New64a()
		f.Write([]byte(t))
		seed := f.Sum64()
		rng := rand.New(rand.NewPCG(seed, binary.LittleEndian.Uint64([]byte("agentcrf"))))
		v := make([]float32, h.dim)
		var norm float64
		for j := range v {
			x := rng.NormFloat64()
			v[j] = float32(x)
			norm += x * x
		}
		if norm == 0 {
			return nil, fmt.Errorf("hashEmbedder: zero vector for %q", t)
		}
		// The engines normalise too; unit vectors keep the fixture honest
		// about what it is (random directions).
		inv := float32(1 / math.Sqrt(norm))
		for j := range v {
			v[j] *= inv
		}
		out[i] = v
	}
	return out, nil
}

// synthEngines are the engines of the 100k benchmarks, what each measures
// (bleve has full text only) and the documents per Index call when
// ingesting.
var synthEngines = []struct {
	name  string
	open  func(tb testing.TB) engine
	modes []search.Mode
	batch int
}{
	{nameMemory, func(tb testing.TB) engine { return openMemory(tb, hashEmbedder{synthDim}) }, []search.Mode{search.ModeFulltext, search.ModeVector, search.ModeHybrid}, synthBatch},
	{nameSQLite, func(tb testing.TB) engine { return openSQLite(tb, hashEmbedder{synthDim}) }, []search.Mode{search.ModeFulltext, search.ModeVector, search.ModeHybrid}, synthBatch},
	// In memory, scorch never merges segments: with batches of 1000 it
	// answers from 100 segments (measured: BM25 p50 8.2 ms, 1,823
	// chunks/s). One batch of 100k is its best case and what a bulk load
	// into an in-memory bleve index should do.
	{nameBleve, openBleve, []search.Mode{search.ModeFulltext}, synthChunks},
	{nameBleveDisk, openBleveDisk, []search.Mode{search.ModeFulltext}, synthBatch},
}

var synthCache = map[string]*cached{nameMemory: {}, nameSQLite: {}, nameBleve: {}, nameBleveDisk: {}}

// benchName is the sub-benchmark name of a query mode.
func benchName(m search.Mode) string {
	if m == search.ModeFulltext {
		return "bm25"
	}
	return string(m)
}

// BenchmarkSynthetic100k ingests 100,000 synthetic chunks (ingest: into a
// new engine per op, in batches of 1000 (bleve in memory: one batch),
// vectors from hashEmbedder included) and queries them (bm25, vector, hybrid: one top-10 query per
// op). Each engine's index is built once, by its ingest benchmark or by
// the first query benchmark that needs it, and shared by its queries.
func BenchmarkSynthetic100k(b *testing.B) {
	s := loadSynthetic()
	for _, c := range synthEngines {
		b.Run(c.name, func(b *testing.B) {
			b.Run("ingest", func(b *testing.B) {
				benchIngest(b, c.open, s.docs, c.batch, "chunks/s", synthCache[c.name])
			})
			for _, m := range c.modes {
				b.Run(benchName(m), func(b *testing.B) {
					e := synthCache[c.name].get(b, func(tb testing.TB) engine {
						e := c.open(tb)
						if err := ingest(context.Background(), e, s.docs, c.batch); err != nil {
							tb.Fatalf("%s: ingest: %v", c.name, err)
						}
						return e
					})
					benchQuery(b, e, s.queries, m)
				})
			}
		})
	}
}

// TestSyntheticDeterministic checks that the generator and the embedder
// give the same load on every run, which comparing runs relies on, and
// that chunks and queries have the promised shape.
func TestSyntheticDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 100k chunks")
	}
	s := loadSynthetic()
	if len(s.docs) != synthChunks || len(s.queries) != synthQueries {
		t.Fatalf("got %d chunks and %d queries, want %d and %d", len(s.docs), len(s.queries), synthChunks, synthQueries)
	}
	for _, i := range []int{0, 1, synthChunks / 2, synthChunks - 1} {
		if n := len(strings.Fields(s.docs[i].Text)); n < synthMinWords || n > synthMaxWords {
			t.Errorf("chunk %d has %d words, want %d to %d", i, n, synthMinWords, synthMaxWords)
		}
	}
	// The first chunk and query are fixed by the seed; a change here means
	// numbers measured before (README.md) are no longer comparable.
	if got, want := s.docs[0].Text[:40], "bababa bebaba jedaba wibaba secobe bulib"; got != want {
		t.Errorf("first chunk starts %q, want %q", got, want)
	}
	if got, want := s.queries[0], "xibeba kitaba wobiba pebeba"; got != want {
		t.Errorf("first query %q, want %q", got, want)
	}
	emb := hashEmbedder{synthDim}
	a, err := emb.Embed(t.Context(), []string{s.queries[0], s.queries[1]})
	if err != nil {
		t.Fatal(err)
	}
	again, err := emb.Embed(t.Context(), []string{s.queries[0]})
	if err != nil {
		t.Fatal(err)
	}
	var dot, self float64
	for j := range a[0] {
		if a[0][j] != again[0][j] {
			t.Fatalf("hashEmbedder gave two vectors for the same text (dimension %d)", j)
		}
		dot += float64(a[0][j]) * float64(a[1][j])
		self += float64(a[0][j]) * float64(a[0][j])
	}
	if len(a[0]) != synthDim || self < 0.999 || self > 1.001 {
		t.Errorf("vector length %d norm² %.4f, want %d and 1", len(a[0]), self, synthDim)
	}
	if dot > 0.2 || dot < -0.2 {
		t.Errorf("two texts' vectors have cosine %.3f: want near 0 for random directions", dot)
	}
}
