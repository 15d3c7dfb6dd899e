package rag

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/tool"
)

// maxToolTopK bounds kb_search's top_k.
const maxToolTopK = 20

// SearchTool returns the kb_search tool: it lets a model search the
// workspace's knowledge bases kbs itself, when it decides what to look up,
// instead of (or besides) the automatic retrieval of Model. Bases the
// call's context adds with WithKnowledgeBases are allowed too; any other
// base is refused. Each call answers with the numbered passages, their
// source, page and score.
func SearchTool(s Searcher, workspaceID string, kbs []string) tool.Tool {
	return &searchTool{s: s, ws: workspaceID, kbs: merge(nil, kbs)}
}

type searchTool struct {
	s   Searcher
	ws  string
	kbs []string
}

var _ tool.Tool = (*searchTool)(nil)

// Name implements tool.Tool.
func (*searchTool) Name() string { return "kb_search" }

// Description implements tool.Tool.
func (t *searchTool) Description() string {
	d := "Search the knowledge bases for passages about a question. Returns numbered passages with their source document, page and relevance score; cite what you use by source and page."
	if len(t.kbs) > 0 {
		d += " Knowledge bases: " + strings.Join(t.kbs, ", ") + "."
	}
	return d
}

// Schema implements tool.Tool.
func (t *searchTool) Schema() json.RawMessage {
	kb := map[string]any{"type": "string", "description": "search only this knowledge base; default: all of them"}
	if len(t.kbs) > 0 {
		kb["enum"] = t.kbs
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query":          map[string]any{"type": "string", "description": "what to look for, in words likely to appear in the documents"},
			"knowledge_base": kb,
			"top_k":          map[string]any{"type": "integer", "minimum": 1, "maximum": maxToolTopK, "description": "number of passages; default " + strconv.Itoa(DefaultTopK)},
		},
		"required":             []string{"query"},
		"additionalProperties": false,
	}
	b, err := json.Marshal(schema)
	if err != nil {
		panic(err) // cannot happen: maps of strings and numbers
	}
	return b
}

// Capability implements tool.Tool: it reads documents outside the chat.
func (*searchTool) Capability() tool.Capability { return tool.CapabilityMedium }

// Call implements tool.Tool. Bad arguments and unknown bases are error
// results; a failing search backend is a Go error.
func (t *searchTool) Call(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	var in struct {
		Query         string `json:"query"`
		KnowledgeBase string `json:"knowledge_base"`
		TopK          *int   `json:"top_k"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return tool.ErrorResult(`arguments must be a JSON object like {"query": "refund policy", "top_k": 5}: %v`, err), nil
	}
	if strings.TrimSpace(in.Query) == "" {
		return tool.ErrorResult(`query is empty: pass the words to search for, such as {"query": "refund policy"}`), nil
	}
	k := DefaultTopK
	if in.TopK != nil {
		if *in.TopK < 1 || *in.TopK > maxToolTopK {
			return tool.ErrorResult("top_k is %d: use a number from 1 to %d", *in.TopK, maxToolTopK), nil
		}
		k = *in.TopK
	}
	allowed := merge(t.kbs, KnowledgeBasesFrom(ctx))
	if len(allowed) == 0 {
		return tool.ErrorResult("no knowledge base is available to search: answer without kb_search"), nil
	}
	kbs := allowed
	if in.KnowledgeBase != "" {
		if !slices.Contains(allowed, in.KnowledgeBase) {
			return tool.ErrorResult("unknown knowledge base %q: use one of %s, or leave knowledge_base out to search them all", in.KnowledgeBase, strings.Join(allowed, ", ")), nil
		}
		kbs = []string{in.KnowledgeBase}
	}
	res, err := t.s.Search(ctx, t.ws, kbs, search.Query{Text: cut(in.Query, maxQueryChars), TopK: k})
	if err != nil {
		return tool.Result{}, fmt.Errorf("kb_search: %w", err)
	}
	if len(res.Hits) == 0 {
		return tool.Result{Content: "No passages found. Try other words, or answer that the knowledge bases do not cover it."}, nil
	}
	cites := Cite(res.Hits, kbs)
	// A front end shows what the answer cites: the collector of the run
	// (WithCollector) keeps this search's passages as it keeps Model's.
	collectorFrom(ctx).set(cites)
	var b strings.Builder
	for i, c := range cites {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[%d] %s (knowledge base %s, score %.3f) — %s", c.N, c.Label(), oneLine(c.KB), c.Score, oneLine(c.Text))
	}
	return tool.Result{Content: b.String()}, nil
}
