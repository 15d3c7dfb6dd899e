// Package sqlengine holds what the SQL-backed engines, search/sqlite and
// search/postgres, share above their statements: their ranking options
// checked and defaulted, the prologue of Index (checks, the last of each
// document, embedding and tokenizing before the write transaction), the row
// of an index, which indexes a query searches, and the vector search over
// the indexes' cached vectors. Each engine runs the SQL and wraps the
// errors, which carry no engine prefix unless a function takes one.
package sqlengine

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/internal/engine"
	"github.com/agentcraftlab/agentcraft/search/internal/postings"
	"github.com/agentcraftlab/agentcraft/search/internal/rank"
	"github.com/agentcraftlab/agentcraft/search/internal/vec"
	"github.com/agentcraftlab/agentcraft/search/memory"
	"github.com/agentcraftlab/agentcraft/search/token"
)

// Options are the ranking options of the engines' Options, documented
// there.
type Options struct {
	BM25                         *memory.BM25
	Tokenizer                    *token.Tokenizer
	Embedder                     search.Embedder
	RRFK                         float64
	FulltextWeight, VectorWeight float64
	HybridDepth                  int
	Logger                       *slog.Logger
	PostingsCacheBytes           int64
}

// Config is Options checked, with their defaults filled in.
type Config struct {
	BM25      memory.BM25
	Tokenizer *token.Tokenizer
	Embedder  search.Embedder // nil: full text only
	Logger    *slog.Logger    // never nil
	// Searcher is complete but for Fulltext and Vector, which the engine
	// sets to its own.
	Searcher engine.Searcher
	// Lists is the posting cache; nil when disabled.
	Lists *postings.Cache
}

