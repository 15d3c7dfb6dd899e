// Package engine holds the parts of a search.Engine that search/memory,
// search/sqlite and search/postgres share: the text a document is indexed
// by, parallel tokenization, embedding with its checks, and the dispatch of
// Search over the modes. Sharing them keeps the three engines answering
// alike, which their conformance and quality tests compare.
//
// Errors carry no engine prefix; each engine wraps them with its own.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/internal/vec"
	"github.com/agentcraftlab/agentcraft/search/token"
)

// IndexText is what both the tokenizer and the embedder see: the title, a
// newline, then the text.
func IndexText(d search.Document) string {
	if d.Title == "" {
		return d.Text
	}
	return d.Title + "\n" + d.Text
}

// minDocsPerWorker keeps small batches on the calling goroutine.
const minDocsPerWorker = 32

// Tokenize splits every document into terms, on all CPUs for large batches
// (it is the expensive part of indexing). It returns ctx's error if ctx ends
// first.
func Tokenize(ctx context.Context, tok *token.Tokenizer, docs []search.Document) ([][]string, error) {
	terms := make([][]string, len(docs))
	workers := min(runtime.GOMAXPROCS(0), len(docs)/minDocsPerWorker)
	if workers <= 1 {
		for i, d := range docs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			terms[i] = tok.Tokens(IndexText(d))
		}
		return terms, nil
	}
	var wg sync.WaitGroup
	var next atomic.Int64
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(docs) {
					return
				}
				terms[i] = tok.Tokens(IndexText(docs[i]))
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return terms, nil
}

// EmbedDocuments returns one vector per document, each of emb's dimension.
func EmbedDocuments(ctx context.Context, emb search.Embedder, docs []search.Document) ([][]float32, error) {
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = IndexText(d)
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed documents: %w", err)
	}
	if len(vecs) != len(docs) {
		return nil, fmt.Errorf("embed documents: got %d vectors for %d texts", len(vecs), len(docs))
	}
	for i, v := range vecs {
		if len(v) != emb.Dimension() {
			return nil, fmt.Errorf("embed document %q: vector length %d, embedder dimension %d", docs[i].ID, len(v), emb.Dimension())
		}
	}
	return vecs, nil
}

// EmbedQuery returns the unit vector of text.
func EmbedQuery(ctx context.Context, emb search.Embedder, text string) ([]float32, error) {
	vs, err := emb.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	if len(vs) != 1 || len(vs[0]) != emb.Dimension() {
		return nil, fmt.Errorf("embed query: want one vector of length %d", emb.Dimension())
	}
	v := vs[0]
	if !vec.Normalize(v) {
		return nil, errors.New("embed query: zero vector")
	}
	return v, nil
}

// Searcher answers a search.Query by dispatching on its mode to an
// engine's two rankings, fusing them for hybrid search as search/memory
// does, including the degraded answers without a working embedder.
type Searcher struct {
	// Prefix starts the engine's error messages ("memory", "sqlite search").
	Prefix string
	// Embedder enables vector and hybrid search; nil means full-text only.
	Embedder search.Embedder
	// RRFK, Weights and Depth are as in search.FuseRRF and the engines'
	// HybridDepth option.
	RRFK    float64
	Weights []float64
	Depth   int
	// Logger records a failed query embedding; nil means no log.
	Logger *slog.Logger
	// Fulltext and Vector return the k best hits of q by BM25 and by cosine
	// similarity to the unit vector qv.
	Fulltext func(ctx context.Context, q search.Query, k int) ([]search.Hit, error)
	Vector   func(ctx context.Context, q search.Query, qv []float32, k int) ([]search.Hit, error)
}

// Search answers q; see search.Mode for the modes.
func (s *Searcher) Search(ctx context.Context, q search.Query) (search.Result, error) {
	if err := q.Validate(); err != nil {
		return search.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return search.Result{}, fmt.Errorf("%s: search: %w", s.Prefix, err)
	}
	k := q.TopK
	if k == 0 {
		k = search.DefaultTopK
	}
	mode := q.Mode
	if mode == search.ModeAuto {
		mode = search.ModeFulltext
		if s.Embedder != nil {
			mode = search.ModeHybrid
		}
	}
	switch mode {
	case search.ModeFulltext:
		hits, err := s.Fulltext(ctx, q, k)
		if err != nil {
			return search.Result{}, err
		}
		return search.Result{Hits: hits, Mode: mode}, nil
	case search.ModeVector:
		if s.Embedder == nil {
			return search.Result{}, search.ErrNoEmbedder
		}
		qv, err := s.embedQuery(ctx, q.Text)
		if err != nil {
			return search.Result{}, err
		}
		hits, err := s.Vector(ctx, q, qv, k)
		if err != nil {
			return search.Result{}, err
		}
		return search.Result{Hits: hits, Mode: mode}, nil
	}
	// Hybrid.
	if s.Embedder == nil {
		hits, err := s.Fulltext(ctx, q, k)
		if err != nil {
			return search.Result{}, err
		}
		return search.Result{Hits: hits, Mode: search.ModeFulltext, Note: "no embedder configured: fulltext results only"}, nil
	}
	qv, err := s.embedQuery(ctx, q.Text)
	if err != nil {
		if s.Logger != nil {
			s.Logger.WarnContext(ctx, "search_embed_query_failed", "error", err)
		}
		hits, err := s.Fulltext(ctx, q, k)
		if err != nil {
			return search.Result{}, err
		}
		return search.Result{Hits: hits, Mode: search.ModeFulltext, Note: "embedder unavailable: fulltext results only"}, nil
	}
	depth := max(s.Depth, k)
	lexical, err := s.Fulltext(ctx, q, depth)
	if err != nil {
		return search.Result{}, err
	}
	semantic, err := s.Vector(ctx, q, qv, depth)
	if err != nil {
		return search.Result{}, err
	}
	fused := search.FuseRRF(s.RRFK, s.Weights, lexical, semantic)
	if len(fused) > k {
		fused = fused[:k]
	}
	return search.Result{Hits: fused, Mode: search.ModeHybrid}, nil
}

func (s *Searcher) embedQuery(ctx context.Context, text string) ([]float32, error) {
	v, err := EmbedQuery(ctx, s.Embedder, text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Prefix, err)
	}
	return v, nil
}
