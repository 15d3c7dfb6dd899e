package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/internal/postings"
	"github.com/agentcraftlab/agentcraft/search/internal/sqlengine"
	"github.com/agentcraftlab/agentcraft/search/internal/vec"
)

// Index adds or replaces docs in one transaction. With an Embedder, all
// vectors are computed first; if that fails nothing is indexed and the error
// is returned, so a caller can retry the batch. When the same (Index, ID)
// appears twice in docs, the later one wins.
func (e *Engine) Index(ctx context.Context, docs ...search.Document) error {
	b, err := sqlengine.Prepare(ctx, e.tok, e.emb, docs, storable)
	if err != nil {
		return fmt.Errorf("postgres search: %w", err)
	}
	if b == nil {
		return nil
	}
	err = e.write(ctx, func(tx pgx.Tx) error {
		return b.EachIndex(func(name string, at []int) error {
			return e.indexInto(ctx, tx, name, b, at)
		})
	})
	if err != nil {
		return fmt.Errorf("postgres search: index: %w", err)
	}
	return nil
}

// storable rejects what PostgreSQL's text and jsonb cannot hold (a NUL
// byte, invalid UTF-8) before anything is written, with an error that
// names the field, instead of a failed batch with a server encoding error.
func storable(d search.Document) error {
	check := func(field, s string) error {
		switch {
		case !utf8.ValidString(s):
			return fmt.Errorf("%s is not valid UTF-8: convert it to UTF-8 before indexing", field)
		case strings.IndexByte(s, 0) >= 0:
			return fmt.Errorf("%s contains a NUL byte, which PostgreSQL text cannot store: remove it before indexing", field)
		}
		return nil
	}
	errs := []error{check("id", d.ID), check("index", d.Index), check("title", d.Title), check("text", d.Text)}
	for k, v := range d.Metadata {
		errs = append(errs, check(fmt.Sprintf("metadata key %q", k), k), check(fmt.Sprintf("metadata %q value", k), v))
	}
	return errors.Join(errs...)
}

// write runs fn in a read-committed transaction.
func (e *Engine) write(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := e.pool.Begin(ctx)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return errors.Join(err, tx.Rollback(ctx))
	}
	return tx.Commit(ctx)
}

// indexInto writes b.Docs[at...] (all of index name) inside tx.
func (e *Engine) indexInto(ctx context.Context, tx pgx.Tx, name string, b *sqlengine.Batch, at []int) error {
	docs, terms, vecs := b.Docs, b.Terms, b.Vectors
	// The upsert locks the index row until commit: see the package doc on
	// why document ids must be taken under it.
	var ixID int64
	if err := tx.QueryRow(ctx, e.sql.upsertIndex, name).Scan(&ixID); err != nil {
		return fmt.Errorf("index %q: %w", name, err)
	}
	dDocs, dLen, err := e.removeDocs(ctx, tx, ixID, b.IDs(at))
	if err != nil {
		return fmt.Errorf("index %q: replace: %w", name, err)
	}

	f := b.Frequencies(at)
	tfs, df, order := f.TF, f.DF, f.Order
	termIDs, err := e.upsertTerms(ctx, tx, ixID, order, df)
	if err != nil {
		return fmt.Errorf("index %q: terms: %w", name, err)
	}

	n := len(at)
	extIDs, titles, bodies := make([]string, n), make([]string, n), make([]string, n)
	metas := make([][]byte, n)
	lens := make([]int64, n)
	termLists, vecBlobs := make([][]byte, n), make([][]byte, n)
	var totalLen int64
	for i, j := range at {
		d := docs[j]
		if metas[i], err = sqlengine.EncodeMetadata(d.Metadata); err != nil {
			return fmt.Errorf("document %q: %w", d.ID, err)
		}
		if vecs != nil {
			vecBlobs[i] = vec.Encode(vecs[j])
		}
		tids := make([]int64, 0, len(tfs[i]))
		for t := range tfs[i] {
			tids = append(tids, termIDs[t].ID)
		}
		slices.Sort(tids)
		extIDs[i], titles[i], bodies[i] = d.ID, d.Title, d.Text
		lens[i] = int64(len(terms[j]))
		termLists[i] = postings.EncodeIDs(tids)
		totalLen += lens[i]
	}
	docIDs := make(map[string]int64, n)
	rows, err := tx.Query(ctx, e.sql.insertDocs, ixID, extIDs, titles, bodies, jsonbArray(metas), lens, termLists, vecBlobs)
	if err != nil {
		return fmt.Errorf("insert documents: %w", err)
	}
	var id int64
	var ext string
	if _, err := pgx.ForEachRow(rows, []any{&id, &ext}, func() error { docIDs[ext] = id; return nil }); err != nil {
		return fmt.Errorf("insert documents: %w", err)
	}

	byTerm := make(map[int64][]postings.Posting, len(order))
	for i := range at {
		docID, ok := docIDs[extIDs[i]]
		if !ok {
			return fmt.Errorf("document %q: no id returned", extIDs[i])
		}
		for t, tf := range tfs[i] {
			tid := termIDs[t].ID
			byTerm[tid] = append(byTerm[tid], postings.Posting{Doc: docID, TF: int64(tf), Len: lens[i]})
		}
	}
	if err := e.appendPostings(ctx, tx, order, termIDs, byTerm); err != nil {
		return fmt.Errorf("postings: %w", err)
	}
	_, err = tx.Exec(ctx, e.sql.bumpIndex, int64(n)-dDocs, totalLen-dLen, ixID)
	return err
}

