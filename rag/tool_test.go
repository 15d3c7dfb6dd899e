package rag_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/rag"
	"github.com/agentcraftlab/agentcraft/tool"
)

func TestSearchToolDescribesItself(t *testing.T) {
	st := rag.SearchTool(library(t), "ws1", []string{"handbook", "uploads"})
	var reg tool.Registry
	if err := reg.Register(st); err != nil {
		t.Fatalf("register kb_search: %v", err)
	}
	if st.Name() != "kb_search" || st.Capability() != tool.CapabilityMedium {
		t.Errorf("name %q capability %v, want kb_search medium", st.Name(), st.Capability())
	}
	var schema struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Type    string   `json:"type"`
			Enum    []string `json:"enum"`
			Minimum *int     `json:"minimum"`
			Maximum *int     `json:"maximum"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(st.Schema(), &schema); err != nil {
		t.Fatal(err)
	}
	p := schema.Properties
	if !cmp.Equal(schema.Required, []string{"query"}) || p["query"].Type != "string" ||
		!cmp.Equal(p["knowledge_base"].Enum, []string{"handbook", "uploads"}) ||
		p["top_k"].Type != "integer" || *p["top_k"].Minimum != 1 || *p["top_k"].Maximum != 20 {
		t.Errorf("schema = %s", st.Schema())
	}
}

func TestSearchToolCall(t *testing.T) {
	tests := []struct {
		name    string
		allowed []string
		ctxKBs  []string
		args    string
		wantErr bool // an error Result
		want    []string
		wantKBs []string // bases searched; nil when no search
		wantK   int
	}{
		{
			name: "all allowed bases", allowed: []string{"handbook", "uploads"}, args: `{"query":"refund"}`,
			want:    []string{"[1] ", "(knowledge base ", "score ", "handbook.pdf, p. 3, § Refunds", "notes.txt", "[2] "},
			wantKBs: []string{"handbook", "uploads"}, wantK: rag.DefaultTopK,
		},
		{
			name: "one base and top_k", allowed: []string{"handbook", "uploads"}, args: `{"query":"refund","knowledge_base":"uploads","top_k":1}`,
			want:    []string{"[1] notes.txt (knowledge base uploads, score "},
			wantKBs: []string{"uploads"}, wantK: 1,
		},
		{
			name: "base added by the context", allowed: []string{"handbook"}, ctxKBs: []string{"uploads"}, args: `{"query":"refund desk","knowledge_base":"uploads"}`,
			want: []string{"notes.txt"}, wantKBs: []string{"uploads"}, wantK: rag.DefaultTopK,
		},
		{
			name: "nothing found", allowed: []string{"handbook"}, args: `{"query":"zebra"}`,
			want: []string{"No passages found"}, wantKBs: []string{"handbook"}, wantK: rag.DefaultTopK,
		},
		{name: "empty query", allowed: []string{"handbook"}, args: `{"query":"  "}`, wantErr: true, want: []string{"query is empty"}},
		{name: "missing query", allowed: []string{"handbook"}, args: `{}`, wantErr: true, want: []string{"query is empty"}},
		{name: "not an object", allowed: []string{"handbook"}, args: `"refund"`, wantErr: true, want: []string{"JSON object"}},
		{name: "base not allowed", allowed: []string{"handbook"}, args: `{"query":"refund","knowledge_base":"uploads"}`, wantErr: true,
			want: []string{`unknown knowledge base "uploads"`, "use one of handbook"}},
		{name: "top_k too big", allowed: []string{"handbook"}, args: `{"query":"refund","top_k":21}`, wantErr: true, want: []string{"top_k is 21", "1 to 20"}},
		{name: "top_k zero", allowed: []string{"handbook"}, args: `{"query":"refund","top_k":0}`, wantErr: true, want: []string{"top_k is 0"}},
		{name: "no bases", args: `{"query":"refund"}`, wantErr: true, want: []string{"no knowledge base"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := library(t)
			st := rag.SearchTool(s, "ws1", tt.allowed)
			ctx := rag.WithKnowledgeBases(t.Context(), tt.ctxKBs...)
			res, err := st.Call(ctx, json.RawMessage(tt.args))
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if res.IsError != tt.wantErr {
				t.Errorf("IsError = %v, want %v: %s", res.IsError, tt.wantErr, res.Content)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("content lacks %q:\n%s", w, res.Content)
				}
			}
			calls := s.Calls()
			if tt.wantKBs == nil {
				if len(calls) != 0 {
					t.Errorf("searched %+v, want no search", calls)
				}
				return
			}
			if len(calls) != 1 || calls[0].workspace != "ws1" || !cmp.Equal(calls[0].kbs, tt.wantKBs) || calls[0].q.TopK != tt.wantK {
				t.Errorf("search calls = %+v, want one over %v with top_k %d", calls, tt.wantKBs, tt.wantK)
			}
		})
	}
}

func TestSearchToolBackendFailureIsGoError(t *testing.T) {
	st := rag.SearchTool(errSearcher{err: errors.New("index unavailable")}, "ws1", []string{"handbook"})
	_, err := st.Call(t.Context(), json.RawMessage(`{"query":"refund"}`))
	if err == nil || !strings.Contains(err.Error(), "index unavailable") {
		t.Errorf("Call error = %v, want the backend's failure", err)
	}
}

// TestSearchToolCollectsCitations: a kb_search call that finds passages
// leaves them in the run's collector, numbered as the tool result numbers
// them, so a surface can show what the answer cites; a call that finds
// nothing leaves the collector as it was.
func TestSearchToolCollectsCitations(t *testing.T) {
	st := rag.SearchTool(library(t), "ws1", []string{"handbook", "uploads"})
	ctx, col := rag.WithCollector(t.Context())
	res, err := st.Call(ctx, json.RawMessage(`{"query":"refund"}`))
	if err != nil || res.IsError {
		t.Fatalf("Call = %v, %v", res, err)
	}
	cites := col.Citations()
	if len(cites) == 0 {
		t.Fatal("the collector holds no citations after a search that found passages")
	}
	for _, c := range cites {
		if !strings.Contains(res.Content, "["+strconv.Itoa(c.N)+"] "+c.Label()) || c.Text == "" {
			t.Errorf("citation %+v is not the tool result's [%d]:\n%s", c, c.N, res.Content)
		}
	}
	if _, err := st.Call(ctx, json.RawMessage(`{"query":"zebra"}`)); err != nil {
		t.Fatal(err)
	}
	if got := col.Citations(); len(got) != len(cites) {
		t.Errorf("a search that found nothing changed the citations to %+v", got)
	}
}