// Configure checks o and fills its defaults as search/memory does; prefix
// ("sqlite search") starts its errors and the Searcher's.
func Configure(prefix string, o *Options) (Config, error) {
	c := Config{BM25: memory.DefaultBM25, Tokenizer: o.Tokenizer, Embedder: o.Embedder, Logger: o.Logger}
	if o.BM25 != nil {
		c.BM25 = *o.BM25
	}
	if c.BM25.K1 < 0 || c.BM25.B < 0 || c.BM25.B > 1 {
		return Config{}, fmt.Errorf("%s: bm25 k1=%v b=%v: use k1 >= 0 and 0 <= b <= 1", prefix, c.BM25.K1, c.BM25.B)
	}
	if c.Tokenizer == nil {
		c.Tokenizer = token.New(nil)
	}
	// Dimension 0 means not known yet: embed.Client learns it from its
	// first answer, and every vector is checked against it after Embed.
	if c.Embedder != nil && c.Embedder.Dimension() < 0 {
		return Config{}, fmt.Errorf("%s: embedder dimension %d: must be positive, or 0 to learn it from the first answer", prefix, c.Embedder.Dimension())
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.Searcher = engine.Searcher{
		Prefix:   prefix,
		Embedder: c.Embedder,
		RRFK:     o.RRFK,
		Weights:  []float64{o.FulltextWeight, o.VectorWeight},
		Depth:    o.HybridDepth,
		Logger:   c.Logger,
	}
	if c.Searcher.RRFK <= 0 {
		c.Searcher.RRFK = search.DefaultRRFK
	}
	if c.Searcher.Depth <= 0 {
		c.Searcher.Depth = memory.DefaultHybridDepth
	}
	cacheBytes := o.PostingsCacheBytes
	if cacheBytes == 0 {
		cacheBytes = postings.DefaultCacheBytes
	}
	c.Lists = postings.NewCache(cacheBytes)
	return c, nil
}

// Batch is a batch of documents ready for the write transaction.
type Batch struct {
	// Docs are the batch's documents, the last of each (Index, ID), so a
	// batch behaves like indexing its documents one by one.
	Docs []search.Document
	// Terms and Vectors are those of Docs; Vectors is nil without an
	// embedder.
	Terms   [][]string
	Vectors [][]float32
	// Names are the indexes of Docs in name order, the order their rows
	// are locked in (so two batches cannot deadlock); ByIndex holds the
	// positions in Docs of each index's documents, in batch order.
	Names   []string
	ByIndex map[string][]int
}

// Prepare checks docs (every one has an ID and an Index, and passes check
// when it is not nil), embeds them with emb when it is not nil and
// tokenizes them with tok, the expensive parts of indexing, done before
// the write transaction. All vectors are computed first; if that fails
// nothing is indexed and the error is returned, so a caller can retry the
// batch. An empty batch is nil.
func Prepare(ctx context.Context, tok *token.Tokenizer, emb search.Embedder, docs []search.Document, check func(search.Document) error) (*Batch, error) {
	for i, d := range docs {
		if d.ID == "" || d.Index == "" {
			return nil, fmt.Errorf("index document %d: id and index must be set", i)
		}
		if check == nil {
			continue
		}
		if err := check(d); err != nil {
			return nil, fmt.Errorf("index document %d (%q): %w", i, d.ID, err)
		}
	}
	if len(docs) == 0 {
		return nil, nil
	}
	b := &Batch{Docs: lastOfEach(docs), ByIndex: make(map[string][]int)}
	if emb != nil {
		var err error
		if b.Vectors, err = engine.EmbedDocuments(ctx, emb, b.Docs); err != nil {
			return nil, err
		}
	}
	var err error
	if b.Terms, err = engine.Tokenize(ctx, tok, b.Docs); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	for i, d := range b.Docs {
		b.ByIndex[d.Index] = append(b.ByIndex[d.Index], i)
	}
	b.Names = slices.Sorted(maps.Keys(b.ByIndex))
	return b, nil
}

// EachIndex calls write with each index of the batch, in Names order, and
// the positions of its documents; it stops at the first error.
func (b *Batch) EachIndex(write func(name string, at []int) error) error {
	for _, name := range b.Names {
		if err := write(name, b.ByIndex[name]); err != nil {
			return err
		}
	}
	return nil
}

// IDs returns the document IDs of Docs[at...].
func (b *Batch) IDs(at []int) []string {
	ids := make([]string, len(at))
	for i, j := range at {
		ids[i] = b.Docs[j].ID
	}
	return ids
}

// Frequencies are the term statistics of the documents Docs[at...] of one
// index.
type Frequencies struct {
	// TF holds each document's term frequencies, in the order of at.
	TF []map[string]int32
	// DF holds how many of the documents hold each term.
	DF map[string]int64
	// Order is the distinct terms in first-seen order, so term ids are
	// assigned in a stable order.
	Order []string
}

// Frequencies counts the terms of Docs[at...].
func (b *Batch) Frequencies(at []int) Frequencies {
	f := Frequencies{TF: make([]map[string]int32, len(at)), DF: make(map[string]int64)}
	for i, j := range at {
		tf := make(map[string]int32, len(b.Terms[j]))
		for _, t := range b.Terms[j] {
			if tf[t] == 0 {
				if f.DF[t] == 0 {
					f.Order = append(f.Order, t)
				}
				f.DF[t]++
			}
			tf[t]++
		}
		f.TF[i] = tf
	}
	return f
}

// TermID is a term's row id; Fresh means it had no postings before the
// batch (its stored df equals the batch's: a term whose df fell to 0 has
// no segments left, as postings.Remove drops empty ones).
type TermID struct {
	ID    int64
	Fresh bool
}

// CheckTermIDs reports the first term of order that an upsert of the terms
// returned no id for.
func CheckTermIDs(order []string, ids map[string]TermID) error {
	for _, t := range order {
		if _, ok := ids[t]; !ok {
			return fmt.Errorf("term %q: no id returned", t)
		}
	}
	return nil
}

// lastOfEach drops every document that a later one with the same Index and
// ID replaces.
func lastOfEach(docs []search.Document) []search.Document {
	type key struct{ index, id string }
	last := make(map[key]int, len(docs))
	for i, d := range docs {
		last[key{d.Index, d.ID}] = i
	}
	if len(last) == len(docs) {
		return docs
	}
	out := make([]search.Document, 0, len(last))
	for i, d := range docs {
		if last[key{d.Index, d.ID}] == i {
			out = append(out, d)
		}
	}
	return out
}

// EncodeMetadata returns the JSON of a document's metadata, nil for none:
// stored as NULL, a document without metadata comes back with nil
// Metadata, as from search/memory.
func EncodeMetadata(m map[string]string) ([]byte, error) {
	if m == nil {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode metadata: %w", err)
	}
	return b, nil
}

// Index is one row of search_indexes: an index's id, name, statistics
// and generation (bumped by every write to it).
type Index struct {
	ID             int64
	Name           string
	Docs, TotalLen int64
	Gen            int64
}

// Candidate is a scored document not yet read.
type Candidate = rank.Candidate[*Index]

// Selected reads rows of (id, name, docs, total_len, gen) from
// search_indexes and returns the indexes q searches: those it names, or
// every one. The caller closes rows.
func Selected(rows rank.Rows, q search.Query) ([]*Index, error) {
	var out []*Index
	for rows.Next() {
		ix := &Index{}
		if err := rows.Scan(&ix.ID, &ix.Name, &ix.Docs, &ix.TotalLen, &ix.Gen); err != nil {
			return nil, err
		}
		if len(q.Indexes) == 0 || slices.Contains(q.Indexes, ix.Name) {
			out = append(out, ix)
		}
	}
	return out, rows.Err()
}

// Vectors returns the vectors of ix at its generation from cache, or
// loads them with load (which calls add with each document's row id and
// vector blob) and caches them. A blob of the wrong size is logged and
// skipped.
func Vectors(ctx context.Context, cache *vec.Cache, logger *slog.Logger, ix *Index, load func(add func(doc int64, blob []byte)) error) (*vec.Set, error) {
	if c := cache.Get(ix.ID, ix.Gen); c != nil {
		return c, nil
	}
	c := &vec.Set{Name: ix.Name, Gen: ix.Gen}
	err := load(func(doc int64, blob []byte) {
		if !c.Add(doc, blob) {
			logger.WarnContext(ctx, "search_vector_skipped", "index", ix.Name, "doc_rowid", doc, "bytes", len(blob), "dim", c.Dim)
		}
	})
	if err != nil {
		return nil, err
	}
	cache.Put(ix.ID, c)
	return c, nil
}

// Vector returns the k best hits of the indexes ixs by cosine similarity
// to the unit vector qv. vectors returns an index's vectors (Vectors, in
// the engine's read transaction); materialize reads candidates into the
// hits that exist and pass the query's filter, at most k of them, as
// rank.Best does; filtered says there is a filter, so more candidates are
// taken until k pass.
func Vector(ixs []*Index, vectors func(*Index) (*vec.Set, error), qv []float32, k int, filtered bool,
	materialize func([]Candidate) ([]search.Hit, error)) ([]search.Hit, error) {
	sets := make([]*vec.Set, len(ixs))
	for i, ix := range ixs {
		var err error
		if sets[i], err = vectors(ix); err != nil {
			return nil, err
		}
	}
	var hits []search.Hit
	err := vec.Widen(sets, qv, k, filtered, func(top [][]vec.Scored) (bool, error) {
		var cands []Candidate
		for i, rows := range top {
			for _, t := range rows {
				cands = append(cands, Candidate{Score: float64(t.Score), Doc: sets[i].Docs[t.Row], Index: ixs[i]})
			}
		}
		var err error
		hits, err = materialize(cands)
		return len(hits) >= k, err
	})
	return hits, err
}

// QueryTerms counts the terms of a query: repeated terms count again, as
// Lucene's BooleanQuery does, so qtf holds each term's count and distinct
// the terms in first-seen order.
func QueryTerms(terms []string) (distinct []string, qtf map[string]float64) {
	qtf = make(map[string]float64, len(terms))
	for _, t := range terms {
		if qtf[t] == 0 {
			distinct = append(distinct, t)
		}
		qtf[t]++
	}
	return distinct, qtf
}
