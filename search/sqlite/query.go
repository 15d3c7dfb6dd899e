package sqlite

import (
	"cmp"
	"container/heap"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"

	"github.com/agentcraftlab/agentcraft/search"
)

// Search answers q; see search.Mode for the modes. It answers as
// search/memory does, including the degraded hybrid answers.
func (e *Engine) Search(ctx context.Context, q search.Query) (search.Result, error) {
	if err := q.Validate(); err != nil {
		return search.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return search.Result{}, fmt.Errorf("sqlite search: search: %w", err)
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
		return nil, fmt.Errorf("sqlite search: embed query: %w", err)
	}
	if len(vs) != 1 || len(vs[0]) != e.emb.Dimension() {
		return nil, fmt.Errorf("sqlite search: embed query: want one vector of length %d", e.emb.Dimension())
	}
	v := vs[0]
	if !normalize(v) {
		return nil, fmt.Errorf("sqlite search: embed query: zero vector")
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

// read runs fn in a read transaction, so it sees one snapshot of the file.
func (e *Engine) read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := e.reader.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // read-only: nothing to lose
	return fn(tx)
}

// selected returns the indexes q searches.
func selected(ctx context.Context, tx *sql.Tx, q search.Query) ([]*indexInfo, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, name, docs, total_len, gen FROM search_indexes`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*indexInfo
	for rows.Next() {
		ix := &indexInfo{}
		if err := rows.Scan(&ix.id, &ix.name, &ix.docs, &ix.totalLen, &ix.gen); err != nil {
			return nil, err
		}
		if len(q.Indexes) == 0 || slices.Contains(q.Indexes, ix.name) {
			out = append(out, ix)
		}
	}
	return out, rows.Err()
}

func (e *Engine) fulltext(ctx context.Context, q search.Query, k int) ([]search.Hit, error) {
	terms := e.tok.Tokens(q.Text)
	if len(terms) == 0 {
		return nil, nil
	}
	// Repeated query terms count again, as Lucene's BooleanQuery does.
	qtf := make(map[string]float64, len(terms))
	var distinct []any
	for _, t := range terms {
		if qtf[t] == 0 {
			distinct = append(distinct, t)
		}
		qtf[t]++
	}
	var hits []search.Hit
	err := e.read(ctx, func(tx *sql.Tx) error {
		ixs, err := selected(ctx, tx, q)
		if err != nil {
			return err
		}
		var cands []candidate
		for _, ix := range ixs {
			if cands, err = e.scoreIndex(ctx, tx, ix, distinct, qtf, cands); err != nil {
				return err
			}
		}
		hits, err = materialize(ctx, tx, cands, k, q.Filter)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite search: fulltext: %w", err)
	}
	return hits, nil
}

// scoreIndex appends every document of ix matching a term to cands, scored as
// search/memory scores it (float32 accumulation included).
func (e *Engine) scoreIndex(ctx context.Context, tx *sql.Tx, ix *indexInfo, distinct []any, qtf map[string]float64, cands []candidate) ([]candidate, error) {
	if ix.docs <= 0 {
		return cands, nil
	}
	n := float64(ix.docs)
	avgdl := float64(ix.totalLen) / n
	if avgdl == 0 {
		avgdl = 1
	}
	args := append([]any{ix.id}, distinct...)
	rows, err := tx.QueryContext(ctx, `SELECT id, term, df FROM search_terms WHERE index_id = ? AND df > 0 AND term IN (`+placeholders("?", len(distinct))+`)`, args...)
	if err != nil {
		return nil, err
	}
	type weighted struct {
		id  int64
		idf float32
	}
	var ts []weighted
	for rows.Next() {
		var w weighted
		var t string
		var df float64
		if err := rows.Scan(&w.id, &t, &df); err != nil {
			rows.Close()
			return nil, err
		}
		w.idf = float32(qtf[t] * math.Log(1+(n-df+0.5)/(df+0.5)))
		ts = append(ts, w)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(ts) == 0 {
		return cands, nil
	}
	base := float32(e.bm25.K1 * (1 - e.bm25.B))
	perLen := float32(e.bm25.K1 * e.bm25.B / avgdl)
	scores := make(map[int64]float32)
	idf := make(map[int64]float32, len(ts))
	args = make([]any, len(ts))
	for i, w := range ts {
		idf[w.id] = w.idf
		args[i] = w.id
	}
	rows, err = tx.QueryContext(ctx, `SELECT term_id, first_doc, data FROM search_postings WHERE term_id IN (`+placeholders("?", len(ts))+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var term, first int64
		var data sql.RawBytes
		if err := rows.Scan(&term, &first, &data); err != nil {
			return nil, err
		}
		w := idf[term]
		err := decodeSegment(first, data, func(doc, tf, dl int64) {
			tff := float32(tf)
			scores[doc] += w * tff / (tff + base + perLen*float32(dl))
		})
		if err != nil {
			return nil, fmt.Errorf("term %d: %w", term, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for doc, s := range scores {
		cands = append(cands, candidate{score: float64(s), doc: doc, ix: ix})
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
func materialize(ctx context.Context, tx *sql.Tx, cands []candidate, k int, filter map[string]string) ([]search.Hit, error) {
	if k == 0 || len(cands) == 0 {
		return nil, nil
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
		batch, err := readDocs(ctx, tx, cands[i:end])
		if err != nil {
			return nil, err
		}
		for _, h := range batch {
			if len(filter) == 0 || search.Matches(h.Metadata, filter) {
				hits = append(hits, h)
			}
		}
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

// readDocs returns the hits of cands, in the order of cands.
func readDocs(ctx context.Context, tx *sql.Tx, cands []candidate) ([]search.Hit, error) {
	args := make([]any, len(cands))
	pos := make(map[int64]int, len(cands))
	for i, c := range cands {
		args[i] = c.doc
		pos[c.doc] = i
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, ext_id, title, body, metadata FROM search_docs WHERE id IN (`+placeholders("?", len(cands))+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]search.Hit, len(cands))
	found := make([]bool, len(cands))
	for rows.Next() {
		var id int64
		var h search.Hit
		var meta sql.NullString
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
	// A candidate always has its row: postings, vectors and documents are
	// read in the same snapshot.
	n := 0
	for i := range out {
		if found[i] {
			out[n] = out[i]
			n++
		}
	}
	return out[:n], nil
}
