package nodes_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/workflowtest"
)

// fakeKnowledge answers every search with res (or err) and records the
// calls.
type fakeKnowledge struct {
	res search.Result
	err error

	mu    sync.Mutex // guards calls
	calls []knowledgeCall
}

type knowledgeCall struct {
	Workspace string
	KBs       []string
	Query     search.Query
}

func (f *fakeKnowledge) Search(_ context.Context, workspaceID string, kbs []string, q search.Query) (search.Result, error) {
	f.mu.Lock()
	f.calls = append(f.calls, knowledgeCall{workspaceID, slices.Clone(kbs), q})
	f.mu.Unlock()
	return f.res, f.err
}

var handbookHits = search.Result{Mode: search.ModeFulltext, Hits: []search.Hit{
	{ID: "handbook.pdf#4", Index: "ws1_kb_h", Score: 2.5, Text: "Refunds are paid within 14 days.",
		Metadata: map[string]string{"source": "handbook.pdf", "page": "3", "heading": "Refunds", "start": "100", "end": "132", "chunk": "4"}},
	{ID: "faq.md#0", Index: "ws1_kb_f", Score: 1.25, Text: "Ask the\nrefund desk [2].",
		Metadata: map[string]string{"source": "faq.md", "start": "0", "end": "24", "kb": "faq"}},
}}

// ragFlow is start → rag (config) → code (template) → end, or start →
// rag → end when template is empty.
func ragFlow(config, template string) string {
	if template == "" {
		return `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"docs","type":"rag","config":` + config + `},{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"docs"},{"id":"e2","source":"docs","target":"end"}]}`
	}
	return `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"docs","type":"rag","config":` + config + `},
	{"id":"use","type":"code","config":{"mode":"template","template":` + template + `}},{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"docs"},{"id":"e2","source":"docs","target":"use"},{"id":"e3","source":"use","target":"end"}]}`
}

