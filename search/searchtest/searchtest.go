// Package searchtest is the conformance suite for search.Engine: every
// backend (search/memory now; SQLite and PostgreSQL later) runs it from a
// test of its own package:
//
//	func TestConformance(t *testing.T) {
//		searchtest.Run(t, func(t *testing.T, emb search.Embedder) search.Engine {
//			e, err := memory.New(&memory.Options{Embedder: emb})
//			if err != nil {
//				t.Fatal(err)
//			}
//			return e
//		})
//	}
//
// newEngine must return a new, empty engine with default ranking settings
// each time it is called (a subtest may ask for more than one); emb is nil
// when the subtest wants an engine without an embedder. Subtests do not run
// in parallel, so a backend may share one database between them as long as
// each engine starts empty. The suite checks behaviour a user of the engine notices:
// BM25 order (relative order only, never raw scores), top-k, metadata
// filters, several indexes, delete and replace, query validation, Japanese
// text, vector, hybrid and degraded-hybrid answers, and concurrent use
// (run it with -race).
//
// Vectors come from TableEmbedder, a fixed lookup table from text to
// vector. It is a test fixture, not a model: it knows only the texts the
// suite registers and fails on any other. So that every engine embeds the
// same strings, documents of the vector subtests have no Title and their
// Text is the table key; the one titled document embedded (in
// hybrid/embedder_fails) is registered both as its text and as title, a
// newline and text.
//
// The database engines, which must rank exactly as search/memory does, also
// run MatchesMemory (a random replay compared with memory, score by score)
// and Quality (BM25 on the test collections under AGENTCRAFT_IR_DATA,
// compared with memory and with published anchors), and benchmark with
// Load, QueryBench and HybridBench. Their posting caches are checked with
// CacheSeesWrites and CacheConcurrent (two engines on the same storage),
// their partial vector scan with VectorFilterWidens.
package searchtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentcraftlab/agentcraft/search"
)

// Run runs the conformance suite as subtests of t.
func Run(t *testing.T, newEngine func(t *testing.T, emb search.Embedder) search.Engine) {
	t.Helper()
	s := suite{newEngine: newEngine}
	t.Run("fulltext/bm25_order", s.bm25Order)
	t.Run("fulltext/top_k", s.topK)
	t.Run("fulltext/filter", s.filter)
	t.Run("fulltext/indexes", s.indexes)
	t.Run("delete", s.delete)
	t.Run("reindex_replaces", s.reindex)
	t.Run("invalid_query", s.invalidQuery)
	t.Run("japanese", s.japanese)
	t.Run("vector/nearest_first", s.vectorNearest)
	t.Run("vector/no_embedder", s.vectorNoEmbedder)
	t.Run("vector/learned_dimension", s.vectorLearnedDimension)
	t.Run("hybrid/embedder_fails", s.hybridEmbedderFails)
	t.Run("hybrid/no_embedder", s.hybridNoEmbedder)
	t.Run("hybrid/fuses", s.hybridFuses)
	t.Run("concurrent", s.concurrent)
}

type suite struct {
	newEngine func(t *testing.T, emb search.Embedder) search.Engine
}

// engine returns a new engine holding docs.
func (s suite) engine(t *testing.T, emb search.Embedder, docs ...search.Document) search.Engine {
	t.Helper()
	e := s.newEngine(t, emb)
	if len(docs) > 0 {
		if err := e.Index(t.Context(), docs...); err != nil {
			t.Fatalf("Index: %v", err)
		}
	}
	return e
}

func mustSearch(t *testing.T, e search.Engine, q search.Query) search.Result {
	t.Helper()
	res, err := e.Search(t.Context(), q)
	if err != nil {
		t.Fatalf("Search(%+v): %v", q, err)
	}
	return res
}

// keys names hits as "index/id", best first.
func keys(hs []search.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Index + "/" + h.ID
	}
	return out
}

func sortedKeys(hs []search.Hit) []string {
	out := keys(hs)
	slices.Sort(out)
	return out
}

// checkDescending reports hits whose scores rise: within one Result higher
// is better, whatever the mode.
func checkDescending(t *testing.T, hs []search.Hit) {
	t.Helper()
	for i := 1; i < len(hs); i++ {
		if hs[i].Score > hs[i-1].Score {
			t.Errorf("hit %d (%s) scores %v, above hit %d (%s) at %v: hits must be best first",
				i, hs[i].ID, hs[i].Score, i-1, hs[i-1].ID, hs[i-1].Score)
		}
	}
}

