package eval

import (
	"math"
	"slices"
)

// Metrics are averages over the judged queries (queries in the qrels with
// at least one relevant document); a judged query missing from the run
// scores 0, as with trec_eval -c.
type Metrics struct {
	NDCG10    float64
	MAP       float64
	Recall100 float64
	Queries   int
}

// Evaluate scores run against qrels. Documents are ranked in trec_eval order
// (score descending, ties by document id descending); MAP is cut at 1000.
// nDCG uses the grade as linear gain and log2(rank+1) discount; the ideal
// ranking is built from all judged relevant documents.
func Evaluate(run Run, qrels Qrels) Metrics {
	var m Metrics
	for qid, judged := range qrels {
		nrel := 0
		for _, g := range judged {
			if g > 0 {
				nrel++
			}
		}
		if nrel == 0 {
			continue
		}
		m.Queries++
		q := evaluateQuery(sorted(run[qid]), judged, nrel)
		m.NDCG10 += q.NDCG10
		m.MAP += q.MAP
		m.Recall100 += q.Recall100
	}
	if m.Queries > 0 {
		n := float64(m.Queries)
		m.NDCG10 /= n
		m.MAP /= n
		m.Recall100 /= n
	}
	return m
}

func evaluateQuery(ranked []Ranked, judged map[string]int, nrel int) Metrics {
	var m Metrics
	var dcg float64
	hits := 0
	for i, r := range ranked {
		if i >= 1000 {
			break
		}
		g := judged[r.DocID]
		if i < 10 && g > 0 {
			dcg += float64(g) / math.Log2(float64(i+2))
		}
		if g > 0 {
			hits++
			m.MAP += float64(hits) / float64(i+1)
			if i < 100 {
				m.Recall100++
			}
		}
	}
	m.MAP /= float64(nrel)
	m.Recall100 /= float64(nrel)
	var gains []int
	for _, g := range judged {
		if g > 0 {
			gains = append(gains, g)
		}
	}
	// Ideal order: grades descending.
	slices.Sort(gains)
	slices.Reverse(gains)
	var idcg float64
	for i, g := range gains {
		if i >= 10 {
			break
		}
		idcg += float64(g) / math.Log2(float64(i+2))
	}
	if idcg > 0 {
		m.NDCG10 = dcg / idcg
	}
	return m
}
