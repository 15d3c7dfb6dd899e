package eval

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentcraftlab/agentcraft/search"
)

var approx = cmpopts.EquateApprox(0, 1e-9)

func TestEvaluateHandComputed(t *testing.T) {
	qrels := Qrels{
		// q1: two relevant documents, graded 2 and 1, one judged non-relevant.
		"q1": {"a": 2, "b": 1, "n": 0},
		// q2: one relevant document the run never retrieves.
		"q2": {"z": 1},
		// q3: only non-relevant judgments: not a judged query.
		"q3": {"n": 0},
	}
	run := Run{
		// Ranked b, n, a (scores descending).
		"q1": {{"a", 1}, {"b", 3}, {"n", 2}},
		"q2": {{"a", 1}},
	}
	// q1 nDCG@10: DCG = 1/log2(2) + 2/log2(4) = 2; IDCG = 2/1 + 1/log2(3).
	ndcg1 := 2 / (2 + 1/math.Log2(3))
	// q1 AP: relevant at ranks 1 and 3 → (1/1 + 2/3)/2.
	ap1 := (1 + 2.0/3) / 2
	want := Metrics{NDCG10: ndcg1 / 2, MAP: ap1 / 2, Recall100: 1.0 / 2, Queries: 2}
	if diff := cmp.Diff(want, Evaluate(run, qrels), approx); diff != "" {
		t.Errorf("Evaluate mismatch (-want +got):\n%s", diff)
	}
}

func TestEvaluateCutoffsAndTies(t *testing.T) {
	qrels := Qrels{"q": {"rel": 1}}
	// The relevant document at rank 11: no nDCG@10 gain, AP 1/11, R@100 1.
	var rs []Ranked
	for i := range 10 {
		rs = append(rs, Ranked{DocID: string(rune('a' + i)), Score: float64(100 - i)})
	}
	rs = append(rs, Ranked{DocID: "rel", Score: 1})
	got := Evaluate(Run{"q": rs}, qrels)
	want := Metrics{NDCG10: 0, MAP: 1.0 / 11, Recall100: 1, Queries: 1}
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("rank 11 (-want +got):\n%s", diff)
	}
	// Equal scores rank by document id descending, as trec_eval does:
	// "rel" > "aaa", so rel comes first.
	got = Evaluate(Run{"q": {{"aaa", 1}, {"rel", 1}}}, qrels)
	if got.NDCG10 != 1 || got.MAP != 1 {
		t.Errorf("tie: %+v, want nDCG@10 = MAP = 1", got)
	}
	// Beyond rank 1000 nothing counts for MAP.
	rs = nil
	for i := range 1000 {
		rs = append(rs, Ranked{DocID: "x" + string(rune(i)), Score: float64(2000 - i)})
	}
	rs = append(rs, Ranked{DocID: "rel", Score: 0})
	if got := Evaluate(Run{"q": rs}, qrels); got.MAP != 0 || got.Recall100 != 0 {
		t.Errorf("rank 1001: %+v, want MAP = R@100 = 0", got)
	}
}

func TestReaders(t *testing.T) {
	docs, err := ReadCorpus(strings.NewReader(`{"_id":"1","title":"T","text":"body"}`+"\n\n"+`{"_id":"2","text":"x"}`+"\n"), "kb")
	if err != nil {
		t.Fatal(err)
	}
	wantDocs := []search.Document{{ID: "1", Index: "kb", Title: "T", Text: "body"}, {ID: "2", Index: "kb", Text: "x"}}
	if diff := cmp.Diff(wantDocs, docs); diff != "" {
		t.Errorf("ReadCorpus (-want +got):\n%s", diff)
	}
	if _, err := ReadCorpus(strings.NewReader(`{"title":"no id"}`), "kb"); err == nil {
		t.Error("ReadCorpus accepted a record without _id")
	}

	topics, err := ReadQueries(strings.NewReader("1\tfirst query\r\n2\tsecond\twith tab\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Topic{{"1", "first query"}, {"2", "second\twith tab"}}, topics); diff != "" {
		t.Errorf("ReadQueries (-want +got):\n%s", diff)
	}
	if _, err := ReadQueries(strings.NewReader("no tab here\n")); err == nil {
		t.Error("ReadQueries accepted a line without a tab")
	}

	qrels, err := ReadQrels(strings.NewReader("1 0 d1 1\n1\tQ0\td2\t2\n\n2 Q0 d3 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Qrels{"1": {"d1": 1, "d2": 2}, "2": {"d3": 0}}, qrels); diff != "" {
		t.Errorf("ReadQrels (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"1 0 d1\n", "1 0 d1 x\n"} {
		if _, err := ReadQrels(strings.NewReader(bad)); err == nil {
			t.Errorf("ReadQrels(%q) returned no error", bad)
		}
	}
}

func TestWriteTREC(t *testing.T) {
	var buf bytes.Buffer
	run := Run{"2": {{"b", 1}, {"a", 1}, {"c", 3}}, "1": {{"x", 0.5}}}
	if err := WriteTREC(&buf, run, "tag"); err != nil {
		t.Fatal(err)
	}
	want := "1 Q0 x 1 0.500000 tag\n2 Q0 c 1 3.000000 tag\n2 Q0 b 2 1.000000 tag\n2 Q0 a 3 1.000000 tag\n"
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("WriteTREC (-want +got):\n%s", diff)
	}
}

func FuzzReadQrels(f *testing.F) {
	f.Add("1 0 d1 1\n2 Q0 d2 0\n")
	f.Add("\xff\xfe 0 d 1")
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ReadQrels(strings.NewReader(s))
		if err == nil && q == nil {
			t.Fatal("nil qrels without error")
		}
		_, _ = ReadQueries(strings.NewReader(s))
		_, _ = ReadCorpus(strings.NewReader(s), "x")
	})
}
