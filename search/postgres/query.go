package postgres

import (
	"cmp"
	"container/heap"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/internal/postings"
)

// Search answers q; see search.Mode for the modes. It answers as
// search/memory does, including the degraded hybrid answers.
func (e *Engine) Search(ctx context.Context, q search.Query) (search.Result, error) {
	if err := q.Validate(); err != nil {
		return search.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return search.Result{}, fmt.Errorf("postgres search: search: %w", err)
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
		hits, err := e.fulltext(ctx, q, k)
		if err != nil {
			return search.Result{}, err
		}
		return search.Result{Hits: hits, Mode: mode}, nil
	case search.ModeVector:
		if e.emb == nil {
			return search.Result{}, search.ErrNoEmbedder
		}
		qv, err := e.embedQuery(ctx, q.Text)
		if err != nil {
			return search.Result{}, err
		}
		hits, err := e.vector(ctx, q, qv, k)
		if err != nil {
			return search.Result{}, err
		}
		return search.Result{Hits: hits, Mode: mode}, nil
	}
	// Hybrid.
	if e.emb == nil {
		hits, err := e.fulltext(ctx, q, k)
		if err != nil {
			return search.Result{}, err
		}
		return search.Result{Hits: hits, Mode: search.ModeFulltext, Note: "no embedder configured: fulltext results only"}, nil
	}
	qv, err := e.embedQuery(ctx, q.Text)
	if err != nil {
		e.logger.WarnContext(ctx, "search_embed_query_failed", "error", err)
		hits, err := e.fulltext(ctx, q, k)
		if err != nil {
			return search.Result{}, err
		}
		return search.Result{Hits: hits, Mode: search.ModeFulltext, Note: "embedder unavailable: fulltext results only"}, nil
	}
	depth := max(e.depth, k)
	lexical, err := e.fulltext(ctx, q, depth)
	if err != nil {
		return search.Result{}, err
	}
	semantic, err := e.vector(ctx, q, qv, depth)
	if err != nil {
		return search.Result{}, err
	}
	fused := search.FuseRRF(e.rrfK, e.weights, lexical, semantic)
	if len(fused) > k {
		fused = fused[:k]
	}
	return search.Result{Hits: fused, Mode: search.ModeHybrid}, nil
}

func (e *Engine) embedQuery(ctx context.Context, text string) ([]float32, error) {
	vs, err := e.emb.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("postgres search: embed query: %w", err)
	}
	if len(vs) != 1 || len(vs[0]) != e.emb.Dimension() {
		return nil, fmt.Errorf("postgres search: embed query: want one vector of length %d", e.emb.Dimension())
	}
	v := vs[0]
	if !normalize(v) {
		return nil, fmt.Errorf("postgres search: embed query: zero vector")
	}
	return v, nil
}

// indexInfo is one row of search_indexes.
type indexInfo struct {
	id             int64
	name           string
	docs, totalLen int64
	gen            int64
}

// candidate is a scored document not yet read.
type candidate struct {
	score float64
	doc   int64
	ix    *indexInfo
}

// readTxOptions give a search one snapshot of the database.
var readTxOptions = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}

// read runs fn in a read-only transaction, so it sees one snapshot.
func (e *Engine) read(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := e.pool.BeginTx(ctx, readTxOptions)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only: nothing to lose
	return fn(tx)
}

// names is q.Indexes as a non-nil array parameter (nil would be NULL, and
// the statements read an empty array as "all indexes").
func names(q search.Query) []string {
	if q.Indexes == nil {
		return []string{}
	}
	return q.Indexes
}

