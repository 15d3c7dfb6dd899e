package server

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/tool"
)

// openAPIImport is the body of POST /api/tools/openapi.
type openAPIImport struct {
	// Name prefixes the tools: <name>__<operationId>.
	Name string `json:"name"`
	// Document is the OpenAPI 3 document, JSON or YAML, as a string or as
	// a JSON object.
	Document json.RawMessage `json:"document"`
	// BaseURL overrides the document's servers[0].url.
	BaseURL string `json:"base_url"`
	// Auth is sent with every call.
	Auth *struct {
		Bearer string `json:"bearer"`
	} `json:"auth"`
}

// importOpenAPI turns the operations of an OpenAPI 3 document into tools of
// the caller's workspace, named <name>__<operationId or method_path>. The
// arguments of each tool are {"path": {...}, "query": {...}, "header":
// {...}, "body": ...}; calls go through the egress-policy client. Importing
// the same name again replaces that document's tools.
//
// The imported tools are held in memory by the platform: they do not
// survive a restart, so the document must be imported again after one.
func (s *Server) importOpenAPI(w http.ResponseWriter, r *http.Request) {
	var in openAPIImport
	if !s.decodeBody(w, r, &in) {
		return
	}
	if in.Name == "" || len(in.Name) > 40 || tool.ValidateName(in.Name) != nil {
		apierr.Write(w, apierr.BadRequest("name", `name must be 1 to 40 letters, digits, '_' or '-', such as "petstore"`))
		return
	}
	doc := []byte(strings.TrimSpace(string(in.Document)))
	if len(doc) > 0 && doc[0] == '"' {
		var text string
		if err := json.Unmarshal(doc, &text); err != nil {
			apierr.Write(w, apierr.BadRequest("document", "document is not a valid JSON string: "+err.Error()))
			return
		}
		doc = []byte(text)
	}
	if len(doc) == 0 || string(doc) == "null" {
		apierr.Write(w, apierr.BadRequest("document", "document is required: send the OpenAPI 3 document as a JSON object or as a string of JSON or YAML"))
		return
	}
	client := s.p.EgressClient()
	if client == nil {
		apierr.Write(w, &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer, Code: "no_http_client",
			Message: "this server has no outbound HTTP client for tools (platform Options.Builtins.HTTPClient): OpenAPI tools cannot be imported"})
		return
	}
	parsed, err := tool.ParseOpenAPI(r.Context(), doc)
	if err != nil {
		apierr.Write(w, apierr.BadRequest("document", err.Error()))
		return
	}
	opts := &tool.OpenAPIOptions{Prefix: in.Name, BaseURL: in.BaseURL}
	if in.Auth != nil {
		opts.Bearer = in.Auth.Bearer
	}
	tools, err := tool.OpenAPITools(parsed, client, opts)
	if err != nil {
		apierr.Write(w, apierr.BadRequest("document", err.Error()))
		return
	}
	list := make([]tool.Tool, len(tools))
	type item struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Capability  tool.Capability `json:"capability"`
		Schema      json.RawMessage `json:"input_schema"`
	}
	out := make([]item, len(tools))
	for i, t := range tools {
		list[i] = t
		out[i] = item{Name: t.Name(), Description: t.Description(), Capability: t.Capability(), Schema: t.Schema()}
	}
	if err := s.p.SetWorkspaceTools(workspace(r), in.Name, list); err != nil {
		apierr.Write(w, &apierr.Error{Status: http.StatusConflict, Type: apierr.TypeInvalidRequest, Code: "conflict", Message: err.Error()})
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"name": in.Name, "tools": out, "persisted": false})
}
