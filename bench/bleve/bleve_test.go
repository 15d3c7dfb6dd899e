package bleve

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/agentcraftlab/agentcraft/search"
)

// bodyField is the one field bleve indexes: title, a newline, then text,
// the same "flat" field AgentCraft's engines index.
const bodyField = "body"

// bleveEngine is a bleve v2 index set up as its best standard full-text
// configuration: the scorch index type (the default since v2.0, and the
// only one that implements BM25; bleve.NewMemOnly would pick the older
// upsidedown type), kept in memory (no path: no persister, no merger,
// and each batch stays one segment), the "en" analyzer (unicode
// tokenizer, possessive filter, lower case, English stop words, Snowball
// stemmer) on a single unstored field without term vectors, doc values or
// _all, and a match query (OR of the analyzed terms).
//
// bleve-disk is the same index on disk (bleve.New: scorch persisting
// segments to files and merging them in the background), the peer of
// AgentCraft's SQLite engine. Its Index returns once the batch is
// persisted (scorch persists asynchronously), so ingest rates compare
// durable writes on both sides.
type bleveEngine struct {
	idx    bleve.Index
	scorch *scorch.Scorch // set on disk: Index waits for its persister
}

// bleveMapping is the index mapping for scoring model "bm25" or "tfidf".
func bleveMapping(scoring string) *mapping.IndexMappingImpl {
	im := bleve.NewIndexMapping()
	im.ScoringModel = scoring
	im.DefaultAnalyzer = en.AnalyzerName
	im.IndexDynamic = false
	im.StoreDynamic = false
	im.DocValuesDynamic = false
	fm := bleve.NewTextFieldMapping()
	fm.Analyzer = en.AnalyzerName
	fm.Store = false
	fm.IncludeTermVectors = false
	fm.IncludeInAll = false
	fm.DocValues = false
	dm := bleve.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt(bodyField, fm)
	im.DefaultMapping = dm
	return im
}

// openBleve returns an empty in-memory scorch index scoring with BM25.
func openBleve(tb testing.TB) engine {
	tb.Helper()
	return openBleveScoring(tb, index.BM25Scoring)
}

// openBleveScoring returns an empty in-memory scorch index with the given
// scoring model.
func openBleveScoring(tb testing.TB, scoring string) engine {
	tb.Helper()
	idx, err := bleve.NewUsing("", bleveMapping(scoring), scorch.Name, bleve.Config.DefaultMemKVStore, nil)
	if err != nil {
		tb.Fatalf("bleve: new index: %v", err)
	}
	return &bleveEngine{idx: idx}
}

// openBleveDisk returns an empty on-disk scorch index (BM25) in a new
// directory under tempRoot.
func openBleveDisk(tb testing.TB) engine {
	tb.Helper()
	idx, err := bleve.New(filepath.Join(tempDir(tb), "bleve"), bleveMapping(index.BM25Scoring))
	if err != nil {
		tb.Fatalf("bleve: new index: %v", err)
	}
	adv, err := idx.Advanced()
	if err != nil {
		tb.Fatalf("bleve: advanced: %v", err)
	}
	s, ok := adv.(*scorch.Scorch)
	if !ok {
		tb.Fatalf("bleve: index type %T, want scorch", adv)
	}
	return &bleveEngine{idx: idx, scorch: s}
}

// Index adds docs as one bleve batch (one segment); on disk it returns
// once the batch is persisted.
func (e *bleveEngine) Index(ctx context.Context, docs ...search.Document) error {
	b := e.idx.NewBatch()
	for _, d := range docs {
		body := d.Text
		if d.Title != "" {
			body = d.Title + "\n" + d.Text
		}
		if err := b.Index(d.ID, map[string]any{bodyField: body}); err != nil {
			return fmt.Errorf("bleve: batch %s: %w", d.ID, err)
		}
	}
	if err := e.idx.Batch(b); err != nil {
		return fmt.Errorf("bleve: index batch: %w", err)
	}
	if e.scorch != nil {
		// Batch returns when the segment is searchable in memory; the
		// persister writes it out later and zeroes this count.
		for e.scorch.StatsMap()["TotItemsToPersist"] != uint64(0) {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("bleve: wait for persistence: %w", err)
			}
			time.Sleep(time.Millisecond)
		}
	}
	return nil
}

// SearchIDs runs a match query on the body field; bleve has only full-text
// search here (its vector search needs the cgo FAISS build).
func (e *bleveEngine) SearchIDs(ctx context.Context, text string, mode search.Mode, k int) ([]string, []float64, error) {
	if mode != search.ModeFulltext {
		return nil, nil, fmt.Errorf("bleve: mode %s is not benchmarked: bleve's vector search needs the FAISS (cgo) build", mode)
	}
	q := bleve.NewMatchQuery(text)
	q.SetField(bodyField)
	req := bleve.NewSearchRequestOptions(q, k, 0, false)
	res, err := e.idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, nil, fmt.Errorf("bleve: search: %w", err)
	}
	ids := make([]string, len(res.Hits))
	scores := make([]float64, len(res.Hits))
	for i, h := range res.Hits {
		ids[i], scores[i] = h.ID, h.Score
	}
	return ids, scores, nil
}

func (e *bleveEngine) Close() error { return e.idx.Close() }
