package eval

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/memory"
	"github.com/agentcraftlab/agentcraft/search/token"
)

var (
	sweep   = flag.Bool("eval.sweep", false, "evaluate every tokenizer and BM25 setting and log the table")
	runsDir = flag.String("eval.runs", "", "write TREC run files into this directory")
)

// collection names the files of one test collection under DataDir.
type collection struct {
	dir, queries, qrels string
}

var (
	scifact = collection{"scifact", "queries.test.tsv", "qrels.test.txt"}
	// The padded qrels match the corpus ids; qrels.cacm.txt loses 55
	// judgments to unpadded ids (see the collection README).
	cacm         = collection{"cacm", "queries.tsv", "qrels.cacm.padded-ids.txt"}
	cacmAnserini = collection{"cacm", "queries.tsv", "qrels.cacm.txt"}
	jsquad       = collection{"jsquad-retrieval", "queries.tsv", "qrels.tsv"}
)

type loaded struct {
	docs   []search.Document
	topics []Topic
	qrels  Qrels
}

func load(t testing.TB, c collection) loaded {
	t.Helper()
	dir := DataDir()
	if dir == "" {
		t.Skip("IR test collections not found: set AGENTCRAFT_IR_DATA to the directory holding scifact/, cacm/ and jsquad-retrieval/")
	}
	open := func(name string) *os.File {
		f, err := os.Open(filepath.Join(dir, c.dir, name))
		if err != nil {
			t.Skipf("collection %s incomplete: %v", c.dir, err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	docs, err := ReadCorpus(open("corpus.jsonl"), c.dir)
	if err != nil {
		t.Fatal(err)
	}
	topics, err := ReadQueries(open(c.queries))
	if err != nil {
		t.Fatal(err)
	}
	qrels, err := ReadQrels(open(c.qrels))
	if err != nil {
		t.Fatal(err)
	}
	return loaded{docs, topics, qrels}
}

// measure indexes the collection into a fresh engine and evaluates BM25.
func measure(t testing.TB, l loaded, opts *memory.Options, name string) Metrics {
	t.Helper()
	ctx := context.Background()
	e, err := memory.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Index(ctx, l.docs...); err != nil {
		t.Fatal(err)
	}
	run, err := Retrieve(ctx, e, l.topics, search.Query{Mode: search.ModeFulltext}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if *runsDir != "" {
		f, err := os.Create(filepath.Join(*runsDir, name+".trec"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := WriteTREC(f, run, "agentcraft"); err != nil {
			t.Fatal(err)
		}
	}
	return Evaluate(run, l.qrels)
}

// Published anchors (see each collection's README): Anserini BM25 flat on
// SciFact nDCG@10 0.6789; Anserini BM25 on CACM MAP 0.3123; JSQuAD has none,
// the README's best reference run (own BM25 over bigrams) is 0.9448 and the
// issue asks for 0.94. Without stemming SciFact drops to about 0.665 and
// CACM to about 0.31, so these tests catch a broken English analyzer; a
// Japanese run without segmentation scores about 0.25 on JSQuAD.
func TestSciFactBM25(t *testing.T) {
	l := load(t, scifact)
	m := measure(t, l, nil, "scifact-bm25")
	t.Logf("scifact default: nDCG@10 %.4f MAP %.4f R@100 %.4f (%d queries)", m.NDCG10, m.MAP, m.Recall100, m.Queries)
	if m.Queries != 300 {
		t.Errorf("judged queries = %d, want 300", m.Queries)
	}
	if m.NDCG10 < 0.679 {
		t.Errorf("SciFact BM25 nDCG@10 = %.4f, want >= 0.679 (Anserini BM25 flat)", m.NDCG10)
	}
}

func TestCACMBM25(t *testing.T) {
	// Anserini's 0.3123 was measured with qrels.cacm.txt, whose unpadded
	// ids lose 55 judgments; the padded qrels are the correct evaluation
	// and score higher. Both must clear the anchor.
	for _, c := range []struct {
		name string
		col  collection
	}{{"padded qrels", cacm}, {"anserini qrels", cacmAnserini}} {
		l := load(t, c.col)
		m := measure(t, l, nil, "cacm-bm25-"+strings.ReplaceAll(c.name, " ", "-"))
		t.Logf("cacm default (%s): MAP %.4f nDCG@10 %.4f R@100 %.4f (%d queries)", c.name, m.MAP, m.NDCG10, m.Recall100, m.Queries)
		if m.Queries != 52 {
			t.Errorf("%s: judged queries = %d, want 52", c.name, m.Queries)
		}
		if m.MAP < 0.3123 {
			t.Errorf("%s: CACM BM25 MAP = %.4f, want >= 0.3123 (Anserini BM25)", c.name, m.MAP)
		}
	}
}

func TestJSQuADBM25(t *testing.T) {
	l := load(t, jsquad)
	m := measure(t, l, nil, "jsquad-bm25")
	t.Logf("jsquad default: nDCG@10 %.4f MAP %.4f R@100 %.4f (%d queries)", m.NDCG10, m.MAP, m.Recall100, m.Queries)
	if m.Queries != 4442 {
		t.Errorf("judged queries = %d, want 4442", m.Queries)
	}
	if m.NDCG10 < 0.94 {
		t.Errorf("JSQuAD BM25 nDCG@10 = %.4f, want >= 0.94", m.NDCG10)
	}
}

// TestSweep logs the evaluation table behind the defaults; run it with
// go test ./search/eval -run Sweep -eval.sweep -v.
func TestSweep(t *testing.T) {
	if !*sweep {
		t.Skip("run with -eval.sweep to evaluate all settings")
	}
	params := []memory.BM25{{K1: 1.2, B: 0.75}, {K1: 0.9, B: 0.4}, {K1: 1.2, B: 0.4}, {K1: 1.5, B: 0.75}, {K1: 0.9, B: 0.75}}
	english := []struct {
		name string
		opts token.Options
	}{
		{"plain", token.Options{DisableStemming: true, KeepStopwords: true}},
		{"stop", token.Options{DisableStemming: true}},
		{"stem", token.Options{KeepStopwords: true}},
		{"stem+stop", token.Options{}},
	}
	for _, c := range []struct {
		name string
		col  collection
	}{{"scifact", scifact}, {"cacm", cacm}, {"cacm(anserini qrels)", cacmAnserini}} {
		l := load(t, c.col)
		for _, en := range english {
			for _, p := range params {
				tok := token.New(&en.opts)
				m := measure(t, l, &memory.Options{BM25: &p, Tokenizer: tok}, "")
				t.Logf("| %s | %s | k1=%.1f b=%.2f | %.4f | %.4f | %.4f |", c.name, en.name, p.K1, p.B, m.NDCG10, m.MAP, m.Recall100)
			}
		}
	}
	l := load(t, jsquad)
	for _, jm := range []token.JapaneseMode{token.JapaneseBigram, token.JapaneseKagome, token.JapaneseKagomeBigram} {
		for _, p := range params {
			tok := token.New(&token.Options{Japanese: jm})
			start := time.Now()
			m := measure(t, l, &memory.Options{BM25: &p, Tokenizer: tok}, "")
			t.Logf("| jsquad | %s | k1=%.1f b=%.2f | %.4f | %.4f | %.4f | %v", jm, p.K1, p.B, m.NDCG10, m.MAP, m.Recall100, time.Since(start).Round(time.Millisecond))
		}
	}
}