func (e *Engine) fulltext(ctx context.Context, q search.Query, k int) ([]search.Hit, error) {
	terms := e.tok.Tokens(q.Text)
	if len(terms) == 0 {
		return nil, nil
	}
	// Repeated query terms count again, as Lucene's BooleanQuery does.
	qtf := make(map[string]float64, len(terms))
	var distinct []string
	for _, t := range terms {
		if qtf[t] == 0 {
			distinct = append(distinct, t)
		}
		qtf[t]++
	}
	var hits []search.Hit
	err := e.read(ctx, func(tx pgx.Tx) error {
		cands, err := e.score(ctx, tx, q, distinct, qtf)
		if err != nil {
			return err
		}
		hits, err = e.materialize(ctx, tx, cands, k, q.Filter)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres search: fulltext: %w", err)
	}
	return hits, nil
}

// perIndex is the scoring state of one searched index.
type perIndex struct {
	info   *indexInfo
	scorer postings.Scorer
	scores map[int64]float32
}

// score reads the segments of the query's terms in every searched index
// and returns each matching document scored as search/memory scores it
// (float32 accumulation included).
func (e *Engine) score(ctx context.Context, tx pgx.Tx, q search.Query, distinct []string, qtf map[string]float64) ([]candidate, error) {
	rows, err := tx.Query(ctx, e.sql.postings, names(q), distinct)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ixs := make(map[int64]*perIndex)
	var order []*perIndex
	for rows.Next() {
		// Raw values: a query reads hundreds of KB of segments, and
		// decoding them in place saves copying each one.
		vals := rows.RawValues()
		if len(vals) != 9 {
			return nil, fmt.Errorf("postings: %d columns, want 9", len(vals))
		}
		var ixID, docs, totalLen, df, termID, first int64
		var name, term string
		if err := rows.Scan(&ixID, &name, &docs, &totalLen, &term, &df, &termID, &first, nil); err != nil {
			return nil, err
		}
		ix := ixs[ixID]
		if ix == nil {
			ix = &perIndex{info: &indexInfo{id: ixID, name: name, docs: docs, totalLen: totalLen},
				scorer: postings.NewScorer(e.bm25.K1, e.bm25.B, docs, totalLen), scores: make(map[int64]float32)}
			ixs[ixID] = ix
			order = append(order, ix)
		}
		if ix.info.docs <= 0 {
			continue
		}
		w := ix.scorer.Weight(df, qtf[term])
		if err := ix.scorer.Add(ix.scores, w, first, vals[8]); err != nil {
			return nil, fmt.Errorf("term %d: %w", termID, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var cands []candidate
	for _, ix := range order {
		for doc, s := range ix.scores {
			cands = append(cands, candidate{score: float64(s), doc: doc, ix: ix.info})
		}
	}
	return cands, nil
}

// fetchBatch bounds the documents read per statement.
const fetchBatch = 256

// materialize reads the best candidates and returns the k best that pass
// filter, ordered by score, then ID, then index name (memory's order).
// Candidates are read best first, in batches, until k have passed and the
// next candidate scores below the k-th: it still reads every candidate tied
// with the k-th, because the tie is broken by the ID stored in the row.
func (e *Engine) materialize(ctx context.Context, tx pgx.Tx, cands []candidate, k int, filter map[string]string) ([]search.Hit, error) {
	if k == 0 || len(cands) == 0 {
		return nil, nil
	}
	var filterJSON []byte
	if len(filter) > 0 {
		var err error
		if filterJSON, err = json.Marshal(filter); err != nil {
			return nil, fmt.Errorf("encode filter: %w", err)
		}
	}
	sorted := orderBest(cands, k)
	var hits []search.Hit
	for i := 0; i < len(cands); {
		if len(hits) >= k && cands[i].score < hits[k-1].Score {
			break
		}
		if i == sorted {
			sortCandidates(cands[i:])
			sorted = len(cands)
		}
		need := max(k-len(hits), 1)
		if len(filter) > 0 {
			need *= 4
		}
		end := min(i+min(need, fetchBatch), sorted)
		// Extend over ties with the last candidate of the batch.
		for end < sorted && end-i < fetchBatch && cands[end].score == cands[end-1].score {
			end++
		}
		batch, err := e.readDocs(ctx, tx, cands[i:end], filterJSON)
		if err != nil {
			return nil, err
		}
		hits = append(hits, batch...)
		i = end
	}
	slices.SortFunc(hits, func(a, b search.Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		return cmp.Compare(a.Index, b.Index)
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, nil
}

func sortCandidates(c []candidate) {
	slices.SortFunc(c, func(a, b candidate) int { return cmp.Compare(b.score, a.score) })
}

// orderBest moves the n best candidates, and every candidate tied with the
// n-th, to the front in descending score order, and returns how many it
// ordered; the rest score lower and stay unordered. Sorting only the head
// keeps a top-10 query over thousands of matches cheap.
func orderBest(c []candidate, n int) int {
	if n >= len(c)/4 {
		sortCandidates(c)
		return len(c)
	}
	h := make(minHeap, 0, n)
	for _, x := range c {
		if len(h) < n {
			heap.Push(&h, x.score)
		} else if x.score > h[0] {
			h[0] = x.score
			heap.Fix(&h, 0)
		}
	}
	threshold := h[0]
	m := 0
	for i := range c {
		if c[i].score >= threshold {
			c[i], c[m] = c[m], c[i]
			m++
		}
	}
	sortCandidates(c[:m])
	return m
}

type minHeap []float64

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// readDocs returns the hits of cands that pass filterJSON (a jsonb
// containment test; nil means no filter), in the order of cands.
func (e *Engine) readDocs(ctx context.Context, tx pgx.Tx, cands []candidate, filterJSON []byte) ([]search.Hit, error) {
	ids := make([]int64, len(cands))
	pos := make(map[int64]int, len(cands))
	for i, c := range cands {
		ids[i] = c.doc
		pos[c.doc] = i
	}
	var rows pgx.Rows
	var err error
	if filterJSON == nil {
		rows, err = tx.Query(ctx, e.sql.readDocs, ids)
	} else {
		rows, err = tx.Query(ctx, e.sql.readDocsFiltered, ids, string(filterJSON))
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]search.Hit, len(cands))
	found := make([]bool, len(cands))
	for rows.Next() {
		var id int64
		var h search.Hit
		var meta []byte
		if err := rows.Scan(&id, &h.ID, &h.Title, &h.Text, &meta); err != nil {
			return nil, err
		}
		i, ok := pos[id]
		if !ok {
			continue
		}
		if h.Metadata, err = decodeMetadata(meta); err != nil {
			return nil, fmt.Errorf("document %q: %w", h.ID, err)
		}
		h.Index = cands[i].ix.name
		h.Score = cands[i].score
		out[i] = h
		found[i] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	n := 0
	for i := range out {
		if found[i] {
			out[n] = out[i]
			n++
		}
	}
	return out[:n], nil
}
