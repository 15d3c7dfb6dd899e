package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
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
// The import is stored (the document as sent, the bearer token sealed), so
// its tools come back after a restart; DELETE /api/tools/openapi/{name}
// removes it.
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
	spec := platform.OpenAPIImportSpec{Name: in.Name, Document: doc, BaseURL: in.BaseURL}
	if in.Auth != nil {
		spec.Bearer = in.Auth.Bearer
	}
	tools, err := s.p.ImportOpenAPI(r.Context(), workspace(r), spec)
	switch {
	case errors.Is(err, platform.ErrNoHTTPClient):
		apierr.Write(w, &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer, Code: "no_http_client",
			Message: "this server has no outbound HTTP client for tools (platform Options.Builtins.HTTPClient): OpenAPI tools cannot be imported"})
		return
	case errors.Is(err, platform.ErrInvalidOpenAPI):
		apierr.Write(w, apierr.BadRequest("document", err.Error()))
		return
	case err != nil:
		storeError(w, err)
		return
	}
	type item struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Capability  tool.Capability `json:"capability"`
		Schema      json.RawMessage `json:"input_schema"`
	}
	out := make([]item, len(tools))
	for i, t := range tools {
		out[i] = item{Name: t.Name(), Description: t.Description(), Capability: t.Capability(), Schema: t.Schema()}
	}
	httpapi.WriteJSON(w, http.StatusCreated, map[string]any{"name": in.Name, "tools": out, "persisted": true})
}

// deleteOpenAPIImport removes an OpenAPI import of the caller's workspace
// and its tools: 204, or 404 for an unknown name.
func (s *Server) deleteOpenAPIImport(w http.ResponseWriter, r *http.Request) {
	if err := s.p.DeleteOpenAPIImport(r.Context(), workspace(r), r.PathValue("name")); err != nil {
		storeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
