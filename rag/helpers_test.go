package rag_test

import (
	"bytes"
	"context"
	"encoding/json"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/chunk"
	"github.com/agentcraftlab/agentcraft/search/memory"
)

// memSearcher adapts search/memory to rag.Searcher the way package kb does:
// one index per base, the "kb" metadata key on hits of multi-base searches.
// It records every call.
type memSearcher struct {
	eng *memory.Engine

	mu    sync.Mutex // guards calls
	calls []searchCall
}

type searchCall struct {
	workspace string
	kbs       []string
	q         search.Query
}

func (m *memSearcher) Search(ctx context.Context, workspaceID string, kbs []string, q search.Query) (search.Result, error) {
	m.mu.Lock()
	m.calls = append(m.calls, searchCall{workspaceID, slices.Clone(kbs), q})
	m.mu.Unlock()
	q.Indexes = kbs
	res, err := m.eng.Search(ctx, q)
	if err != nil || len(kbs) < 2 {
		return res, err
	}
	for i := range res.Hits {
		md := maps.Clone(res.Hits[i].Metadata)
		md["kb"] = res.Hits[i].Index
		res.Hits[i].Metadata = md
	}
	return res, nil
}

func (m *memSearcher) Calls() []searchCall {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.calls)
}

// newSearcher indexes the chunks, each in the base named by its key.
func newSearcher(t testing.TB, docs map[string][]chunk.Chunk) *memSearcher {
	t.Helper()
	eng, err := memory.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for kb, cs := range docs {
		for i, c := range cs {
			c.Index = i
			c.End = c.Start + len(c.Text)
			if err := eng.Index(context.Background(), c.Document(kb)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return &memSearcher{eng: eng}
}

// library is the knowledge the tests search.
func library(t testing.TB) *memSearcher {
	return newSearcher(t, map[string][]chunk.Chunk{
		"handbook": {
			{Source: "handbook.pdf", Page: 3, Heading: "Refunds", Start: 100, Text: "Refunds are paid within 14 days of the return."},
			{Source: "handbook.pdf", Page: 7, Heading: "Shipping", Start: 900, Text: "Orders ship within two business days."},
		},
		"uploads": {
			{Source: "notes.txt", Text: "The refund desk is open Monday to Friday."},
		},
	})
}

// errSearcher fails every search; block makes it wait for the context.
type errSearcher struct {
	err   error
	block bool
	res   search.Result // answered when err is nil and block is false
}

func (s errSearcher) Search(ctx context.Context, _ string, _ []string, _ search.Query) (search.Result, error) {
	if s.block {
		<-ctx.Done()
		return search.Result{}, ctx.Err()
	}
	return s.res, s.err
}

// fakeModel records requests and answers "ok" (streamed as two pieces).
type fakeModel struct {
	mu   sync.Mutex // guards reqs
	reqs []llm.Request
}

func (f *fakeModel) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	return llm.Collect(f.Stream(ctx, req))
}

func (f *fakeModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		f.mu.Lock()
		f.reqs = append(f.reqs, req)
		f.mu.Unlock()
		if err := ctx.Err(); err != nil {
			yield(llm.Event{}, err)
			return
		}
		for _, ev := range []llm.Event{
			{Type: llm.EventTextDelta, Text: "o"},
			{Type: llm.EventTextDelta, Text: "k"},
			{Type: llm.EventFinish, FinishReason: llm.FinishStop},
		} {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

func (f *fakeModel) requests() []llm.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

// only returns the one request the model received.
func (f *fakeModel) only(t *testing.T) llm.Request {
	t.Helper()
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("model got %d requests, want 1", len(reqs))
	}
	return reqs[0]
}

// logBuffer collects JSON log records.
type logBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// records returns the decoded records.
func (l *logBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(l.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func ask(q string) llm.Request {
	return llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleSystem, "You are helpful."), llm.Text(llm.RoleUser, q)}}
}
