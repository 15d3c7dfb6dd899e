package postgres_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/internal/database"
	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/memory"
	"github.com/agentcraftlab/agentcraft/search/postgres"
	"github.com/agentcraftlab/agentcraft/search/searchtest"
)

// TestMatchesMemory replays random batches of indexing, replacing and
// deleting on both engines and compares every answer.
func TestMatchesMemory(t *testing.T) {
	searchtest.MatchesMemory(t, "postgres", open(t, nil))
}

// TestConcurrentWriters indexes and deletes from several goroutines (as
// several processes would) into the same indexes, then compares with memory
// holding the same documents. Segments need document ids to grow within a
// term; writers that interleaved their ids would corrupt the order and
// change scores or fail to decode.
func TestConcurrentWriters(t *testing.T) {
	ctx := t.Context()
	pg := open(t, &postgres.Options{MaxConns: 8})
	mem, err := memory.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Fields("red green blue cyan magenta yellow black white")
	const writers, batches = 4, 12
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	var memMu sync.Mutex
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 3))
			for b := range batches {
				var docs []search.Document
				for i := range 20 {
					text := make([]string, 2+rng.IntN(10))
					for j := range text {
						text[j] = words[rng.IntN(len(words))]
					}
					index := []string{"x", "y"}[rng.IntN(2)]
					docs = append(docs, search.Document{ID: fmt.Sprintf("w%d-%d-%d", w, b, i), Index: index, Text: strings.Join(text, " ")})
				}
				if err := pg.Index(ctx, docs...); err != nil {
					errs <- err
					return
				}
				del := fmt.Sprintf("w%d-%d-%d", w, b, rng.IntN(20))
				if err := pg.Delete(ctx, "x", del); err != nil {
					errs <- err
					return
				}
				memMu.Lock()
				err := mem.Index(ctx, docs...)
				if err == nil {
					err = mem.Delete(ctx, "x", del)
				}
				memMu.Unlock()
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, text := range []string{"red", "green blue", "black white white"} {
		q := search.Query{Text: text, TopK: writers * batches * 20, Mode: search.ModeFulltext}
		want, err := mem.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pg.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		searchtest.SameScores(t, "postgres", text, want.Hits, got.Hits)
	}
}