// corpus is a tiny collection whose BM25 order for "raft consensus" holds
// for any k1 > 0 and 0 < b <= 1:
//
//   - a has both terms twice in a short text;
//   - c has "raft" once, b has "consensus" once, with equally long texts;
//     "raft" is in 2 documents and "consensus" in 3, so c outranks b;
//   - e has "consensus" once in a text twice as long as b's, so it is last;
//   - d matches nothing.
func corpus() []search.Document {
	return []search.Document{
		{ID: "a", Index: "kb", Title: "Raft", Text: "Raft is a consensus algorithm. Raft consensus elects a leader.",
			Metadata: map[string]string{"kind": "algorithm", "lang": "en"}},
		{ID: "b", Index: "kb", Text: "Paxos reaches consensus among replicas through numbered proposals and acceptors.",
			Metadata: map[string]string{"kind": "algorithm", "lang": "en"}},
		{ID: "c", Index: "kb", Text: "The raft floated down the river past the old mill and the quiet village.",
			Metadata: map[string]string{"kind": "story", "lang": "en"}},
		{ID: "d", Index: "kb", Text: "Green tea is brewed from leaves picked in spring.",
			Metadata: map[string]string{"kind": "food", "lang": "en"}},
		{ID: "e", Index: "kb", Text: "Committees sometimes reach consensus after long meetings, many coffee breaks, endless slides, " +
			"heated debates, postponed votes, reluctant compromises and tired chairpersons.",
			Metadata: map[string]string{"kind": "story", "lang": "en"}},
	}
}

const corpusQuery = "raft consensus"

func (s suite) bm25Order(t *testing.T) {
	e := s.engine(t, nil, corpus()...)
	res := mustSearch(t, e, search.Query{Text: corpusQuery, Mode: search.ModeFulltext})
	if diff := gocmp.Diff([]string{"kb/a", "kb/c", "kb/b", "kb/e"}, keys(res.Hits)); diff != "" {
		t.Errorf("hits for %q (-want +got):\n%s", corpusQuery, diff)
	}
	checkDescending(t, res.Hits)
	if res.Mode != search.ModeFulltext || res.Note != "" {
		t.Errorf("Mode %q Note %q, want %q and no note", res.Mode, res.Note, search.ModeFulltext)
	}
	// A hit carries the document as indexed, so callers need no second lookup.
	if len(res.Hits) > 0 {
		want := corpus()[0]
		got := res.Hits[0]
		if diff := gocmp.Diff(search.Hit{ID: want.ID, Index: want.Index, Title: want.Title, Text: want.Text, Metadata: want.Metadata}, got,
			cmpopts.IgnoreFields(search.Hit{}, "Score")); diff != "" {
			t.Errorf("first hit (-want +got):\n%s", diff)
		}
	}
	// Auto mode without an embedder is full text.
	auto := mustSearch(t, e, search.Query{Text: corpusQuery})
	if diff := gocmp.Diff(keys(res.Hits), keys(auto.Hits)); diff != "" || auto.Mode != search.ModeFulltext {
		t.Errorf("auto mode without embedder: mode %q, hits differ from fulltext (-fulltext +auto):\n%s", auto.Mode, diff)
	}
	if got := mustSearch(t, e, search.Query{Text: "zebra"}).Hits; len(got) != 0 {
		t.Errorf("query matching nothing returned %v", keys(got))
	}
}

func (s suite) topK(t *testing.T) {
	e := s.engine(t, nil, corpus()...)
	res := mustSearch(t, e, search.Query{Text: corpusQuery, TopK: 2})
	if diff := gocmp.Diff([]string{"kb/a", "kb/c"}, keys(res.Hits)); diff != "" {
		t.Errorf("TopK 2 (-want +got):\n%s", diff)
	}

	var many []search.Document
	for i := range search.DefaultTopK + 2 {
		many = append(many, search.Document{ID: fmt.Sprintf("w%02d", i), Index: "many", Text: "widget " + strings.Repeat("filler ", i)})
	}
	e = s.engine(t, nil, many...)
	for _, tt := range []struct{ topK, want int }{{0, search.DefaultTopK}, {1, 1}, {search.DefaultTopK + 1, search.DefaultTopK + 1}, {100, len(many)}} {
		if got := len(mustSearch(t, e, search.Query{Text: "widget", TopK: tt.topK}).Hits); got != tt.want {
			t.Errorf("TopK %d over %d matches: %d hits, want %d", tt.topK, len(many), got, tt.want)
		}
	}
}