func TestRAGNode(t *testing.T) {
	wantPassages := []any{
		map[string]any{"n": 1.0, "kb": "handbook", "source": "handbook.pdf", "page": 3.0, "heading": "Refunds", "start": 100.0, "end": 132.0, "score": 2.5, "text": "Refunds are paid within 14 days."},
		map[string]any{"n": 2.0, "kb": "faq", "source": "faq.md", "start": 0.0, "end": 24.0, "score": 1.25, "text": "Ask the\nrefund desk [2]."},
	}
	wantContext := "[1] handbook.pdf, p. 3, § Refunds — Refunds are paid within 14 days.\n[2] faq.md — Ask the refund desk (2)."
	tests := []struct {
		name      string
		svc       *fakeKnowledge // nil: no Knowledge service
		config    string
		template  string
		input     any
		status    string
		output    any
		wantError string
		wantCall  *knowledgeCall
	}{
		{
			name: "defaults", svc: &fakeKnowledge{res: handbookHits},
			config: `{"knowledge_base":"handbook"}`, template: "", input: "How fast are refunds paid?",
			status:   workflow.StatusSucceeded,
			output:   map[string]any{"query": "How fast are refunds paid?", "passages": wantPassages, "context": wantContext},
			wantCall: &knowledgeCall{"ws1", []string{"handbook"}, search.Query{Text: "How fast are refunds paid?", TopK: 5}},
		},
		{
			name: "list, query template, top_k and mode", svc: &fakeKnowledge{res: handbookHits},
			config:   `{"knowledge_base":["handbook","faq"],"query":"refunds for {{input.product}}","top_k":2,"mode":"hybrid"}`,
			template: `"Sources:\n{{nodes.docs.output.context}}"`, input: map[string]any{"product": "kettles"},
			status: workflow.StatusSucceeded, output: "Sources:\n" + wantContext,
			wantCall: &knowledgeCall{"ws1", []string{"handbook", "faq"}, search.Query{Text: "refunds for kettles", Mode: search.ModeHybrid, TopK: 2}},
		},
		{
			name: "context bounded by max_context_chars", svc: &fakeKnowledge{res: handbookHits},
			config: `{"knowledge_base":"handbook","max_context_chars":80}`, template: `"{{nodes.docs.output.context}}|{{nodes.docs.output.passages[1].source}}"`, input: "refunds",
			status: workflow.StatusSucceeded, output: "[1] handbook.pdf, p. 3, § Refunds — Refunds are paid within 14 days.|faq.md",
		},
		{
			name: "nothing found", svc: &fakeKnowledge{},
			config: `{"knowledge_base":"handbook"}`, template: "", input: "zebra",
			status: workflow.StatusSucceeded, output: map[string]any{"query": "zebra", "passages": []any{}, "context": ""},
		},
		{
			name: "degraded search keeps the note", svc: &fakeKnowledge{res: search.Result{Mode: search.ModeFulltext, Note: "embedder unavailable: fulltext results only"}},
			config: `{"knowledge_base":"handbook","mode":"hybrid"}`, template: `"{{nodes.docs.output.note}}"`, input: "refunds",
			status: workflow.StatusSucceeded, output: "embedder unavailable: fulltext results only",
		},
		{
			name: "no knowledge service", config: `{"knowledge_base":"handbook"}`, template: `"x"`, input: "refunds",
			status: workflow.StatusFailed, wantError: `node "docs" (rag): rag nodes need a knowledge search service (workflow.Services.Knowledge)`,
		},
		{
			name: "search fails the node", svc: &fakeKnowledge{err: errors.New("kb: unknown knowledge base \"handbok\"")},
			config: `{"knowledge_base":"handbok"}`, template: `"x"`, input: "refunds",
			status: workflow.StatusFailed, wantError: `node "docs" (rag): search handbok: kb: unknown knowledge base "handbok"`,
		},
		{
			name: "empty query", svc: &fakeKnowledge{res: handbookHits},
			config: `{"knowledge_base":"handbook"}`, template: `"x"`, input: "  ",
			status: workflow.StatusFailed, wantError: "config.query: the query is empty",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var svc workflow.Services
			if tt.svc != nil {
				svc.Knowledge = tt.svc
			}
			e := workflowtest.Engine(t, svc)
			p := workflowtest.Parse(t, e, ragFlow(tt.config, tt.template))
			out := e.Run(t.Context(), p, workflow.Request{RunID: "r1", WorkspaceID: "ws1", Input: tt.input})
			if out.Status != tt.status {
				t.Fatalf("status = %s (%s), want %s", out.Status, out.Error, tt.status)
			}
			if tt.wantError != "" && !strings.Contains(out.Error, tt.wantError) {
				t.Errorf("error = %q, want it to contain %q", out.Error, tt.wantError)
			}
			if tt.status == workflow.StatusSucceeded {
				if diff := cmp.Diff(tt.output, out.Output); diff != "" {
					t.Errorf("output (-want +got):\n%s", diff)
				}
			}
			if tt.wantCall != nil {
				if diff := cmp.Diff([]knowledgeCall{*tt.wantCall}, tt.svc.calls); diff != "" {
					t.Errorf("search calls (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestRAGNodeValidation(t *testing.T) {
	tests := []struct {
		name, config, path, message string
	}{
		{"missing base", `{}`, "nodes[1].config.knowledge_base", `missing required any "knowledge_base"`},
		{"empty name", `{"knowledge_base":" "}`, "nodes[1].config.knowledge_base", "knowledge_base is empty"},
		{"number", `{"knowledge_base":3}`, "nodes[1].config.knowledge_base", "want a string or a list of strings, got a number"},
		{"empty list", `{"knowledge_base":[]}`, "nodes[1].config.knowledge_base", "knowledge_base is an empty list"},
		{"list with a number", `{"knowledge_base":["a",2]}`, "nodes[1].config.knowledge_base", "knowledge_base[1] is not a knowledge base name"},
		{"top_k above the maximum", `{"knowledge_base":"a","top_k":51}`, "nodes[1].config.top_k", "51 is above the maximum 50"},
		{"unknown mode", `{"knowledge_base":"a","mode":"semantic"}`, "nodes[1].config.mode", `"semantic" is not one of the accepted values`},
	}
	e := workflowtest.Engine(t, workflow.Services{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def, err := workflow.Parse([]byte(ragFlow(tt.config, `"x"`)))
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Prepare(def)
			var ie *workflow.InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("Prepare = %v, want an *InvalidError", err)
			}
			for _, p := range ie.Problems {
				if p.Path == tt.path && strings.Contains(p.Message, tt.message) {
					return
				}
			}
			t.Errorf("problems = %+v, want %s: %s", ie.Problems, tt.path, tt.message)
		})
	}
}