// TestReopen checks that documents, vectors and statistics survive Close,
// and that opening an existing schema again (as every restart does) leaves
// it alone.
func TestReopen(t *testing.T) {
	ctx := t.Context()
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	table := map[string][]float32{"north wind": {1, 0}, "east wind": {0, 1}, "query north": {1, 0.1}}
	emb := searchtest.NewTableEmbedder(2, table)
	opts := &postgres.Options{Schema: schema, Embedder: emb, MaxConns: 2}
	e, err := postgres.Open(ctx, dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	docs := []search.Document{
		{ID: "n", Index: "kb", Text: "north wind", Metadata: map[string]string{"side": "up"}},
		{ID: "e", Index: "kb", Text: "east wind"},
	}
	if err := e.Index(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	before, err := e.Search(ctx, search.Query{Text: "wind", Mode: search.ModeFulltext})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	e, err = postgres.Open(ctx, dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	after, err := e.Search(ctx, search.Query{Text: "wind", Mode: search.ModeFulltext})
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(before, after); diff != "" {
		t.Errorf("fulltext after reopening (-before +after):\n%s", diff)
	}
	if len(after.Hits) != 2 || after.Hits[0].Metadata == nil && after.Hits[1].Metadata == nil {
		t.Errorf("hits after reopening = %+v, want both documents, one with metadata", after.Hits)
	}
	vec, err := e.Search(ctx, search.Query{Text: "query north", Mode: search.ModeVector})
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff([]string{"kb/n", "kb/e"}, searchtest.IDs(vec.Hits)); diff != "" {
		t.Errorf("vector hits after reopening (-want +got):\n%s", diff)
	}
	if len(vec.Hits) > 0 && math.Abs(vec.Hits[0].Score-1/math.Sqrt(1.01)) > 1e-6 {
		t.Errorf("cosine of the nearest = %v, want %v: vectors must be stored normalised", vec.Hits[0].Score, 1/math.Sqrt(1.01))
	}
}

// TestVectorCacheSeesOtherWriters writes through a second engine (another
// process, as far as the first can tell): the first engine's cached vectors
// must not hide the new document.
func TestVectorCacheSeesOtherWriters(t *testing.T) {
	ctx := t.Context()
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	table := map[string][]float32{"old text": {1, 0}, "new text": {0.9, 0.1}, "probe": {0, 1}}
	emb := searchtest.NewTableEmbedder(2, table)
	opts := &postgres.Options{Schema: schema, Embedder: emb, MaxConns: 2}
	a, err := postgres.Open(ctx, dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := postgres.Open(ctx, dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := a.Index(ctx, search.Document{ID: "old", Index: "kb", Text: "old text"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Search(ctx, search.Query{Text: "probe", Mode: search.ModeVector}); err != nil {
		t.Fatal(err) // fills a's cache
	}
	if err := b.Index(ctx, search.Document{ID: "new", Index: "kb", Text: "new text"}); err != nil {
		t.Fatal(err)
	}
	res, err := a.Search(ctx, search.Query{Text: "probe", Mode: search.ModeVector})
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff([]string{"kb/new", "kb/old"}, searchtest.IDs(res.Hits)); diff != "" {
		t.Errorf("vector hits after another engine wrote (-want +got):\n%s", diff)
	}
}

// TestDeleteIndex checks that a dropped index is gone, that re-creating it
// starts empty, and that its vectors are not served from a stale cache.
func TestDeleteIndex(t *testing.T) {
	ctx := t.Context()
	table := map[string][]float32{"old text": {1, 0}, "new text": {0, 1}, "probe": {1, 0}}
	e := open(t, &postgres.Options{Embedder: searchtest.NewTableEmbedder(2, table)})
	if err := e.Index(ctx, search.Document{ID: "x", Index: "kb", Text: "old text"},
		search.Document{ID: "y", Index: "other", Text: "old text"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Search(ctx, search.Query{Text: "probe", Mode: search.ModeVector}); err != nil {
		t.Fatal(err) // fills the vector cache
	}
	if err := e.DeleteIndex(ctx, "kb"); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteIndex(ctx, "no-such-index"); err != nil {
		t.Errorf("DeleteIndex of an unknown index: %v", err)
	}
	res, err := e.Search(ctx, search.Query{Text: "old", Mode: search.ModeFulltext})
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff([]string{"other/y"}, searchtest.IDs(res.Hits)); diff != "" {
		t.Errorf("after DeleteIndex(kb) (-want +got):\n%s", diff)
	}
	if err := e.Index(ctx, search.Document{ID: "z", Index: "kb", Text: "new text"}); err != nil {
		t.Fatal(err)
	}
	res, err = e.Search(ctx, search.Query{Text: "probe", Mode: search.ModeVector, Indexes: []string{"kb"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff([]string{"kb/z"}, searchtest.IDs(res.Hits)); diff != "" {
		t.Errorf("vector hits in the re-created index (-want +got):\n%s", diff)
	}
	if n, err := e.Len(ctx, "kb"); err != nil || n != 1 {
		t.Errorf("Len(kb) = %d, %v; want 1", n, err)
	}
}

// TestConcurrentOpen is several processes starting at once on a new
// schema: the advisory lock makes them create the tables one after the
// other, and all succeed.
func TestConcurrentOpen(t *testing.T) {
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			e, err := postgres.Open(context.Background(), dsn, &postgres.Options{Schema: schema, MaxConns: 2})
			if err != nil {
				errs <- err
				return
			}
			e.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Open = %v", err)
	}
}

// TestNewBorrowsDB checks that an engine on the caller's database (the
// one the store and the queue share, with its schema in the search_path)
// works and that closing it leaves the database usable.
func TestNewBorrowsDB(t *testing.T) {
	ctx := t.Context()
	dsn := testDSN(t)
	db, err := database.OpenPostgres(ctx, dsn, &database.Options{Schema: freshSchema(t, dsn)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := postgres.Migrate(ctx, db, nil); err != nil {
		t.Fatal(err)
	}
	e, err := postgres.New(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Index(ctx, search.Document{ID: "a", Index: "kb", Text: "borrowed pool"}); err != nil {
		t.Fatal(err)
	}
	res, err := e.Search(ctx, search.Query{Text: "pool"})
	if err != nil || len(res.Hits) != 1 {
		t.Fatalf("Search = %+v, %v; want one hit", res, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Pool().Ping(ctx); err != nil {
		t.Errorf("database after Close: %v", err)
	}
}

func TestOpenRejectsBadOptions(t *testing.T) {
	dsn := testDSN(t)
	for _, tt := range []struct {
		name string
		opts *postgres.Options
		want string
	}{
		{"schema not an identifier", &postgres.Options{Schema: "a; DROP TABLE x"}, "plain identifier"},
		{"negative b", &postgres.Options{Schema: "s_unused", BM25: &memory.BM25{K1: 1.2, B: -0.1}}, "0 <= b <= 1"},
		{"negative conns", &postgres.Options{MaxConns: -1}, "MaxConns"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, err := postgres.Open(t.Context(), dsn, tt.opts)
			if err == nil {
				e.Close()
				t.Fatalf("Open succeeded, want an error mentioning %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
		})
	}
	if _, err := postgres.New(t.Context(), nil, nil); err == nil || !strings.Contains(err.Error(), "not a PostgreSQL database") {
		t.Errorf("New(nil) = %v, want an error about the database", err)
	}
}

// TestIndexRejectsUnstorableText checks that text PostgreSQL cannot store
// is refused up front, naming the field, and that the batch writes nothing.
func TestIndexRejectsUnstorableText(t *testing.T) {
	ctx := t.Context()
	e := open(t, nil)
	for _, tt := range []struct {
		name string
		doc  search.Document
		want string
	}{
		{"nul in text", search.Document{ID: "a", Index: "kb", Text: "before\x00after"}, "text contains a NUL byte"},
		{"invalid utf-8 title", search.Document{ID: "a", Index: "kb", Title: "\xff", Text: "ok"}, "title is not valid UTF-8"},
		{"nul in metadata", search.Document{ID: "a", Index: "kb", Text: "ok", Metadata: map[string]string{"k": "v\x00"}}, `metadata "k" value contains a NUL byte`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			good := search.Document{ID: "good", Index: "kb", Text: "fine words"}
			err := e.Index(ctx, good, tt.doc)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Index = %v, want an error mentioning %q", err, tt.want)
			}
			if n, err := e.Len(ctx, "kb"); err != nil || n != 0 {
				t.Errorf("Len(kb) = %d, %v after a refused batch; want 0", n, err)
			}
		})
	}
}