func (s suite) filter(t *testing.T) {
	e := s.engine(t, nil, corpus()...)
	tests := []struct {
		name   string
		filter map[string]string
		want   []string
	}{
		{"one key", map[string]string{"kind": "story"}, []string{"kb/c", "kb/e"}},
		{"two keys", map[string]string{"kind": "algorithm", "lang": "en"}, []string{"kb/a", "kb/b"}},
		{"value is case sensitive", map[string]string{"kind": "Story"}, []string{}},
		{"missing key", map[string]string{"author": "x"}, []string{}},
		{"no match among matches", map[string]string{"kind": "food"}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustSearch(t, e, search.Query{Text: corpusQuery, Filter: tt.filter})
			if diff := gocmp.Diff(tt.want, keys(res.Hits)); diff != "" {
				t.Errorf("hits with filter %v (-want +got):\n%s", tt.filter, diff)
			}
		})
	}
}

func (s suite) indexes(t *testing.T) {
	docs := corpus()
	// The same ID in another index is another document.
	docs = append(docs,
		search.Document{ID: "a", Index: "notes", Text: "Notes on raft consensus and log replication."},
		search.Document{ID: "n2", Index: "notes", Text: "Consensus was reached on the lunch menu."})
	e := s.engine(t, nil, docs...)
	tests := []struct {
		name    string
		indexes []string
		want    []string
	}{
		{"first", []string{"kb"}, []string{"kb/a", "kb/b", "kb/c", "kb/e"}},
		{"second", []string{"notes"}, []string{"notes/a", "notes/n2"}},
		{"both", []string{"kb", "notes"}, []string{"kb/a", "kb/b", "kb/c", "kb/e", "notes/a", "notes/n2"}},
		{"all by default", nil, []string{"kb/a", "kb/b", "kb/c", "kb/e", "notes/a", "notes/n2"}},
		{"unknown", []string{"nope"}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustSearch(t, e, search.Query{Text: corpusQuery, Indexes: tt.indexes})
			// Statistics may be per index, so order across indexes is not
			// part of the contract; membership is.
			if diff := gocmp.Diff(tt.want, sortedKeys(res.Hits)); diff != "" {
				t.Errorf("hits in %v (-want +got):\n%s", tt.indexes, diff)
			}
			checkDescending(t, res.Hits)
		})
	}
	// Deleting from one index leaves the same ID in the other alone.
	if err := e.Delete(t.Context(), "notes", "a"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	res := mustSearch(t, e, search.Query{Text: corpusQuery})
	if diff := gocmp.Diff([]string{"kb/a", "kb/b", "kb/c", "kb/e", "notes/n2"}, sortedKeys(res.Hits)); diff != "" {
		t.Errorf("after deleting notes/a (-want +got):\n%s", diff)
	}
}

func (s suite) delete(t *testing.T) {
	ctx := t.Context()
	e := s.engine(t, nil, corpus()...)
	if err := e.Delete(ctx, "kb", "c", "no-such-id"); err != nil {
		t.Fatalf("Delete with an unknown id: %v", err)
	}
	if err := e.Delete(ctx, "no-such-index", "a"); err != nil {
		t.Fatalf("Delete from an unknown index: %v", err)
	}
	res := mustSearch(t, e, search.Query{Text: corpusQuery})
	if diff := gocmp.Diff([]string{"kb/a", "kb/b", "kb/e"}, keys(res.Hits)); diff != "" {
		t.Errorf("after deleting kb/c (-want +got):\n%s", diff)
	}
	if got := mustSearch(t, e, search.Query{Text: "river village"}).Hits; len(got) != 0 {
		t.Errorf("deleted document's own words still find %v", keys(got))
	}
	// A deleted document can come back.
	if err := e.Index(ctx, corpus()[2]); err != nil {
		t.Fatalf("Index: %v", err)
	}
	if diff := gocmp.Diff([]string{"kb/c"}, keys(mustSearch(t, e, search.Query{Text: "river village"}).Hits)); diff != "" {
		t.Errorf("re-added document (-want +got):\n%s", diff)
	}
}

