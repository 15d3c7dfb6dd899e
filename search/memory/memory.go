// Package memory is an in-memory search.Engine: a BM25 inverted index per
// index name, brute-force cosine search over normalised float32 vectors, and
// hybrid ranking by Reciprocal Rank Fusion. It suits tests, evaluation and
// small knowledge bases; everything is lost when the process exits.
//
// Title and text are indexed as one field (title, a newline, then text), as
// Anserini's "flat" BEIR baselines do; the document length is the number of
// terms of both.
//
// BM25 scores a document d for query q as
//
//	sum over query terms t (with repeats) of idf(t) * tf / (tf + k1*(1 - b + b*|d|/avgdl))
//	idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))
//
// which is Lucene's formula (the constant (k1+1) factor is left out; it does
// not change rankings). Statistics are per index, so scores from different
// indexes are merged as they are.
package memory

import (
	"context"
	"fmt"
	"maps"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/token"
)

// BM25 holds the ranking parameters.
type BM25 struct {
	// K1 is the term-frequency saturation.
	K1 float64
	// B is the strength of document-length normalisation (0 = none, 1 = full).
	B float64
}

// DefaultBM25 is k1=1.5, b=0.75, chosen by search/eval among (1.2, 0.75),
// (0.9, 0.4) (Anserini's), (1.2, 0.4), (1.5, 0.75) and (0.9, 0.75) with
// the default tokenizer: it is best on SciFact (nDCG@10 0.6896) and CACM
// (MAP 0.3336), and 0.9457 on JSQuAD where the best is 0.9493. With each
// anchor's own qrels only it and (1.2, 0.4) clear all three published
// anchors; it has the higher mean. Differences are within 0.01 and the grid
// is coarse on purpose: finer tuning on the test collections would overfit.
var DefaultBM25 = BM25{K1: 1.5, B: 0.75}

// DefaultHybridDepth is how many candidates each ranking contributes to RRF.
const DefaultHybridDepth = 100

// Options configures an Engine. Nil options mean defaults.
type Options struct {
	// BM25 parameters; nil means DefaultBM25. Values are used as given.
	BM25 *BM25
	// Tokenizer for documents and queries; nil means token.New(nil).
	Tokenizer *token.Tokenizer
	// Embedder enables vector and hybrid search; nil means full-text only.
	Embedder search.Embedder
	// RRFK is the RRF rank constant; 0 means search.DefaultRRFK (60).
	RRFK float64
	// FulltextWeight and VectorWeight weight the two rankings in RRF;
	// 0 means 1.
	FulltextWeight, VectorWeight float64
	// HybridDepth is the number of candidates taken from each ranking
	// before fusion; 0 means DefaultHybridDepth (at least Query.TopK).
	HybridDepth int
}

// Engine is an in-memory search.Engine, safe for concurrent use.
type Engine struct {
	bm25    BM25
	tok     *token.Tokenizer
	emb     search.Embedder
	rrfK    float64
	weights []float64
	depth   int
	mu      sync.RWMutex
	indexes map[string]*index // guarded by mu
}

var _ search.Engine = (*Engine)(nil)

// New returns an empty Engine.
func New(opts *Options) (*Engine, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	e := &Engine{bm25: DefaultBM25, tok: o.Tokenizer, emb: o.Embedder, rrfK: o.RRFK, depth: o.HybridDepth, indexes: make(map[string]*index)}
	if o.BM25 != nil {
		e.bm25 = *o.BM25
	}
	if e.bm25.K1 < 0 || e.bm25.B < 0 || e.bm25.B > 1 {
		return nil, fmt.Errorf("memory: bm25 k1=%v b=%v: use k1 >= 0 and 0 <= b <= 1", e.bm25.K1, e.bm25.B)
	}
	if e.tok == nil {
		e.tok = token.New(nil)
	}
	if e.emb != nil && e.emb.Dimension() <= 0 {
		return nil, fmt.Errorf("memory: embedder dimension %d: must be positive", e.emb.Dimension())
	}
	if e.rrfK <= 0 {
		e.rrfK = search.DefaultRRFK
	}
	if e.depth <= 0 {
		e.depth = DefaultHybridDepth
	}
	e.weights = []float64{o.FulltextWeight, o.VectorWeight}
	return e, nil
}

// indexText is what both the tokenizer and the embedder see.
func indexText(d search.Document) string {
	if d.Title == "" {
		return d.Text
	}
	return d.Title + "\n" + d.Text
}

// Index adds or replaces docs. With an Embedder, all vectors are computed
// first; if that fails nothing is indexed and the error is returned, so a
// caller can retry the batch.
func (e *Engine) Index(ctx context.Context, docs ...search.Document) error {
	for i, d := range docs {
		if d.ID == "" || d.Index == "" {
			return fmt.Errorf("memory: index document %d: id and index must be set", i)
		}
	}
	var vecs [][]float32
	if e.emb != nil && len(docs) > 0 {
		texts := make([]string, len(docs))
		for i, d := range docs {
			texts[i] = indexText(d)
		}
		var err error
		vecs, err = e.emb.Embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("memory: embed documents: %w", err)
		}
		if len(vecs) != len(docs) {
			return fmt.Errorf("memory: embed documents: got %d vectors for %d texts", len(vecs), len(docs))
		}
		for i, v := range vecs {
			if len(v) != e.emb.Dimension() {
				return fmt.Errorf("memory: embed document %q: vector length %d, embedder dimension %d", docs[i].ID, len(v), e.emb.Dimension())
			}
		}
	}
	terms, err := e.tokenize(ctx, docs)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, d := range docs {
		ix := e.indexes[d.Index]
		if ix == nil {
			ix = newIndex()
			e.indexes[d.Index] = ix
		}
		var v []float32
		if vecs != nil {
			v = vecs[i]
		}
		ix.add(d, maps.Clone(d.Metadata), terms[i], v)
	}
	return nil
}

