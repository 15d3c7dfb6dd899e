package sqlengine

import "context"

// Tx is the SQL verbs Delete and DeleteIndex run in an engine's write
// transaction.
type Tx interface {
	// IndexID returns the id of the index called name, 0 when there is
	// none; PostgreSQL also locks its row until the transaction ends.
	IndexID(ctx context.Context, name string) (int64, error)
	// RemoveDocs deletes the documents ids of index ixID with their
	// postings, lowering the terms' document frequencies, and returns how
	// many documents and how many of their terms went.
	RemoveDocs(ctx context.Context, ixID int64, ids []string) (docs, terms int64, err error)
	// LowerIndex takes docs and terms from the index's statistics and
	// bumps its generation, so caches of it are read again.
	LowerIndex(ctx context.Context, ixID, docs, terms int64) error
	// DropIndex deletes the index with its documents, terms and postings.
	DropIndex(ctx context.Context, ixID int64) error
}

// Delete removes ids from index in tx; unknown ids and indexes are
// ignored, and an index that lost nothing keeps its generation.
func Delete(ctx context.Context, tx Tx, index string, ids []string) error {
	ixID, err := tx.IndexID(ctx, index)
	if err != nil || ixID == 0 {
		return err
	}
	docs, terms, err := tx.RemoveDocs(ctx, ixID, ids)
	if err != nil || docs == 0 {
		return err
	}
	return tx.LowerIndex(ctx, ixID, docs, terms)
}

// DeleteIndex removes index and all its documents in tx; an unknown index
// is ignored. The engine drops its vector cache once tx commits.
func DeleteIndex(ctx context.Context, tx Tx, index string) error {
	ixID, err := tx.IndexID(ctx, index)
	if err != nil || ixID == 0 {
		return err
	}
	return tx.DropIndex(ctx, ixID)
}