func (s suite) reindex(t *testing.T) {
	e := s.engine(t, nil, corpus()...)
	if err := e.Index(t.Context(), search.Document{ID: "b", Index: "kb", Title: "Crab", Text: "Ferris the crab",
		Metadata: map[string]string{"kind": "mascot"}}); err != nil {
		t.Fatalf("Index: %v", err)
	}
	if got := mustSearch(t, e, search.Query{Text: "paxos replicas"}).Hits; len(got) != 0 {
		t.Errorf("old text of the replaced document still finds %v", keys(got))
	}
	res := mustSearch(t, e, search.Query{Text: "crab"})
	if diff := gocmp.Diff([]string{"kb/b"}, keys(res.Hits)); diff != "" {
		t.Errorf("new text (-want +got):\n%s", diff)
	}
	if len(res.Hits) == 1 && (res.Hits[0].Title != "Crab" || res.Hits[0].Text != "Ferris the crab") {
		t.Errorf("replaced hit has title %q text %q, want the new ones", res.Hits[0].Title, res.Hits[0].Text)
	}
	if got := mustSearch(t, e, search.Query{Text: corpusQuery, Filter: map[string]string{"kind": "algorithm"}}).Hits; !slices.Equal(keys(got), []string{"kb/a"}) {
		t.Errorf("old metadata still matches: %v, want [kb/a]", keys(got))
	}
	if got := mustSearch(t, e, search.Query{Text: "crab", Filter: map[string]string{"kind": "mascot"}}).Hits; !slices.Equal(keys(got), []string{"kb/b"}) {
		t.Errorf("new metadata: %v, want [kb/b]", keys(got))
	}
	// One document, not two: a replaced ID is counted once.
	if got := mustSearch(t, e, search.Query{Text: "crab ferris", TopK: 100}).Hits; len(got) != 1 {
		t.Errorf("replaced document returned %d times: %v", len(got), keys(got))
	}
}

// invalidQuery checks that Search rejects exactly what Query.Validate
// rejects, with Validate's message, and answers what it accepts. When
// Validate learns to reject more (an empty text, say), the suite follows.
func (s suite) invalidQuery(t *testing.T) {
	e := s.engine(t, nil, corpus()...)
	tests := []struct {
		name string
		q    search.Query
	}{
		{"empty text", search.Query{}},
		{"blank text", search.Query{Text: " \t\n"}},
		{"unknown mode", search.Query{Text: corpusQuery, Mode: "semantic"}},
		{"negative top_k", search.Query{Text: corpusQuery, TopK: -1}},
		{"valid", search.Query{Text: corpusQuery, Mode: search.ModeFulltext, TopK: 3}},
	}
	rejected := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verr := tt.q.Validate()
			res, err := e.Search(t.Context(), tt.q)
			switch {
			case verr != nil && err == nil:
				t.Errorf("Search accepted a query Validate rejects (%v); got %d hits", verr, len(res.Hits))
			case verr != nil && !strings.Contains(err.Error(), verr.Error()):
				t.Errorf("Search error %q does not carry Validate's %q", err, verr)
			case verr == nil && err != nil:
				t.Errorf("Search rejected a valid query: %v", err)
			case verr == nil && strings.TrimSpace(tt.q.Text) == "" && len(res.Hits) != 0:
				t.Errorf("query without text found %v", keys(res.Hits))
			}
			if verr != nil {
				rejected++
			}
		})
	}
	if rejected < 2 {
		t.Errorf("only %d of the queries are invalid; the table lost its invalid cases", rejected)
	}
}

func (s suite) japanese(t *testing.T) {
	e := s.engine(t, nil,
		search.Document{ID: "tsuyu", Index: "ja", Title: "梅雨", Text: "梅雨は東アジアの雨の多い期間のこと。"},
		search.Document{ID: "tower", Index: "ja", Text: "東京タワーは観光名所です。"},
		search.Document{ID: "en", Index: "ja", Text: "The rainy season in East Asia."})
	for _, tt := range []struct{ query, want string }{{"梅雨の期間", "ja/tsuyu"}, {"東京タワー", "ja/tower"}} {
		res := mustSearch(t, e, search.Query{Text: tt.query})
		if len(res.Hits) == 0 || keys(res.Hits)[0] != tt.want {
			t.Errorf("query %q: hits %v, want %s first", tt.query, keys(res.Hits), tt.want)
		}
	}
}

