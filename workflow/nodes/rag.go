package nodes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/agentcraftlab/agentcraft/rag"
	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// maxRAGTopK bounds a rag node's top_k.
const maxRAGTopK = 50

// ragKind retrieves passages from knowledge bases for the nodes after it.
func ragKind() workflow.Kind {
	return workflow.Kind{
		Type:     "rag",
		Title:    "Knowledge search",
		Category: workflow.CategoryData,
		Rules:    []string{"knowledge_base is a name or a non-empty list of names", fmt.Sprintf("top_k is at most %d", maxRAGTopK)},
		Example:  map[string]any{"knowledge_base": "handbook"},
		Doc: "Retrieves passages from knowledge bases. Output: {query, passages: [{n, text, source, page, heading, kb, score, start, end}], " +
			"context: the passages as a numbered list ready for a prompt ([1] handbook.pdf, p. 3 — …), note: set when the search was degraded}.",
		Execute:      execRAG,
		IsExecutable: true,
		IsDataNode:   true,
		Config: []workflow.ConfigKey{
			{Name: "knowledge_base", Type: workflow.TypeAny, Required: true, Doc: "name or id of the knowledge base to search, or a list of them"},
			{Name: "query", Type: workflow.TypeTemplate, Default: "{{input}}", Doc: "search query"},
			{Name: "top_k", Type: workflow.TypeInteger, Min: atLeast(1), Default: rag.DefaultTopK, Doc: fmt.Sprintf("passages returned, at most %d", maxRAGTopK)},
			{Name: "mode", Type: workflow.TypeString, Enum: []string{"auto", "fulltext", "vector", "hybrid"}, Default: "auto",
				Doc: "search mode: auto is hybrid when the bases have embeddings, else fulltext"},
			{Name: "max_context_chars", Type: workflow.TypeInteger, Min: atLeast(1), Default: rag.DefaultMaxContextChars,
				Doc: "bound of the context text in characters; passages past it stay in passages only"},
		},
		Check: checkRAG,
	}
}

// checkRAG checks what the key types cannot: knowledge_base is a non-empty
// name or a non-empty list of them, and top_k is not above the maximum.
func checkRAG(cfg map[string]any, at string) []workflow.Problem {
	var probs []workflow.Problem
	if _, err := ragBases(cfg["knowledge_base"]); err != nil {
		probs = append(probs, workflow.Problem{Path: at + ".knowledge_base", Message: err.Error(),
			Hint: `set "knowledge_base" to a knowledge base's name, such as "handbook", or a list such as ["handbook", "faq"]`})
	}
	if k, ok := cfg["top_k"].(float64); ok && k > maxRAGTopK {
		probs = append(probs, workflow.Problem{Path: at + ".top_k", Message: fmt.Sprintf("%v is above the maximum %d", k, maxRAGTopK),
			Hint: fmt.Sprintf("set \"top_k\" to at most %d", maxRAGTopK)})
	}
	return probs
}

// ragBases reads knowledge_base: a name or a list of names.
func ragBases(v any) ([]string, error) {
	switch v := v.(type) {
	case string:
		if strings.TrimSpace(v) == "" {
			return nil, errors.New("knowledge_base is empty")
		}
		return []string{v}, nil
	case []any:
		if len(v) == 0 {
			return nil, errors.New("knowledge_base is an empty list")
		}
		out := make([]string, 0, len(v))
		for i, e := range v {
			s, ok := e.(string)
			if !ok || strings.TrimSpace(s) == "" {
				return nil, fmt.Errorf("knowledge_base[%d] is not a knowledge base name", i)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("want a string or a list of strings, got %s", describeValue(v))
}

func describeValue(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// ragOutput is a rag node's output.
type ragOutput struct {
	Query string `json:"query"`
	// Passages are every hit, best first, numbered from 1.
	Passages []rag.Citation `json:"passages"`
	// Context is the numbered list of the passages that fit
	// max_context_chars, one per line (see rag.Sources).
	Context string `json:"context"`
	// Note explains a degraded search, such as a hybrid query answered by
	// full text only.
	Note string `json:"note,omitempty"`
}

// execRAG searches the workspace's knowledge bases for the rendered query.
// A search that fails fails the node: unlike chat, a workflow that asked
// for retrieval should not go on silently without it. Finding nothing is
// not a failure: passages is empty and context "".
func execRAG(ctx context.Context, x *workflow.Exec) (workflow.Result, error) {
	if x.Services.Knowledge == nil {
		return workflow.Result{}, errors.New("rag nodes need a knowledge search service (workflow.Services.Knowledge), and none is configured: create knowledge bases and start the server with them enabled")
	}
	cfg := x.Node.Config
	kbs, err := ragBases(cfg["knowledge_base"])
	if err != nil {
		return workflow.Result{}, fmt.Errorf("config.knowledge_base: %w", err)
	}
	v, err := x.ConfigTemplate("query", "{{input}}")
	if err != nil {
		return workflow.Result{}, err
	}
	q, err := textOf(v)
	if err != nil {
		return workflow.Result{}, fmt.Errorf("config.query: %w", err)
	}
	q = strings.TrimSpace(q)
	if q == "" {
		return workflow.Result{}, errors.New("config.query: the query is empty: give the node an input or set query to the words to search for")
	}
	mode := search.Mode(strOr(cfg["mode"], ""))
	if mode == "auto" {
		mode = search.ModeAuto
	}
	topK := min(intOr(cfg["top_k"], rag.DefaultTopK), maxRAGTopK)
	res, err := x.Services.Knowledge.Search(ctx, x.WorkspaceID, kbs, search.Query{Text: q, Mode: mode, TopK: topK})
	if err != nil {
		return workflow.Result{}, fmt.Errorf("search %s: %w", strings.Join(kbs, ", "), err)
	}
	if res.Note != "" && x.Services.Logger != nil {
		x.Services.Logger.LogAttrs(ctx, slog.LevelInfo, "rag search degraded",
			slog.String("run_id", x.RunID), slog.String("node_id", x.Node.ID), slog.String("note", res.Note))
	}
	text, _ := rag.Sources(res, kbs, intOr(cfg["max_context_chars"], rag.DefaultMaxContextChars))
	out := ragOutput{Query: q, Passages: rag.Cite(res.Hits, kbs), Context: text, Note: res.Note}
	native, err := jsonNative(out)
	if err != nil {
		return workflow.Result{}, err
	}
	return workflow.Result{Output: native}, nil
}

func strOr(v any, def string) string {
	if s, ok := v.(string); ok {
		return s
	}
	return def
}
