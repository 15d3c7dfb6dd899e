package sqlengine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/memory"
	"github.com/agentcraftlab/agentcraft/search/token"
)

// negDim is an embedder that reports an impossible dimension.
type negDim struct{}

func (negDim) Embed(context.Context, []string) ([][]float32, error) { return nil, nil }
func (negDim) Dimension() int                                       { return -1 }

func TestConfigureRefusesBadOptionsNamingTheEngine(t *testing.T) {
	for name, o := range map[string]*Options{
		"bm25":     {BM25: &memory.BM25{K1: 1.2, B: 1.5}},
		"embedder": {Embedder: negDim{}},
	} {
		_, err := Configure("sqlite search", o)
		if err == nil || !strings.HasPrefix(err.Error(), "sqlite search: "+name) {
			t.Errorf("%s: Configure error = %v, want one starting %q", name, err, "sqlite search: "+name)
		}
	}
}

func TestConfigureDefaults(t *testing.T) {
	c, err := Configure("postgres search", &Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.BM25 != memory.DefaultBM25 || c.Tokenizer == nil || c.Logger == nil || c.Lists == nil {
		t.Errorf("Configure(zero options) = %+v; want memory's BM25, a tokenizer, a logger and a posting cache", c)
	}
	if c.Searcher.RRFK != search.DefaultRRFK || c.Searcher.Depth != memory.DefaultHybridDepth || c.Searcher.Prefix != "postgres search" {
		t.Errorf("Searcher = %+v; want the default RRF constant and depth, prefixed by the engine", c.Searcher)
	}
	if c, _ := Configure("x", &Options{PostingsCacheBytes: -1}); c.Lists != nil {
		t.Error("a negative PostingsCacheBytes still made a posting cache")
	}
}

func TestPrepareKeepsTheLastOfEachInIndexOrder(t *testing.T) {
	docs := []search.Document{
		{Index: "b", ID: "1", Text: "first"},
		{Index: "a", ID: "1", Text: "other index"},
		{Index: "b", ID: "2", Text: "two"},
		{Index: "b", ID: "1", Text: "second"},
	}
	b, err := Prepare(context.Background(), token.New(nil), nil, docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, d := range b.Docs {
		texts = append(texts, d.Text)
	}
	if diff := cmp.Diff([]string{"other index", "two", "second"}, texts); diff != "" {
		t.Errorf("documents kept (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b"}, b.Names); diff != "" {
		t.Errorf("index order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string][]int{"a": {0}, "b": {1, 2}}, b.ByIndex); diff != "" {
		t.Errorf("positions by index (-want +got):\n%s", diff)
	}
	if len(b.Terms) != 3 || b.Vectors != nil {
		t.Errorf("terms %v, vectors %v; want terms of every document and no vectors without an embedder", b.Terms, b.Vectors)
	}
}

func TestPrepareChecksEveryDocumentFirst(t *testing.T) {
	refuse := errors.New("no NUL")
	docs := []search.Document{{Index: "a", ID: "1"}, {Index: "a", ID: "2", Text: "\x00"}}
	_, err := Prepare(context.Background(), token.New(nil), nil, docs, func(d search.Document) error {
		if strings.Contains(d.Text, "\x00") {
			return refuse
		}
		return nil
	})
	if !errors.Is(err, refuse) || !strings.Contains(err.Error(), `index document 1 ("2")`) {
		t.Errorf("Prepare error = %v; want the check's error naming document 1", err)
	}
	if _, err := Prepare(context.Background(), token.New(nil), nil, []search.Document{{ID: "x"}}, nil); err == nil {
		t.Error("Prepare accepted a document without an index")
	}
	if b, err := Prepare(context.Background(), token.New(nil), nil, nil, nil); b != nil || err != nil {
		t.Errorf("Prepare(no documents) = %v, %v; want nil, nil", b, err)
	}
}

// rows is a fixed result of search_indexes.
type rows struct {
	ixs []Index
	at  int
}

func (r *rows) Next() bool { r.at++; return r.at <= len(r.ixs) }
func (r *rows) Err() error { return nil }
func (r *rows) Scan(dest ...any) error {
	ix := r.ixs[r.at-1]
	*dest[0].(*int64), *dest[1].(*string) = ix.ID, ix.Name
	*dest[2].(*int64), *dest[3].(*int64), *dest[4].(*int64) = ix.Docs, ix.TotalLen, ix.Gen
	return nil
}

func TestSelected(t *testing.T) {
	all := []Index{{ID: 1, Name: "kb", Docs: 2, TotalLen: 9, Gen: 3}, {ID: 2, Name: "other"}}
	got, err := Selected(&rows{ixs: all}, search.Query{Indexes: []string{"kb", "missing"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || *got[0] != all[0] {
		t.Errorf("Selected(kb, missing) = %v, want only kb with its statistics", got)
	}
	if got, _ := Selected(&rows{ixs: all}, search.Query{}); len(got) != 2 {
		t.Errorf("Selected(no indexes named) = %v, want every index", got)
	}
}

func TestFrequencies(t *testing.T) {
	b := &Batch{
		Docs:  []search.Document{{ID: "x"}, {ID: "y"}, {ID: "z"}},
		Terms: [][]string{{"a", "b", "a"}, {"skip"}, {"b", "c"}},
	}
	f := b.Frequencies([]int{0, 2})
	want := Frequencies{
		TF:    []map[string]int32{{"a": 2, "b": 1}, {"b": 1, "c": 1}},
		DF:    map[string]int64{"a": 1, "b": 2, "c": 1},
		Order: []string{"a", "b", "c"},
	}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("Frequencies (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"x", "z"}, b.IDs([]int{0, 2})); diff != "" {
		t.Errorf("IDs (-want +got):\n%s", diff)
	}
	if err := CheckTermIDs([]string{"a", "b"}, map[string]TermID{"a": {ID: 1}}); err == nil || !strings.Contains(err.Error(), `"b"`) {
		t.Errorf("CheckTermIDs = %v, want an error naming term b", err)
	}
}