// vectorDocs point in known directions; vectorTable holds their vectors
// and a query's. Cosine to "query north" ({1, 0.1, 0}): north 0.995,
// northeast 0.856, east 0.0995, south -0.995.
func vectorDocs() []search.Document {
	return []search.Document{
		{ID: "north", Index: "vec", Text: "north wind", Metadata: map[string]string{"side": "left"}},
		{ID: "northeast", Index: "vec", Text: "northeast wind", Metadata: map[string]string{"side": "right"}},
		{ID: "east", Index: "vec", Text: "east wind", Metadata: map[string]string{"side": "right"}},
		{ID: "south", Index: "vec", Text: "south wind", Metadata: map[string]string{"side": "left"}},
	}
}

// learningEmbedder reports dimension 0 until its first answer, as
// embed.Client does without Options.Dimension (dimensions: left out of the
// configuration, the README's example).
type learningEmbedder struct {
	*TableEmbedder
	mu      sync.Mutex
	learned bool // guarded by mu
}

func (l *learningEmbedder) Dimension() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.learned {
		return 0
	}
	return l.TableEmbedder.Dimension()
}

func (l *learningEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := l.TableEmbedder.Embed(ctx, texts)
	if err == nil {
		l.mu.Lock()
		l.learned = true
		l.mu.Unlock()
	}
	return vs, err
}

// vectorLearnedDimension checks that an engine accepts an embedder whose
// dimension is not known yet (0) and learns it from the first answer,
// instead of refusing to start.
func (s suite) vectorLearnedDimension(t *testing.T) {
	emb := &learningEmbedder{TableEmbedder: NewTableEmbedder(3, vectorTable())}
	e := s.engine(t, emb, vectorDocs()...)
	res := mustSearch(t, e, search.Query{Text: "query north", Mode: search.ModeVector, TopK: 2})
	if diff := gocmp.Diff([]string{"vec/north", "vec/northeast"}, keys(res.Hits)); diff != "" {
		t.Errorf("vector hits with a learned dimension (-want +got):\n%s", diff)
	}
}

func vectorTable() map[string][]float32 {
	return map[string][]float32{
		"north wind":     {1, 0, 0},
		"northeast wind": {0.8, 0.6, 0},
		"east wind":      {0, 1, 0},
		"south wind":     {-1, 0, 0},
		"query north":    {1, 0.1, 0},
	}
}

