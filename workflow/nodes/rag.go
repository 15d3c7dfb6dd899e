package nodes

import "github.com/agentcraftlab/agentcraft/workflow"

// rag retrieves passages from a knowledge base. Its executor comes with the
// RAG issue; until then it is registered so validation names it precisely.
func rag() workflow.Kind {
	return workflow.Kind{
		Type:        "rag",
		Doc:         "Retrieves passages from a knowledge base for the nodes after it.",
		IsDataNode:  true,
		Unavailable: "retrieval nodes arrive with the knowledge-base (RAG) work",
		Config: []workflow.ConfigKey{
			{Name: "knowledge_base", Type: workflow.TypeString, Required: true, Doc: "name of the knowledge base"},
			{Name: "query", Type: workflow.TypeTemplate, Default: "{{input}}", Doc: "search query"},
			{Name: "top_k", Type: workflow.TypeInteger, Min: atLeast(1), Default: 5, Doc: "passages returned"},
		},
	}
}
