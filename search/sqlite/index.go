package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

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
	b, err := sqlengine.Prepare(ctx, e.tok, e.emb, docs, nil)
	if err != nil {
		return fmt.Errorf("sqlite search: %w", err)
	}
	if b == nil {
		return nil
	}
	err = e.write(ctx, func(tx *sql.Tx) error {
		return b.EachIndex(func(name string, at []int) error {
			return e.indexInto(ctx, tx, name, b, at)
		})
	})
	if err != nil {
		return fmt.Errorf("sqlite search: index: %w", err)
	}
	return nil
}

// write runs fn in a transaction on the writer connection.
func (e *Engine) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := e.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	return tx.Commit()
}

// indexInto writes b.Docs[at...] (all of index name) inside tx.
func (e *Engine) indexInto(ctx context.Context, tx *sql.Tx, name string, b *sqlengine.Batch, at []int) error {
	docs, terms, vecs := b.Docs, b.Terms, b.Vectors
	var ixID int64
	if err := tx.QueryRowContext(ctx,
		`INSERT INTO search_indexes (name) VALUES (?) ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id`,
		name).Scan(&ixID); err != nil {
		return fmt.Errorf("index %q: %w", name, err)
	}
	dDocs, dLen, err := removeDocs(ctx, tx, ixID, b.IDs(at))
	if err != nil {
		return fmt.Errorf("index %q: replace: %w", name, err)
	}

	f := b.Frequencies(at)
	tfs, df, order := f.TF, f.DF, f.Order
	termIDs, err := upsertTerms(ctx, tx, ixID, order, df)
	if err != nil {
		return fmt.Errorf("index %q: terms: %w", name, err)
	}

	insDoc, err := tx.PrepareContext(ctx,
		`INSERT INTO search_docs (index_id, ext_id, title, body, metadata, len, terms, vec) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`)
	if err != nil {
		return err
	}
	defer insDoc.Close()
	// Postings of the batch per term, doc ids ascending because ids grow.
	byTerm := make(map[int64][]postings.Posting, len(order))
	var totalLen int64
	for i, j := range at {
		d := docs[j]
		meta, err := sqlengine.EncodeMetadata(d.Metadata)
		if err != nil {
			return fmt.Errorf("document %q: %w", d.ID, err)
		}
		var blob []byte
		if vecs != nil {
			blob = vec.Encode(vecs[j])
		}
		ids := make([]int64, 0, len(tfs[i]))
		for t := range tfs[i] {
			ids = append(ids, termIDs[t].ID)
		}
		slices.Sort(ids)
		n := int64(len(terms[j]))
		totalLen += n
		var docID int64
		if err := insDoc.QueryRowContext(ctx, ixID, d.ID, d.Title, d.Text, metadataText(meta), n, postings.EncodeIDs(ids), blob).Scan(&docID); err != nil {
			return fmt.Errorf("document %q: %w", d.ID, err)
		}
		for t, tf := range tfs[i] {
			id := termIDs[t].ID
			byTerm[id] = append(byTerm[id], postings.Posting{Doc: docID, TF: int64(tf), Len: n})
		}
	}
	ps, err := newPostingStore(ctx, tx)
	if err != nil {
		return err
	}
	defer ps.close()
	items := make([]termPostings, len(order))
	for i, t := range order {
		id := termIDs[t]
		items[i] = termPostings{term: id.ID, fresh: id.Fresh, ps: byTerm[id.ID]}
	}
	if err := ps.addAll(ctx, items); err != nil {
		return fmt.Errorf("postings: %w", err)
	}
	_, err = tx.ExecContext(ctx, `UPDATE search_indexes SET docs = docs + ?, total_len = total_len + ?, gen = gen + 1 WHERE id = ?`,
		int64(len(at))-dDocs, totalLen-dLen, ixID)
	return err
}

// termBatch is the number of rows per multi-row INSERT: far below SQLite's
// 32766 bound parameters, and large enough that statement overhead stops
// mattering.
const termBatch = 256

