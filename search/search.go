// Package search defines the contract of AgentCraft's document search: the
// documents a knowledge base indexes, the queries it answers (full-text BM25,
// vector similarity or a hybrid of both) and the Engine interface that every
// backend implements (search/memory now; SQLite and PostgreSQL later).
//
// A caller builds an engine, indexes documents and searches:
//
//	eng, _ := memory.New(&memory.Options{Embedder: emb})
//	_ = eng.Index(ctx, search.Document{ID: "d1", Index: "kb", Text: "..."})
//	res, _ := eng.Search(ctx, search.Query{Text: "...", Indexes: []string{"kb"}})
//
// Hybrid results are combined with Reciprocal Rank Fusion (FuseRRF). When an
// engine has no embedder, or the embedder fails at query time, a hybrid query
// still answers from BM25 and says so in Result.Note. Nothing in this package
// invents vectors: vector search needs a real Embedder.
package search

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Document is one unit of retrieval (usually a chunk of a source file).
// Engines index Title and Text together as one field.
type Document struct {
	// ID identifies the document within its Index. Indexing a document whose
	// ID already exists replaces it.
	ID string
	// Index names the collection (knowledge base) the document belongs to.
	Index string
	// Title is optional; it is searched together with Text.
	Title string
	// Text is the searchable body.
	Text string
	// Metadata holds exact-match attributes used by Query.Filter. Engines
	// keep their own copy.
	Metadata map[string]string
}

// Mode selects how a query is answered.
type Mode string

const (
	// ModeAuto (the zero value) is ModeHybrid when the engine has an
	// embedder and ModeFulltext otherwise.
	ModeAuto Mode = ""
	// ModeFulltext ranks by BM25 over the tokenized title and text.
	ModeFulltext Mode = "fulltext"
	// ModeVector ranks by cosine similarity of embeddings; it needs an Embedder.
	ModeVector Mode = "vector"
	// ModeHybrid fuses the full-text and vector rankings with RRF.
	ModeHybrid Mode = "hybrid"
)

// DefaultTopK is the number of hits returned when Query.TopK is zero.
const DefaultTopK = 10

// Query is one search request.
type Query struct {
	Text string
	// Mode defaults to ModeAuto.
	Mode Mode
	// TopK is the number of hits wanted; 0 means DefaultTopK.
	TopK int
	// Indexes restricts the search to these indexes; empty means all.
	Indexes []string
	// Filter keeps only documents whose Metadata has every key with exactly
	// the given value.
	Filter map[string]string
}

// Validate reports the first problem with q, naming the field and the fix.
func (q Query) Validate() error {
	switch q.Mode {
	case ModeAuto, ModeFulltext, ModeVector, ModeHybrid:
	default:
		return fmt.Errorf("search: query mode %q is unknown: use %q, %q, %q or leave it empty", q.Mode, ModeFulltext, ModeVector, ModeHybrid)
	}
	if q.TopK < 0 {
		return fmt.Errorf("search: query top_k is %d: use a positive number or 0 for the default %d", q.TopK, DefaultTopK)
	}
	if strings.TrimSpace(q.Text) == "" {
		return fmt.Errorf("search: query text is empty: send the words to search for")
	}
	return nil
}

// Hit is one ranked document.
type Hit struct {
	ID    string
	Index string
	// Score is the BM25 score (fulltext), the cosine similarity (vector) or
	// the fused RRF score (hybrid). Scores of different modes are not
	// comparable; within one Result higher is better.
	Score float64
	Title string
	Text  string
	// Metadata is the engine's copy; callers must not modify it.
	Metadata map[string]string
}

// Result is the answer to a Query.
type Result struct {
	// Hits are ordered best first.
	Hits []Hit
	// Mode is the mode actually used (ModeFulltext when a hybrid query fell
	// back to BM25).
	Mode Mode
	// Note explains a degraded answer, e.g. "embedder unavailable: fulltext
	// results only"; empty otherwise.
	Note string
}

// Engine indexes documents and answers queries. Implementations are safe for
// concurrent use.
type Engine interface {
	// Index adds or replaces documents (keyed by Index and ID).
	Index(ctx context.Context, docs ...Document) error
	// Delete removes documents from one index; unknown IDs are ignored.
	Delete(ctx context.Context, index string, ids ...string) error
	// Search answers q.
	Search(ctx context.Context, q Query) (Result, error)
}

// Embedder turns texts into vectors with a real embedding model (an
// OpenAI-compatible /v1/embeddings endpoint, for example).
type Embedder interface {
	// Embed returns one vector of length Dimension() per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Dimension is the length of every vector Embed returns, or 0 while
	// it is not known yet (an embedder that learns it from its first
	// answer); after a successful Embed it is the length returned.
	Dimension() int
}

// ErrNoEmbedder is returned for a ModeVector query on an engine without an
// Embedder.
var ErrNoEmbedder = errors.New("search: vector mode needs an embedder: configure one or use fulltext mode")

// Matches reports whether metadata satisfies an exact-match filter.
func Matches(metadata, filter map[string]string) bool {
	for k, v := range filter {
		got, ok := metadata[k]
		if !ok || got != v {
			return false
		}
	}
	return true
}