// jsonbArray passes metadata as jsonb[] with NULL elements for documents
// without metadata.
func jsonbArray(metas [][]byte) []*string {
	out := make([]*string, len(metas))
	for i, m := range metas {
		if m != nil {
			s := string(m)
			out[i] = &s
		}
	}
	return out
}

// upsertTerms adds df[t] to the document frequency of every term of order,
// creating missing terms, and returns their ids.
func (e *Engine) upsertTerms(ctx context.Context, tx pgx.Tx, ixID int64, order []string, df map[string]int64) (map[string]sqlengine.TermID, error) {
	dfs := make([]int64, len(order))
	for i, t := range order {
		dfs[i] = df[t]
	}
	rows, err := tx.Query(ctx, e.sql.upsertTerms, ixID, order, dfs)
	if err != nil {
		return nil, err
	}
	ids := make(map[string]sqlengine.TermID, len(order))
	var id, n int64
	var t string
	if _, err := pgx.ForEachRow(rows, []any{&id, &t, &n}, func() error {
		ids[t] = sqlengine.TermID{ID: id, Fresh: n == df[t]}
		return nil
	}); err != nil {
		return nil, err
	}
	if err := sqlengine.CheckTermIDs(order, ids); err != nil {
		return nil, err
	}
	return ids, nil
}

// appendPostings appends the new postings of every term: one statement reads
// the last segment of the terms that have one, one writes the grown and new
// segments.
func (e *Engine) appendPostings(ctx context.Context, tx pgx.Tx, order []string, ids map[string]sqlengine.TermID, byTerm map[int64][]postings.Posting) error {
	var known []int64
	for _, t := range order {
		if id := ids[t]; !id.Fresh {
			known = append(known, id.ID)
		}
	}
	tails := make(map[int64]*postings.Segment, len(known))
	if len(known) > 0 {
		rows, err := tx.Query(ctx, e.sql.tails, known)
		if err != nil {
			return err
		}
		var term int64
		var seg postings.Segment
		if _, err := pgx.ForEachRow(rows, []any{&term, &seg.First, &seg.Data}, func() error {
			tails[term] = &postings.Segment{First: seg.First, Data: slices.Clone(seg.Data)}
			return nil
		}); err != nil {
			return err
		}
	}
	var terms, firsts []int64
	var datas [][]byte
	for _, t := range order {
		id := ids[t].ID
		ps := byTerm[id]
		slices.SortFunc(ps, func(a, b postings.Posting) int { return cmp.Compare(a.Doc, b.Doc) })
		segs, err := postings.AppendSegments(tails[id], ps)
		if err != nil {
			return fmt.Errorf("term %d: %w", id, err)
		}
		for _, s := range segs {
			terms = append(terms, id)
			firsts = append(firsts, s.First)
			datas = append(datas, s.Data)
		}
	}
	return e.putSegments(ctx, tx, terms, firsts, datas)
}

// segmentBatch bounds the segments written per statement (up to 4 MB of
// parameters each).
const segmentBatch = 1024

func (e *Engine) putSegments(ctx context.Context, tx pgx.Tx, terms, firsts []int64, datas [][]byte) error {
	for i := 0; i < len(terms); i += segmentBatch {
		j := min(i+segmentBatch, len(terms))
		if _, err := tx.Exec(ctx, e.sql.putSegments, terms[i:j], firsts[i:j], datas[i:j]); err != nil {
			return err
		}
	}
	return nil
}