func (s suite) vectorNearest(t *testing.T) {
	emb := NewTableEmbedder(3, vectorTable())
	e := s.engine(t, emb, vectorDocs()...)
	res := mustSearch(t, e, search.Query{Text: "query north", Mode: search.ModeVector})
	if diff := gocmp.Diff([]string{"vec/north", "vec/northeast", "vec/east", "vec/south"}, keys(res.Hits)); diff != "" {
		t.Errorf("vector hits (-want +got):\n%s", diff)
	}
	checkDescending(t, res.Hits)
	if res.Mode != search.ModeVector || res.Note != "" {
		t.Errorf("Mode %q Note %q, want %q and no note", res.Mode, res.Note, search.ModeVector)
	}
	res = mustSearch(t, e, search.Query{Text: "query north", Mode: search.ModeVector, TopK: 2})
	if diff := gocmp.Diff([]string{"vec/north", "vec/northeast"}, keys(res.Hits)); diff != "" {
		t.Errorf("vector hits with TopK 2 (-want +got):\n%s", diff)
	}
	res = mustSearch(t, e, search.Query{Text: "query north", Mode: search.ModeVector, Filter: map[string]string{"side": "right"}})
	if diff := gocmp.Diff([]string{"vec/northeast", "vec/east"}, keys(res.Hits)); diff != "" {
		t.Errorf("filtered vector hits (-want +got):\n%s", diff)
	}
	if err := e.Delete(t.Context(), "vec", "north"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	res = mustSearch(t, e, search.Query{Text: "query north", Mode: search.ModeVector, TopK: 1})
	if diff := gocmp.Diff([]string{"vec/northeast"}, keys(res.Hits)); diff != "" {
		t.Errorf("vector hits after deleting the nearest (-want +got):\n%s", diff)
	}
}

func (s suite) vectorNoEmbedder(t *testing.T) {
	e := s.engine(t, nil, corpus()...)
	_, err := e.Search(t.Context(), search.Query{Text: corpusQuery, Mode: search.ModeVector})
	if !errors.Is(err, search.ErrNoEmbedder) {
		t.Errorf("vector query without embedder: error %v, want search.ErrNoEmbedder", err)
	}
}

// corpusTable gives every corpus document a vector, so an engine with an
// embedder can index it. A titled document is registered under its text
// alone and under title+"\n"+text (the memory engine's choice), so engines
// that embed either way find their string.
func corpusTable() map[string][]float32 {
	table := map[string][]float32{}
	for i, d := range corpus() {
		v := make([]float32, 8)
		v[i] = 1
		table[d.Text] = v
		if d.Title != "" {
			table[d.Title+"\n"+d.Text] = v
		}
	}
	table[corpusQuery] = []float32{0, 0, 0, 1, 0, 0, 0, 0}
	return table
}

func (s suite) hybridEmbedderFails(t *testing.T) {
	emb := NewTableEmbedder(8, corpusTable())
	e := s.engine(t, emb, corpus()...)
	emb.SetErr(errors.New("embedding server unreachable"))
	res, err := e.Search(t.Context(), search.Query{Text: corpusQuery, Mode: search.ModeHybrid})
	if err != nil {
		t.Fatalf("hybrid query with a failing embedder: %v; want BM25 results", err)
	}
	if diff := gocmp.Diff([]string{"kb/a", "kb/c", "kb/b", "kb/e"}, keys(res.Hits)); diff != "" {
		t.Errorf("degraded hybrid hits (-want +got):\n%s", diff)
	}
	if res.Note == "" || res.Mode != search.ModeFulltext {
		t.Errorf("Mode %q Note %q, want %q and a note saying why", res.Mode, res.Note, search.ModeFulltext)
	}
	if _, err := e.Search(t.Context(), search.Query{Text: corpusQuery, Mode: search.ModeVector}); err == nil {
		t.Error("vector query with a failing embedder returned no error")
	}
}

func (s suite) hybridNoEmbedder(t *testing.T) {
	e := s.engine(t, nil, corpus()...)
	res := mustSearch(t, e, search.Query{Text: corpusQuery, Mode: search.ModeHybrid})
	if diff := gocmp.Diff([]string{"kb/a", "kb/c", "kb/b", "kb/e"}, keys(res.Hits)); diff != "" {
		t.Errorf("hybrid hits without embedder (-want +got):\n%s", diff)
	}
	if res.Note == "" || res.Mode != search.ModeFulltext {
		t.Errorf("Mode %q Note %q, want %q and a note saying why", res.Mode, res.Note, search.ModeFulltext)
	}
}

// hybridFuses ranks "both" second in each list: BM25 prefers "lexical"
// (the query's words twice in a short text), vectors prefer "semantic"
// (no query word at all). Fusion must put "both" first and keep the
// leaders of both lists. With RRF (k=60): both 2/62 = 0.0323, lexical
// 1/61 + 1/66 = 0.0315 (last of six vectors), semantic 1/61 = 0.0164.
func (s suite) hybridFuses(t *testing.T) {
	docs := []search.Document{
		{ID: "lexical", Index: "h", Text: "solar panel efficiency, solar panel efficiency"},
		{ID: "both", Index: "h", Text: "solar panel efficiency measured on a rooftop over many sunny summer days"},
		{ID: "semantic", Index: "h", Text: "photovoltaic output per square metre"},
		{ID: "wind", Index: "h", Text: "wind turbine maintenance"},
		{ID: "fish", Index: "h", Text: "river fishing in autumn"},
		{ID: "bread", Index: "h", Text: "sourdough bread recipe"},
	}
	table := map[string][]float32{
		"solar panel efficiency": {1, 0},
		docs[0].Text:             {-1, 0},
		docs[1].Text:             {0.9, 0.436},
		docs[2].Text:             {1, 0},
		docs[3].Text:             {0.5, 0.866},
		docs[4].Text:             {0, 1},
		docs[5].Text:             {-0.5, -0.866},
	}
	e := s.engine(t, NewTableEmbedder(2, table), docs...)
	for _, mode := range []search.Mode{search.ModeHybrid, search.ModeAuto} {
		res := mustSearch(t, e, search.Query{Text: "solar panel efficiency", Mode: mode})
		got := keys(res.Hits)
		if len(got) == 0 || got[0] != "h/both" {
			t.Errorf("mode %q: hits %v, want h/both first", mode, got)
		}
		if !slices.Contains(got, "h/lexical") || !slices.Contains(got, "h/semantic") {
			t.Errorf("mode %q: hits %v, want the leaders of both lists (h/lexical, h/semantic)", mode, got)
		}
		checkDescending(t, res.Hits)
		if res.Mode != search.ModeHybrid || res.Note != "" {
			t.Errorf("mode %q: result Mode %q Note %q, want %q and no note", mode, res.Mode, res.Note, search.ModeHybrid)
		}
	}
	// The leaders of the single lists confirm the fixture means what the
	// comment says.
	if got := keys(mustSearch(t, e, search.Query{Text: "solar panel efficiency", Mode: search.ModeFulltext}).Hits); !slices.Equal(got, []string{"h/lexical", "h/both"}) {
		t.Errorf("fulltext hits %v, want [h/lexical h/both]", got)
	}
	if got := keys(mustSearch(t, e, search.Query{Text: "solar panel efficiency", Mode: search.ModeVector, TopK: 2}).Hits); !slices.Equal(got, []string{"h/semantic", "h/both"}) {
		t.Errorf("vector hits %v, want [h/semantic h/both]", got)
	}
}

// concurrent indexes, searches and deletes from several goroutines; under
// -race it finds unguarded state, and the final count finds lost updates.
func (s suite) concurrent(t *testing.T) {
	e := s.engine(t, nil, corpus()...)
	ctx := t.Context()
	const workers, perWorker = 4, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				id := fmt.Sprintf("w%d-%03d", w, i)
				if err := e.Index(ctx, search.Document{ID: id, Index: "conc", Text: "concurrent marker " + id}); err != nil {
					errs <- fmt.Errorf("Index %s: %w", id, err)
					return
				}
				if _, err := e.Search(ctx, search.Query{Text: "marker"}); err != nil {
					errs <- fmt.Errorf("Search: %w", err)
					return
				}
				if i%2 == 0 {
					if err := e.Delete(ctx, "conc", id); err != nil {
						errs <- fmt.Errorf("Delete %s: %w", id, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var want []string
	for w := range workers {
		for i := 1; i < perWorker; i += 2 {
			want = append(want, fmt.Sprintf("conc/w%d-%03d", w, i))
		}
	}
	res := mustSearch(t, e, search.Query{Text: "marker", Indexes: []string{"conc"}, TopK: workers * perWorker})
	if diff := gocmp.Diff(want, sortedKeys(res.Hits)); diff != "" {
		t.Errorf("documents after concurrent index and delete (-want +got):\n%s", diff)
	}
}

// TableEmbedder is a test fixture standing in for an embedding model: a
// fixed table from text to vector. It returns a copy of the registered
// vector for each text and fails on texts it does not know, so a test sees
// exactly which strings an engine embeds. It has no notion of meaning and
// must not be used outside tests. It is safe for concurrent use.
type TableEmbedder struct {
	dim   int
	table map[string][]float32 // read-only after NewTableEmbedder
	mu    sync.Mutex
	err   error // guarded by mu
	calls int   // guarded by mu
}

var _ search.Embedder = (*TableEmbedder)(nil)

// NewTableEmbedder returns a fixture serving table, whose vectors must all
// have length dim. It copies table.
func NewTableEmbedder(dim int, table map[string][]float32) *TableEmbedder {
	cp := make(map[string][]float32, len(table))
	for text, v := range table {
		if len(v) != dim {
			panic(fmt.Sprintf("searchtest: table vector for %q has length %d, want %d", text, len(v), dim))
		}
		cp[text] = slices.Clone(v)
	}
	return &TableEmbedder{dim: dim, table: cp}
}

// Dimension implements search.Embedder.
func (f *TableEmbedder) Dimension() int { return f.dim }

// Embed implements search.Embedder.
func (f *TableEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	f.calls++
	err := f.err
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("searchtest: embed: %w", err)
	}
	out := make([][]float32, len(texts))
	for i, text := range texts {
		v, ok := f.table[text]
		if !ok {
			return nil, fmt.Errorf("searchtest: embed: no vector in the fixture table for %q", text)
		}
		out[i] = slices.Clone(v)
	}
	return out, nil
}

// SetErr makes every later Embed call fail with err (nil restores it).
func (f *TableEmbedder) SetErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

// Calls reports how many times Embed was called.
func (f *TableEmbedder) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}
