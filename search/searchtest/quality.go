package searchtest

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

// Collection names the files of one test collection under
// AGENTCRAFT_IR_DATA (the layout search/eval reads).
type Collection struct {
	Dir, Queries, Qrels string
}

// The collections Quality measures.
var (
	SciFact      = Collection{"scifact", "queries.test.tsv", "qrels.test.txt"}
	CACM         = Collection{"cacm", "queries.tsv", "qrels.cacm.padded-ids.txt"}
	CACMAnserini = Collection{"cacm", "queries.tsv", "qrels.cacm.txt"}
	JSQuAD       = Collection{"jsquad-retrieval", "queries.tsv", "qrels.tsv"}
)

// Loaded is a collection read into memory.
type Loaded struct {
	Docs   []search.Document
	Topics []eval.Topic
	Qrels  eval.Qrels
}

// Load reads a collection; it skips the test unless AGENTCRAFT_IR_DATA is
// set, so a plain go test ./... stays fast and needs no data, and under the
// race detector.
func Load(tb testing.TB, c Collection) Loaded {
	tb.Helper()
	if raceEnabled {
		tb.Skip("collection tests are skipped under -race (minutes of indexing); run them without -race")
	}
	dir := os.Getenv("AGENTCRAFT_IR_DATA")
	if dir == "" {
		tb.Skip("AGENTCRAFT_IR_DATA is not set: point it at the directory holding scifact/, cacm/ and jsquad-retrieval/")
	}
	open := func(name string) *os.File {
		f, err := os.Open(filepath.Join(dir, c.Dir, name))
		if err != nil {
			tb.Fatalf("collection %s: %v", c.Dir, err)
		}
		tb.Cleanup(func() { f.Close() })
		return f
	}
	docs, err := eval.ReadCorpus(open("corpus.jsonl"), c.Dir)
	if err != nil {
		tb.Fatal(err)
	}
	topics, err := eval.ReadQueries(open(c.Queries))
	if err != nil {
		tb.Fatal(err)
	}
	qrels, err := eval.ReadQrels(open(c.Qrels))
	if err != nil {
		tb.Fatal(err)
	}
	return Loaded{docs, topics, qrels}
}

// measure evaluates BM25 (depth 1000, as search/eval does) on e and on a
// memory engine over the same documents.
func measure(t *testing.T, name string, e search.Engine, l Loaded) (got, mem eval.Metrics) {
	t.Helper()
	ctx := t.Context()
	q := search.Query{Mode: search.ModeFulltext}
	start := time.Now()
	if err := e.Index(ctx, l.Docs...); err != nil {
		t.Fatal(err)
	}
	indexed := time.Since(start)
	start = time.Now()
	run, err := eval.Retrieve(ctx, e, l.Topics, q, 1000)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: indexed %d docs in %v, %d queries (depth 1000) in %v", name, len(l.Docs), indexed.Round(time.Millisecond), len(l.Topics), time.Since(start).Round(time.Millisecond))
	m, err := memory.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Index(ctx, l.Docs...); err != nil {
		t.Fatal(err)
	}
	memRun, err := eval.Retrieve(ctx, m, l.Topics, q, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return eval.Evaluate(run, l.Qrels), eval.Evaluate(memRun, l.Qrels)
}

// sameAsMemory fails when a metric differs from memory's by more than
// rounding: both engines accumulate BM25 in float32, memory in map order,
// so a near-tie may flip, which moves a metric by far less than this.
func sameAsMemory(t *testing.T, name, col string, got, mem eval.Metrics) {
	t.Helper()
	const tol = 5e-4
	if math.Abs(got.NDCG10-mem.NDCG10) > tol || math.Abs(got.MAP-mem.MAP) > tol || math.Abs(got.Recall100-mem.Recall100) > tol || got.Queries != mem.Queries {
		t.Errorf("%s: %s %+v, memory %+v: the engines must rank alike", col, name, got, mem)
	}
}

// Quality measures BM25 on SciFact, CACM and JSQuAD with engines from open
// (each new and empty, called name in messages), as subtests: every metric
// must match search/memory's to rounding and clear search/eval's
// thresholds (published anchors; see there). It needs AGENTCRAFT_IR_DATA
// and skips under the race detector.
func Quality(t *testing.T, name string, open func(t *testing.T) search.Engine) {
	t.Run("scifact", func(t *testing.T) {
		l := Load(t, SciFact)
		got, mem := measure(t, name, open(t), l)
		t.Logf("scifact: nDCG@10 %.4f MAP %.4f R@100 %.4f (memory %.4f %.4f %.4f)", got.NDCG10, got.MAP, got.Recall100, mem.NDCG10, mem.MAP, mem.Recall100)
		sameAsMemory(t, name, "scifact", got, mem)
		if got.Queries != 300 {
			t.Errorf("judged queries = %d, want 300", got.Queries)
		}
		if got.NDCG10 < 0.679 {
			t.Errorf("SciFact BM25 nDCG@10 = %.4f, want >= 0.679 (Anserini BM25 flat)", got.NDCG10)
		}
	})
	t.Run("cacm", func(t *testing.T) {
		for _, c := range []struct {
			name string
			col  Collection
		}{{"padded qrels", CACM}, {"anserini qrels", CACMAnserini}} {
			l := Load(t, c.col)
			got, mem := measure(t, name, open(t), l)
			t.Logf("cacm (%s): MAP %.4f nDCG@10 %.4f R@100 %.4f (memory %.4f %.4f %.4f)", c.name, got.MAP, got.NDCG10, got.Recall100, mem.MAP, mem.NDCG10, mem.Recall100)
			sameAsMemory(t, name, "cacm "+c.name, got, mem)
			if got.Queries != 52 {
				t.Errorf("%s: judged queries = %d, want 52", c.name, got.Queries)
			}
			if got.MAP < 0.3123 {
				t.Errorf("%s: CACM BM25 MAP = %.4f, want >= 0.3123 (Anserini BM25)", c.name, got.MAP)
			}
		}
	})
	t.Run("jsquad", func(t *testing.T) {
		l := Load(t, JSQuAD)
		got, mem := measure(t, name, open(t), l)
		t.Logf("jsquad: nDCG@10 %.4f MAP %.4f R@100 %.4f (memory %.4f %.4f %.4f)", got.NDCG10, got.MAP, got.Recall100, mem.NDCG10, mem.MAP, mem.Recall100)
		sameAsMemory(t, name, "jsquad", got, mem)
		if got.Queries != 4442 {
			t.Errorf("judged queries = %d, want 4442", got.Queries)
		}
		if got.NDCG10 < 0.94 {
			t.Errorf("JSQuAD BM25 nDCG@10 = %.4f, want >= 0.94", got.NDCG10)
		}
	})
}