// tokenize splits every document into terms, outside the lock (it is the
// expensive part of indexing) and on all CPUs for large batches.
func (e *Engine) tokenize(ctx context.Context, docs []search.Document) ([][]string, error) {
	terms := make([][]string, len(docs))
	workers := min(runtime.GOMAXPROCS(0), len(docs)/minDocsPerWorker)
	if workers <= 1 {
		for i, d := range docs {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("memory: index: %w", err)
			}
			terms[i] = e.tok.Tokens(indexText(d))
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
				terms[i] = e.tok.Tokens(indexText(docs[i]))
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memory: index: %w", err)
	}
	return terms, nil
}

// minDocsPerWorker keeps small batches on the calling goroutine.
const minDocsPerWorker = 32

// Delete removes ids from index; unknown ids are ignored.
func (e *Engine) Delete(ctx context.Context, index string, ids ...string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memory: delete: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	ix := e.indexes[index]
	if ix == nil {
		return nil
	}
	for _, id := range ids {
		ix.remove(id)
	}
	return nil
}

// Len reports the number of live documents in index.
func (e *Engine) Len(index string) int {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if ix := e.indexes[index]; ix != nil {
		return ix.live
	}
	return 0
}

// Search answers q; see search.Mode for the modes.
func (e *Engine) Search(ctx context.Context, q search.Query) (search.Result, error) {
	if err := q.Validate(); err != nil {
		return search.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return search.Result{}, fmt.Errorf("memory: search: %w", err)
	}
	k := q.TopK
	if k == 0 {
		k = search.DefaultTopK
	}
	mode := q.Mode
	if mode == search.ModeAuto {
		mode = search.ModeFulltext
		if e.emb != nil {
			mode = search.ModeHybrid
		}
	}
	switch mode {
	case search.ModeFulltext:
		return search.Result{Hits: e.fulltext(q, k), Mode: mode}, nil
	case search.ModeVector:
		if e.emb == nil {
			return search.Result{}, search.ErrNoEmbedder
		}
		qv, err := e.embedQuery(ctx, q.Text)
		if err != nil {
			return search.Result{}, err
		}
		return search.Result{Hits: e.vector(q, qv, k), Mode: mode}, nil
	}
	// Hybrid.
	depth := max(e.depth, k)
	if e.emb == nil {
		return search.Result{Hits: e.fulltext(q, k), Mode: search.ModeFulltext, Note: "no embedder configured: fulltext results only"}, nil
	}
	qv, err := e.embedQuery(ctx, q.Text)
	if err != nil {
		return search.Result{Hits: e.fulltext(q, k), Mode: search.ModeFulltext, Note: "embedder unavailable: fulltext results only"}, nil
	}
	fused := search.FuseRRF(e.rrfK, e.weights, e.fulltext(q, depth), e.vector(q, qv, depth))
	if len(fused) > k {
		fused = fused[:k]
	}
	return search.Result{Hits: fused, Mode: search.ModeHybrid}, nil
}

func (e *Engine) embedQuery(ctx context.Context, text string) ([]float32, error) {
	vs, err := e.emb.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("memory: embed query: %w", err)
	}
	if len(vs) != 1 || len(vs[0]) != e.emb.Dimension() {
		return nil, fmt.Errorf("memory: embed query: want one vector of length %d", e.emb.Dimension())
	}
	v := vs[0]
	if !normalize(v) {
		return nil, fmt.Errorf("memory: embed query: zero vector")
	}
	return v, nil
}

// selected returns the indexes q searches, under e.mu's read lock.
func (e *Engine) selected(q search.Query) []*index {
	if len(q.Indexes) == 0 {
		out := make([]*index, 0, len(e.indexes))
		for _, ix := range e.indexes {
			out = append(out, ix)
		}
		return out
	}
	var out []*index
	for _, name := range q.Indexes {
		if ix := e.indexes[name]; ix != nil {
			out = append(out, ix)
		}
	}
	return out
}

func (e *Engine) fulltext(q search.Query, k int) []search.Hit {
	terms := e.tok.Tokens(q.Text)
	if len(terms) == 0 {
		return nil
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	var top topK
	top.init(k)
	for _, ix := range e.selected(q) {
		ix.bm25(terms, e.bm25, q.Filter, &top)
	}
	return top.hits()
}

func (e *Engine) vector(q search.Query, qv []float32, k int) []search.Hit {
	e.mu.RLock()
	defer e.mu.RUnlock()
	var top topK
	top.init(k)
	for _, ix := range e.selected(q) {
		ix.nearest(qv, q.Filter, &top)
	}
	return top.hits()
}

// normalize scales v to unit length in place; it reports false for a zero
// (or non-finite) vector.
func normalize(v []float32) bool {
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
