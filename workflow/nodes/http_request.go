package nodes

import "github.com/agentcraftlab/agentcraft/workflow"

// httpRequest calls an HTTP endpoint. Private and loopback addresses are
// blocked unless the server's allow list names them; a node cannot lift
// that, so there is no config key for it.
func httpRequest() workflow.Kind {
	return workflow.Kind{
		Type:               "http-request",
		Doc:                "Calls an HTTP endpoint and maps the response.",
		Execute:            execHTTP,
		IsExecutable:       true,
		RequiresImperative: true,
		Config: []workflow.ConfigKey{
			{Name: "method", Type: workflow.TypeString, Enum: []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"}, Default: "GET", Doc: "HTTP method"},
			{Name: "url", Type: workflow.TypeTemplate, Required: true, Doc: "URL template, such as https://api.example.com/items/{{vars.id}}"},
			{Name: "headers", Type: workflow.TypeObject, Doc: "request headers; values are templates"},
			{Name: "body", Type: workflow.TypeTemplate, Doc: "request body template"},
			{Name: "timeout", Type: workflow.TypeDuration, Default: "30s", Doc: "time limit of one attempt"},
			{Name: "retries", Type: workflow.TypeInteger, Min: atLeast(0), Default: 0, Doc: "extra attempts after a network error or 5xx"},
			{Name: "response_mapping", Type: workflow.TypeObject, Doc: "output fields as JSON paths into the response, such as {\"title\": \"$.title\"}"},
		},
	}
}
