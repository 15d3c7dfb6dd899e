// Package eval measures retrieval quality of a search.Engine on test
// collections in the BEIR/TREC formats: a corpus in JSON Lines
// ({"_id","title","text"}), queries as "id<TAB>text" and TREC qrels
// ("qid 0|Q0 docid rel"). It computes nDCG@10, MAP and Recall@100 with
// trec_eval's conventions and writes TREC run files, so numbers can be
// compared with published baselines (Anserini, BEIR).
//
// The collections themselves live outside the repository (see DataDir); the
// tests in this package fail when quality drops below the published anchors.
// go test ./search/eval -run Sweep -eval.sweep -v prints the comparison
// behind the defaults; -eval.runs DIR also writes TREC run files. With the
// defaults (Snowball stemming, Lucene stopwords, kagome+bigram Japanese,
// BM25 k1=1.5 b=0.75, title+text as one field) the in-memory engine scores:
//
//	SciFact test   nDCG@10 0.6896  MAP 0.6505  R@100 0.9216  (Anserini 0.6789)
//	CACM, padded   MAP 0.3336      nDCG@10 0.4787            (Anserini 0.3123,
//	CACM, Anserini MAP 0.3156      nDCG@10 0.4676             its qrels)
//	JSQuAD         nDCG@10 0.9457  MAP 0.9358  R@100 0.9912
package eval

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/agentcraftlab/agentcraft/search"
)

// ReadCorpus reads BEIR corpus.jsonl into documents of the given index.
func ReadCorpus(r io.Reader, index string) ([]search.Document, error) {
	var docs []search.Document
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		var rec struct {
			ID    string `json:"_id"`
			Title string `json:"title"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal(b, &rec); err != nil {
			return nil, fmt.Errorf("eval: corpus line %d: %w", line, err)
		}
		if rec.ID == "" {
			return nil, fmt.Errorf("eval: corpus line %d: missing _id", line)
		}
		docs = append(docs, search.Document{ID: rec.ID, Index: index, Title: rec.Title, Text: rec.Text})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("eval: read corpus: %w", err)
	}
	return docs, nil
}

// Topic is one evaluation query.
type Topic struct {
	ID   string
	Text string
}

// ReadQueries reads "id<TAB>text" lines.
func ReadQueries(r io.Reader) ([]Topic, error) {
	var out []Topic
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(s) == "" {
			continue
		}
		id, text, ok := strings.Cut(s, "\t")
		if !ok || id == "" {
			return nil, fmt.Errorf("eval: queries line %d: want id<TAB>text", line)
		}
		out = append(out, Topic{ID: id, Text: text})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("eval: read queries: %w", err)
	}
	return out, nil
}

// Qrels maps query id → document id → relevance grade.
type Qrels map[string]map[string]int

// ReadQrels reads TREC qrels: "qid iter docid rel", whitespace separated.
func ReadQrels(r io.Reader) (Qrels, error) {
	q := make(Qrels)
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 4 {
			return nil, fmt.Errorf("eval: qrels line %d: want 4 fields (qid iter docid rel), got %d", line, len(f))
		}
		rel, err := strconv.Atoi(f[3])
		if err != nil {
			return nil, fmt.Errorf("eval: qrels line %d: relevance %q: %w", line, f[3], err)
		}
		if q[f[0]] == nil {
			q[f[0]] = make(map[string]int)
		}
		q[f[0]][f[2]] = rel
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("eval: read qrels: %w", err)
	}
	return q, nil
}

// Ranked is one retrieved document of a run.
type Ranked struct {
	DocID string
	Score float64
}

// Run maps query id → retrieved documents.
type Run map[string][]Ranked

// Retrieve searches every topic with q as a template (Text is replaced) and
// returns the run, depth hits per topic.
func Retrieve(ctx context.Context, e search.Engine, topics []Topic, q search.Query, depth int) (Run, error) {
	run := make(Run, len(topics))
	q.TopK = depth
	for _, t := range topics {
		q.Text = t.Text
		res, err := e.Search(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("eval: query %s: %w", t.ID, err)
		}
		rs := make([]Ranked, len(res.Hits))
		for i, h := range res.Hits {
			rs[i] = Ranked{DocID: h.ID, Score: h.Score}
		}
		run[t.ID] = rs
	}
	return run, nil
}

// sorted returns rs in trec_eval order: score descending, ties broken by
// document id descending.
func sorted(rs []Ranked) []Ranked {
	out := slices.Clone(rs)
	slices.SortStableFunc(out, func(a, b Ranked) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(b.DocID, a.DocID)
	})
	return out
}

// WriteTREC writes run in TREC format ("qid Q0 docid rank score tag"),
// queries in id order, documents in trec_eval order.
func WriteTREC(w io.Writer, run Run, tag string) error {
	bw := bufio.NewWriter(w)
	for _, qid := range slices.Sorted(maps.Keys(run)) {
		for i, r := range sorted(run[qid]) {
			fmt.Fprintf(bw, "%s Q0 %s %d %.6f %s\n", qid, r.DocID, i+1, r.Score, tag)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("eval: write run: %w", err)
	}
	return nil
}

// DataDir finds the directory holding scifact/, cacm/ and jsquad-retrieval/:
// $AGENTCRAFT_IR_DATA, else ../shared/data/ir beside the module root, else
// /work/shared/data/ir. It returns "" when none exists.
func DataDir() string {
	var cands []string
	if d := os.Getenv("AGENTCRAFT_IR_DATA"); d != "" {
		cands = append(cands, d)
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				cands = append(cands, filepath.Join(d, "..", "shared", "data", "ir"))
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	cands = append(cands, "/work/shared/data/ir")
	for _, d := range cands {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
	}
	return ""
}