// upsertTerms adds df[t] to the document frequency of every term of order,
// creating missing terms, and returns their ids.
func upsertTerms(ctx context.Context, tx *sql.Tx, ixID int64, order []string, df map[string]int64) (map[string]sqlengine.TermID, error) {
	ids := make(map[string]sqlengine.TermID, len(order))
	for chunk := range slices.Chunk(order, termBatch) {
		var q strings.Builder
		q.WriteString(`INSERT INTO search_terms (index_id, term, df) VALUES `)
		args := make([]any, 0, 3*len(chunk))
		for i, t := range chunk {
			if i > 0 {
				q.WriteByte(',')
			}
			q.WriteString("(?,?,?)")
			args = append(args, ixID, t, df[t])
		}
		q.WriteString(` ON CONFLICT (index_id, term) DO UPDATE SET df = df + excluded.df RETURNING id, term, df`)
		rows, err := tx.QueryContext(ctx, q.String(), args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id, n int64
			var t string
			if err := rows.Scan(&id, &t, &n); err != nil {
				rows.Close()
				return nil, err
			}
			ids[t] = sqlengine.TermID{ID: id, Fresh: n == df[t]}
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	if err := sqlengine.CheckTermIDs(order, ids); err != nil {
		return nil, err
	}
	return ids, nil
}

// removeDocs deletes the documents ids of index ixID with their postings and
// lowers the document frequencies of their terms. It returns how many
// documents and terms it removed; the caller updates search_indexes.
func removeDocs(ctx context.Context, tx *sql.Tx, ixID int64, ids []string) (docs, terms int64, err error) {
	find, err := tx.PrepareContext(ctx, `SELECT id, len, terms FROM search_docs WHERE index_id = ? AND ext_id = ?`)
	if err != nil {
		return 0, 0, err
	}
	defer find.Close()
	var found []int64
	byTerm := make(map[int64][]int64) // term → removed docs, ascending
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		// A repeated id must not count its document twice.
		if seen[id] {
			continue
		}
		seen[id] = true
		var docID, n int64
		var blob []byte
		err := find.QueryRowContext(ctx, ixID, id).Scan(&docID, &n, &blob)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return 0, 0, err
		}
		termIDs, err := postings.DecodeIDs(blob)
		if err != nil {
			return 0, 0, fmt.Errorf("document %q: %w", id, err)
		}
		for _, t := range termIDs {
			byTerm[t] = append(byTerm[t], docID)
		}
		found = append(found, docID)
		docs++
		terms += n
	}
	if docs == 0 {
		return 0, 0, nil
	}
	ps, err := newPostingStore(ctx, tx)
	if err != nil {
		return 0, 0, err
	}
	defer ps.close()
	for _, t := range slices.Sorted(maps.Keys(byTerm)) {
		slices.Sort(byTerm[t])
		if err := ps.remove(ctx, t, byTerm[t]); err != nil {
			return 0, 0, err
		}
	}
	dec, err := tx.PrepareContext(ctx, `UPDATE search_terms SET df = df - ? WHERE id = ?`)
	if err != nil {
		return 0, 0, err
	}
	defer dec.Close()
	for t, docs := range byTerm {
		if _, err := dec.ExecContext(ctx, len(docs), t); err != nil {
			return 0, 0, err
		}
	}
	for chunk := range slices.Chunk(found, termBatch) {
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM search_docs WHERE id IN (`+placeholders("?", len(chunk))+`)`, args...); err != nil {
			return 0, 0, err
		}
	}
	return docs, terms, nil
}

// placeholders returns n copies of p separated by commas.
func placeholders(p string, n int) string {
	var b strings.Builder
	b.Grow(n * (len(p) + 1))
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(p)
	}
	return b.String()
}

// writeTx is sqlengine.Tx on a write transaction.
type writeTx struct{ tx *sql.Tx }

func (w writeTx) IndexID(ctx context.Context, name string) (int64, error) {
	var id int64
	err := w.tx.QueryRowContext(ctx, `SELECT id FROM search_indexes WHERE name = ?`, name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil // ids start at 1
	}
	return id, err
}

func (w writeTx) RemoveDocs(ctx context.Context, ixID int64, ids []string) (docs, terms int64, err error) {
	return removeDocs(ctx, w.tx, ixID, ids)
}

func (w writeTx) LowerIndex(ctx context.Context, ixID, docs, terms int64) error {
	_, err := w.tx.ExecContext(ctx, `UPDATE search_indexes SET docs = docs - ?, total_len = total_len - ?, gen = gen + 1 WHERE id = ?`,
		docs, terms, ixID)
	return err
}

func (w writeTx) DropIndex(ctx context.Context, ixID int64) error {
	for _, q := range []string{
		`DELETE FROM search_postings WHERE term_id IN (SELECT id FROM search_terms WHERE index_id = ?)`,
		`DELETE FROM search_terms WHERE index_id = ?`,
		`DELETE FROM search_docs WHERE index_id = ?`,
		`DELETE FROM search_indexes WHERE id = ?`,
	} {
		if _, err := w.tx.ExecContext(ctx, q, ixID); err != nil {
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
	if err := e.write(ctx, func(tx *sql.Tx) error { return sqlengine.Delete(ctx, writeTx{tx}, index, ids) }); err != nil {
		return fmt.Errorf("sqlite search: delete from %q: %w", index, err)
	}
	return nil
}

// DeleteIndex removes index and all its documents; an unknown index is
// ignored.
func (e *Engine) DeleteIndex(ctx context.Context, index string) error {
	if err := e.write(ctx, func(tx *sql.Tx) error { return sqlengine.DeleteIndex(ctx, writeTx{tx}, index) }); err != nil {
		return fmt.Errorf("sqlite search: delete index %q: %w", index, err)
	}
	e.vecs.DropIndex(index)
	return nil
}

// Len reports the number of documents in index.
func (e *Engine) Len(ctx context.Context, index string) (int, error) {
	var n int
	// An unknown index has no row, and no documents.
	err := e.reader.QueryRowContext(ctx, `SELECT coalesce((SELECT docs FROM search_indexes WHERE name = ?), 0)`, index).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("sqlite search: count %q: %w", index, err)
	}
	return n, nil
}

// metadataText binds the JSON of metadata as TEXT, and none as NULL.
func metadataText(meta []byte) any {
	if meta == nil {
		return nil
	}
	return string(meta)
}
