package memory_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/memory"
	"github.com/agentcraftlab/agentcraft/run"
	searchsqlite "github.com/agentcraftlab/agentcraft/search/sqlite"
	"github.com/agentcraftlab/agentcraft/store"
)

var benchWords = []string{"harbour", "invoice", "kyoto", "meeting", "passport", "budget", "tea", "deadline", "customer",
	"server", "release", "holiday", "printer", "contract", "train", "lunch", "report", "design", "ticket", "garden"}

func sentence(r *rand.Rand, n int) string {
	s := ""
	for i := range n {
		if i > 0 {
			s += " "
		}
		s += benchWords[r.IntN(len(benchWords))] + fmt.Sprint(r.IntN(50))
	}
	return s
}

// BenchmarkRecall recalls from 10,000 memories on search/sqlite: half
// workspace-visible, half personal over 50 owners. It reports the p50 and
// p99 latency of one Recall.
func BenchmarkRecall(b *testing.B) {
	ctx := context.Background()
	st := openStore(b)
	ws := workspace(b, st, "bench")
	eng, err := searchsqlite.Open(ctx, filepath.Join(b.TempDir(), "search.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { eng.Close() })
	m, err := memory.NewMemories(st, eng, nil)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	const n = 10_000
	for i := range n {
		p := key(ws, fmt.Sprintf("k%d", i%50))
		note := memory.Note{Text: sentence(r, 12)}
		if i%2 == 0 {
			note.Scope = store.MemoryWorkspace
		}
		if _, err := m.Remember(ctx, p, note, nil); err != nil {
			b.Fatal(err)
		}
	}
	p := key(ws, "k7")
	queries := make([]string, 64)
	for i := range queries {
		queries[i] = sentence(r, 3)
	}
	var lat []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		t0 := time.Now()
		if _, err := m.Recall(ctx, p, queries[i%len(queries)], memory.RecallOptions{}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkHistory is the seam's Begin on a 200-message conversation that
// fits its budget (no compaction): what every continued chat pays before
// the model is called.
func BenchmarkHistory(b *testing.B) {
	ctx := context.Background()
	st := openStore(b)
	ws := workspace(b, st, "bench")
	convs := memory.NewConversations(st, nil)
	p := key(ws, "k1")
	cv, err := convs.Create(ctx, p, memory.NewConversation{})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	var msgs []llm.Message
	for i := range 200 {
		role := llm.RoleUser
		if i%2 == 1 {
			role = llm.RoleAssistant
		}
		msgs = append(msgs, llm.Text(role, sentence(r, 20)))
	}
	if err := convs.Finish(ctx, p, cv.ID, msgs); err != nil {
		b.Fatal(err)
	}
	in := []llm.Message{llm.Text(llm.RoleUser, "and now?")}
	h := run.History{BudgetTokens: 1 << 20}
	b.ReportAllocs()
	for b.Loop() {
		send, _, err := convs.Begin(ctx, p, cv.ID, in, h)
		if err != nil || len(send) != 201 {
			b.Fatalf("Begin = %d messages, %v", len(send), err)
		}
	}
}
