package postgres_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/eval"
	"github.com/agentcraftlab/agentcraft/search/memory"
)

// collection names the files of one test collection under
// AGENTCRAFT_IR_DATA (the layout search/eval reads).
type collection struct {
	dir, queries, qrels string
}

var (
	scifact      = collection{"scifact", "queries.test.tsv", "qrels.test.txt"}
	cacm         = collection{"cacm", "queries.tsv", "qrels.cacm.padded-ids.txt"}
	cacmAnserini = collection{"cacm", "queries.tsv", "qrels.cacm.txt"}
	jsquad       = collection{"jsquad-retrieval", "queries.tsv", "qrels.tsv"}
)

type loaded struct {
	docs   []search.Document
	topics []eval.Topic
	qrels  eval.Qrels
}

// load reads a collection; it skips the test unless AGENTCRAFT_IR_DATA is
// set, so a plain go test ./... stays fast and needs no data.
func load(t testing.TB, c collection) loaded {
	t.Helper()
	if raceEnabled {
		t.Skip("collection tests are skipped under -race (minutes of indexing); run them without -race")
	}
	dir := os.Getenv("AGENTCRAFT_IR_DATA")
	if dir == "" {
		t.Skip("AGENTCRAFT_IR_DATA is not set: point it at the directory holding scifact/, cacm/ and jsquad-retrieval/")
	}
	open := func(name string) *os.File {
		f, err := os.Open(filepath.Join(dir, c.dir, name))
		if err != nil {
			t.Fatalf("collection %s: %v", c.dir, err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	docs, err := eval.ReadCorpus(open("corpus.jsonl"), c.dir)
	if err != nil {
		t.Fatal(err)
	}
	topics, err := eval.ReadQueries(open(c.queries))
	if err != nil {
		t.Fatal(err)
	}
	qrels, err := eval.ReadQrels(open(c.qrels))
	if err != nil {
		t.Fatal(err)
	}
	return loaded{docs, topics, qrels}
}

// measure evaluates BM25 (depth 1000, as search/eval does) on e and on a
// memory engine over the same documents.
func measure(t *testing.T, e search.Engine, l loaded) (got, mem eval.Metrics) {
	t.Helper()
	ctx := t.Context()
	q := search.Query{Mode: search.ModeFulltext}
	start := time.Now()
	if err := e.Index(ctx, l.docs...); err != nil {
		t.Fatal(err)
	}
	indexed := time.Since(start)
	start = time.Now()
	run, err := eval.Retrieve(ctx, e, l.topics, q, 1000)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("postgres: indexed %d docs in %v, %d queries (depth 1000) in %v", len(l.docs), indexed.Round(time.Millisecond), len(l.topics), time.Since(start).Round(time.Millisecond))
	m, err := memory.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Index(ctx, l.docs...); err != nil {
		t.Fatal(err)
	}
	memRun, err := eval.Retrieve(ctx, m, l.topics, q, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return eval.Evaluate(run, l.qrels), eval.Evaluate(memRun, l.qrels)
}

// sameAsMemory fails when a metric differs from memory's by more than
// rounding: both engines accumulate BM25 in float32, memory in map order,
// so a near-tie may flip, which moves a metric by far less than this.
func sameAsMemory(t *testing.T, name string, got, mem eval.Metrics) {
	t.Helper()
	const tol = 5e-4
	if math.Abs(got.NDCG10-mem.NDCG10) > tol || math.Abs(got.MAP-mem.MAP) > tol || math.Abs(got.Recall100-mem.Recall100) > tol || got.Queries != mem.Queries {
		t.Errorf("%s: postgres %+v, memory %+v: the engines must rank alike", name, got, mem)
	}
}

// The thresholds are search/eval's (published anchors; see there).
func TestSciFactBM25(t *testing.T) {
	l := load(t, scifact)
	got, mem := measure(t, open(t, nil), l)
	t.Logf("scifact: nDCG@10 %.4f MAP %.4f R@100 %.4f (memory %.4f %.4f %.4f)", got.NDCG10, got.MAP, got.Recall100, mem.NDCG10, mem.MAP, mem.Recall100)
	sameAsMemory(t, "scifact", got, mem)
	if got.Queries != 300 {
		t.Errorf("judged queries = %d, want 300", got.Queries)
	}
	if got.NDCG10 < 0.679 {
		t.Errorf("SciFact BM25 nDCG@10 = %.4f, want >= 0.679 (Anserini BM25 flat)", got.NDCG10)
	}
}

func TestCACMBM25(t *testing.T) {
	for _, c := range []struct {
		name string
		col  collection
	}{{"padded qrels", cacm}, {"anserini qrels", cacmAnserini}} {
		l := load(t, c.col)
		got, mem := measure(t, open(t, nil), l)
		t.Logf("cacm (%s): MAP %.4f nDCG@10 %.4f R@100 %.4f (memory %.4f %.4f %.4f)", c.name, got.MAP, got.NDCG10, got.Recall100, mem.MAP, mem.NDCG10, mem.Recall100)
		sameAsMemory(t, "cacm "+c.name, got, mem)
		if got.Queries != 52 {
			t.Errorf("%s: judged queries = %d, want 52", c.name, got.Queries)
		}
		if got.MAP < 0.3123 {
			t.Errorf("%s: CACM BM25 MAP = %.4f, want >= 0.3123 (Anserini BM25)", c.name, got.MAP)
		}
	}
}

func TestJSQuADBM25(t *testing.T) {
	l := load(t, jsquad)
	got, mem := measure(t, open(t, nil), l)
	t.Logf("jsquad: nDCG@10 %.4f MAP %.4f R@100 %.4f (memory %.4f %.4f %.4f)", got.NDCG10, got.MAP, got.Recall100, mem.NDCG10, mem.MAP, mem.Recall100)
	sameAsMemory(t, "jsquad", got, mem)
	if got.Queries != 4442 {
		t.Errorf("judged queries = %d, want 4442", got.Queries)
	}
	if got.NDCG10 < 0.94 {
		t.Errorf("JSQuAD BM25 nDCG@10 = %.4f, want >= 0.94", got.NDCG10)
	}
}