// removeDocs deletes the documents ids of index ixID with their postings and
// lowers the document frequencies of their terms. It returns how many
// documents and terms it removed; the caller updates search_indexes.
func (e *Engine) removeDocs(ctx context.Context, tx pgx.Tx, ixID int64, ids []string) (docs, terms int64, err error) {
	rows, err := tx.Query(ctx, e.sql.findDocs, ixID, ids)
	if err != nil {
		return 0, 0, err
	}
	var found []int64
	var tIDs, tDocs []int64 // (term, doc) pairs of the removed postings
	removed := make(map[int64][]int64)
	var docID, n int64
	var blob []byte
	if _, err := pgx.ForEachRow(rows, []any{&docID, &n, &blob}, func() error {
		ts, err := postings.DecodeIDs(blob)
		if err != nil {
			return fmt.Errorf("document row %d: %w", docID, err)
		}
		for _, t := range ts {
			tIDs = append(tIDs, t)
			tDocs = append(tDocs, docID)
			removed[t] = append(removed[t], docID)
		}
		found = append(found, docID)
		docs++
		terms += n
		return nil
	}); err != nil {
		return 0, 0, err
	}
	if docs == 0 {
		return 0, 0, nil
	}
	rows, err = tx.Query(ctx, e.sql.segmentsOf, tIDs, tDocs)
	if err != nil {
		return 0, 0, err
	}
	var putT, putF, dropT, dropF []int64
	var putD [][]byte
	var term, first int64
	var data []byte
	if _, err := pgx.ForEachRow(rows, []any{&term, &first, &data}, func() error {
		out, k, err := postings.Remove(first, data, removed[term])
		if err != nil {
			return fmt.Errorf("term %d: %w", term, err)
		}
		switch {
		case k == 0:
		case len(out) == 0:
			dropT, dropF = append(dropT, term), append(dropF, first)
		default:
			putT, putF, putD = append(putT, term), append(putF, first), append(putD, slices.Clone(out))
		}
		return nil
	}); err != nil {
		return 0, 0, err
	}
	if len(dropT) > 0 {
		if _, err := tx.Exec(ctx, e.sql.dropSegments, dropT, dropF); err != nil {
			return 0, 0, err
		}
	}
	if err := e.putSegments(ctx, tx, putT, putF, putD); err != nil {
		return 0, 0, err
	}
	lowerIDs := slices.Sorted(maps.Keys(removed))
	lowerBy := make([]int64, len(lowerIDs))
	for i, t := range lowerIDs {
		lowerBy[i] = int64(len(removed[t]))
	}
	if _, err := tx.Exec(ctx, e.sql.lowerDF, lowerIDs, lowerBy); err != nil {
		return 0, 0, err
	}
	if _, err := tx.Exec(ctx, e.sql.deleteDocs, found); err != nil {
		return 0, 0, err
	}
	return docs, terms, nil
}

// writeTx is sqlengine.Tx on a write transaction.
type writeTx struct {
	e  *Engine
	tx pgx.Tx
}

// IndexID locks the index's row until the transaction ends.
func (w writeTx) IndexID(ctx context.Context, name string) (int64, error) {
	var id int64
	err := w.tx.QueryRow(ctx, w.e.sql.lockIndex, name).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil // identities start at 1
	}
	return id, err
}

func (w writeTx) RemoveDocs(ctx context.Context, ixID int64, ids []string) (docs, terms int64, err error) {
	return w.e.removeDocs(ctx, w.tx, ixID, ids)
}

func (w writeTx) LowerIndex(ctx context.Context, ixID, docs, terms int64) error {
	_, err := w.tx.Exec(ctx, w.e.sql.lowerIndex, docs, terms, ixID)
	return err
}

func (w writeTx) DropIndex(ctx context.Context, ixID int64) error {
	for _, q := range w.e.sql.dropIndex {
		if _, err := w.tx.Exec(ctx, q, ixID); err != nil {
			return err
		}
	}
	return nil
}

// Delete removes ids from index; unknown ids and indexes are ignored.
func (e *Engine) Delete(ctx context.Context, index string, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	if err := e.write(ctx, func(tx pgx.Tx) error { return sqlengine.Delete(ctx, writeTx{e, tx}, index, ids) }); err != nil {
		return fmt.Errorf("postgres search: delete from %q: %w", index, err)
	}
	return nil
}

// DeleteIndex removes index and all its documents; an unknown index is
// ignored.
func (e *Engine) DeleteIndex(ctx context.Context, index string) error {
	if err := e.write(ctx, func(tx pgx.Tx) error { return sqlengine.DeleteIndex(ctx, writeTx{e, tx}, index) }); err != nil {
		return fmt.Errorf("postgres search: delete index %q: %w", index, err)
	}
	e.vecs.DropIndex(index)
	return nil
}

// Len reports the number of documents in index.
func (e *Engine) Len(ctx context.Context, index string) (int, error) {
	var n int
	if err := e.pool.QueryRow(ctx, e.sql.count, index).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres search: count %q: %w", index, err)
	}
	return n, nil
}
