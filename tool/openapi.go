package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/agentcraftlab/agentcraft/internal/httpcall"
)

// OpenAPIOptions configure OpenAPITools.
type OpenAPIOptions struct {
	// Prefix starts every tool name: <Prefix>__<operationId>, or
	// <Prefix>__<method>_<path> for an operation without an id. Required.
	Prefix string
	// BaseURL overrides the document's servers[0].url. Required when the
	// document has no absolute server URL.
	BaseURL string
	// Bearer, when set, is sent as Authorization: Bearer <Bearer> on every
	// call; the model cannot override it.
	Bearer string
	// HTTP bounds each call; zero fields mean the http_request defaults.
	HTTP HTTPOptions
}

// maxOpenAPIDescription bounds a tool description taken from a document.
const maxOpenAPIDescription = 1024

// maxInlineDepth bounds how deep $ref schemas are inlined into a tool's
// input schema; deeper (or recursive) references become {} (any value).
const maxInlineDepth = 8

// ParseOpenAPI loads and validates an OpenAPI 3 document, JSON or YAML.
// External references are refused, so a document cannot make the server
// read files or fetch URLs. The error names what is wrong.
func ParseOpenAPI(ctx context.Context, data []byte) (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	loader.Context = ctx
	loader.IsExternalRefsAllowed = false
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("openapi: the document does not load: %w", err)
	}
	if doc.OpenAPI == "" {
		return nil, errors.New(`openapi: the document has no "openapi" version field (Swagger 2.0 is not supported): import an OpenAPI 3 document ("openapi": "3.0.3")`)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		return nil, fmt.Errorf("openapi: version %q is not supported: import an OpenAPI 3 document (\"openapi\": \"3.0.3\")", doc.OpenAPI)
	}
	if err := doc.Validate(ctx); err != nil {
		return nil, fmt.Errorf("openapi: the document is not valid: %w", err)
	}
	if doc.Paths == nil || doc.Paths.Len() == 0 {
		return nil, errors.New("openapi: the document has no paths: there is no operation to turn into a tool")
	}
	return doc, nil
}

// OpenAPITool is one operation of an OpenAPI document as a tool. Its
// arguments are an object with up to four members: "path", "query" and
// "header" (objects of the operation's parameters of that location) and
// "body" (the JSON request body). Calls go through client, the
// egress-policy client, and read as http_request's do.
type OpenAPITool struct {
	name, description string
	schema            json.RawMessage
	capability        Capability
	method, base      string
	path              string // template with {param}
	bodyType          string // content type of the request body; "" for none
	bearer            string
	client            *http.Client
	opts              HTTPOptions
}

var _ Tool = (*OpenAPITool)(nil)

// Name implements Tool.
func (t *OpenAPITool) Name() string { return t.name }

// Description implements Tool.
func (t *OpenAPITool) Description() string { return t.description }

// Schema implements Tool.
func (t *OpenAPITool) Schema() json.RawMessage { return t.schema }

// Capability implements Tool: medium for GET and HEAD, which read, and
// high for the methods that change things.
func (t *OpenAPITool) Capability() Capability { return t.capability }

// OpenAPITools turns every operation of doc into a tool calling through
// client. Names are made valid (letters, digits, '_' and '-', at most 64)
// and unique within the document.
func OpenAPITools(doc *openapi3.T, client *http.Client, opts *OpenAPIOptions) ([]*OpenAPITool, error) {
	if client == nil {
		return nil, errors.New("tool: openapi: no HTTP client: pass the egress-policy client (egress.Guard.Client)")
	}
	var o OpenAPIOptions
	if opts != nil {
		o = *opts
	}
	if o.Prefix == "" || len(o.Prefix) > 40 || ValidateName(o.Prefix) != nil {
		return nil, fmt.Errorf("tool: openapi: name %q is not valid: use 1 to 40 letters, digits, '_' or '-'", o.Prefix)
	}
	o.HTTP.MaxResponseBytes = orDefault(o.HTTP.MaxResponseBytes, DefaultHTTPMaxResponseBytes)
	o.HTTP.Timeout = orDefault(o.HTTP.Timeout, DefaultHTTPTimeout)
	base, err := openAPIBase(doc, o.BaseURL)
	if err != nil {
		return nil, err
	}
	var out []*OpenAPITool
	taken := map[string]bool{}
	paths := doc.Paths.Keys()
	slices.Sort(paths)
	for _, path := range paths {
		item := doc.Paths.Value(path)
		ops := item.Operations()
		methods := make([]string, 0, len(ops))
		for m := range ops {
			methods = append(methods, m)
		}
		slices.Sort(methods)
		for _, method := range methods {
			op := ops[method]
			schema, bodyType, err := OpenAPIInputSchema(doc, item.Parameters, op)
			if err != nil {
				return nil, fmt.Errorf("tool: openapi: %s %s: %w", method, path, err)
			}
			id := op.OperationID
			if id == "" {
				id = strings.ToLower(method) + "_" + path
			}
			t := &OpenAPITool{
				name:        uniqueName(sanitizeName(o.Prefix+"__"+id), taken),
				description: openAPIDescription(method, path, op),
				schema:      schema,
				capability:  CapabilityHigh,
				method:      method,
				base:        base,
				path:        path,
				bodyType:    bodyType,
				bearer:      o.Bearer,
				client:      client,
				opts:        o.HTTP,
			}
			if method == http.MethodGet || method == http.MethodHead {
				t.capability = CapabilityMedium
			}
			out = append(out, t)
		}
	}
	return out, nil
}

// openAPIBase returns the absolute base URL of calls: override, or the
// first server with its variables' defaults.
func openAPIBase(doc *openapi3.T, override string) (string, error) {
	raw := override
	if raw == "" && len(doc.Servers) > 0 && doc.Servers[0] != nil {
		raw = doc.Servers[0].URL
		for name, v := range doc.Servers[0].Variables {
			if v != nil {
				raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
			}
		}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		if override != "" {
			return "", fmt.Errorf("tool: openapi: base_url %q is not an absolute http or https URL: write it like \"https://api.example.com/v1\"", override)
		}
		return "", fmt.Errorf("tool: openapi: the document's servers[0].url %q is not an absolute http or https URL: pass base_url", raw)
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

func openAPIDescription(method, path string, op *openapi3.Operation) string {
	d := strings.TrimSpace(op.Summary)
	if desc := strings.TrimSpace(op.Description); desc != "" && desc != d {
		if d != "" {
			d += "\n\n"
		}
		d += desc
	}
	if len(d) > maxOpenAPIDescription {
		d = string(trimCutRunes([]byte(d[:maxOpenAPIDescription]), false)) + "…"
	}
	if d == "" {
		return method + " " + path
	}
	return d + " (" + method + " " + path + ")"
}

// sanitizeName replaces what a tool name may not hold with '_' and cuts it
// to 64 bytes.
func sanitizeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}

// uniqueName returns name, or name with a numeric suffix when taken
// already (two ids that sanitise alike, or cut at 64 bytes alike).
func uniqueName(name string, taken map[string]bool) string {
	out := name
	for i := 2; taken[out]; i++ {
		suffix := "_" + strconv.Itoa(i)
		out = name[:min(len(name), 64-len(suffix))] + suffix
	}
	taken[out] = true
	return out
}

// OpenAPIInputSchema builds the JSON Schema of an operation's arguments:
// {"path": {...}, "query": {...}, "header": {...}, "body": ...}, each
// parameter's schema under its location (operation parameters override
// path-item ones of the same name and location) and the JSON request body
// under "body" (a body of another type is a string). Cookie parameters are
// left out. Schema references are inlined. bodyType is the content type
// the body is sent as, "" when the operation takes none.
func OpenAPIInputSchema(doc *openapi3.T, common openapi3.Parameters, op *openapi3.Operation) (schema json.RawMessage, bodyType string, err error) {
	type group struct {
		props    map[string]any
		required []string
	}
	groups := map[string]*group{}
	params := map[string]*openapi3.Parameter{}
	var order []string
	for _, list := range []openapi3.Parameters{common, op.Parameters} {
		for _, ref := range list {
			if ref == nil || ref.Value == nil {
				continue
			}
			p := ref.Value
			key := p.In + "\x00" + p.Name
			if _, seen := params[key]; !seen {
				order = append(order, key)
			}
			params[key] = p
		}
	}
	for _, key := range order {
		p := params[key]
		if p.In != openapi3.ParameterInPath && p.In != openapi3.ParameterInQuery && p.In != openapi3.ParameterInHeader {
			continue
		}
		var s map[string]any
		if p.Schema != nil {
			if s, err = inlineSchema(doc, p.Schema, 0); err != nil {
				return nil, "", fmt.Errorf("parameter %s: %w", p.Name, err)
			}
		} else {
			s = map[string]any{"type": "string"}
		}
		if p.Description != "" {
			s["description"] = p.Description
		}
		g := groups[p.In]
		if g == nil {
			g = &group{props: map[string]any{}}
			groups[p.In] = g
		}
		g.props[p.Name] = s
		if p.Required || p.In == openapi3.ParameterInPath {
			g.required = append(g.required, p.Name)
		}
	}
	props := map[string]any{}
	var required []string
	for _, in := range []string{openapi3.ParameterInPath, openapi3.ParameterInQuery, openapi3.ParameterInHeader} {
		g := groups[in]
		if g == nil {
			continue
		}
		obj := map[string]any{"type": "object", "properties": g.props, "additionalProperties": false,
			"description": in + " parameters"}
		if len(g.required) > 0 {
			slices.Sort(g.required)
			obj["required"] = g.required
			required = append(required, in)
		}
		props[in] = obj
	}
	if op.RequestBody != nil && op.RequestBody.Value != nil && len(op.RequestBody.Value.Content) > 0 {
		rb := op.RequestBody.Value
		types := make([]string, 0, len(rb.Content))
		for ct := range rb.Content {
			types = append(types, ct)
		}
		slices.Sort(types)
		bodyType = types[0]
		for _, ct := range types {
			if isJSONType(ct) {
				bodyType = ct
				break
			}
		}
		var s map[string]any
		if mt := rb.Content[bodyType]; isJSONType(bodyType) && mt != nil && mt.Schema != nil {
			if s, err = inlineSchema(doc, mt.Schema, 0); err != nil {
				return nil, "", fmt.Errorf("request body: %w", err)
			}
		} else if isJSONType(bodyType) {
			s = map[string]any{}
		} else {
			s = map[string]any{"type": "string"}
		}
		s["description"] = strings.TrimSpace("Request body (" + bodyType + "). " + rb.Description)
		props["body"] = s
		if rb.Required {
			required = append(required, "body")
		}
	}
	out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		out["required"] = required
	}
	b, err := json.Marshal(out)
	return b, bodyType, err
}

func isJSONType(ct string) bool {
	ct, _, _ = strings.Cut(ct, ";")
	ct = strings.TrimSpace(ct)
	return ct == "application/json" || strings.HasSuffix(ct, "+json")
}

// inlineSchema returns ref's schema as a JSON object with every
// "#/components/schemas/..." reference replaced by the schema it names,
// so the model gets one self-contained schema.
func inlineSchema(doc *openapi3.T, ref *openapi3.SchemaRef, depth int) (map[string]any, error) {
	if ref.Value == nil {
		return map[string]any{}, nil
	}
	b, err := json.Marshal(ref.Value)
	if err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("decode schema: %w", err)
	}
	v, err := inlineRefs(doc, m, depth)
	if err != nil {
		return nil, err
	}
	out, _ := v.(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	return out, nil
}

func inlineRefs(doc *openapi3.T, v any, depth int) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		if r, ok := x["$ref"].(string); ok {
			name, found := strings.CutPrefix(r, "#/components/schemas/")
			if !found || depth >= maxInlineDepth || doc.Components == nil || doc.Components.Schemas[name] == nil {
				return map[string]any{}, nil // recursive or foreign: any value
			}
			return inlineSchema(doc, doc.Components.Schemas[name], depth+1)
		}
		for k, e := range x {
			n, err := inlineRefs(doc, e, depth)
			if err != nil {
				return nil, err
			}
			x[k] = n
		}
	case []any:
		for i, e := range x {
			n, err := inlineRefs(doc, e, depth)
			if err != nil {
				return nil, err
			}
			x[i] = n
		}
	}
	return v, nil
}

// Call implements Tool: it fills the path template, adds the query and
// headers and sends the body through the shared HTTP core. Results read
// as http_request's.
func (t *OpenAPITool) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	text, res, ok := CheckArguments(t.schema, args)
	if !ok {
		return res, nil
	}
	var in struct {
		Path   map[string]any  `json:"path"`
		Query  map[string]any  `json:"query"`
		Header map[string]any  `json:"header"`
		Body   json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(text, &in); err != nil {
		return ErrorResult("invalid arguments: %v", err), nil
	}
	path := t.path
	for name, v := range in.Path {
		path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(paramString(v)))
	}
	if i := strings.IndexByte(path, '{'); i >= 0 {
		missing, _, _ := strings.Cut(path[i+1:], "}")
		return ErrorResult(`path parameter %q is missing: pass it in "path", like {"path": {%q: ...}}`, missing, missing), nil
	}
	target := t.base + path
	if len(in.Query) > 0 {
		q := url.Values{}
		for k, v := range in.Query {
			if list, ok := v.([]any); ok {
				for _, e := range list {
					q.Add(k, paramString(e))
				}
				continue
			}
			q.Set(k, paramString(v))
		}
		target += "?" + q.Encode()
	}
	req := &httpcall.Request{Method: t.method, URL: target, Header: map[string]string{}}
	for k, v := range in.Header {
		req.Header[k] = paramString(v)
	}
	if t.bearer != "" {
		for k := range req.Header {
			if strings.EqualFold(k, "Authorization") {
				delete(req.Header, k)
			}
		}
		req.Header["Authorization"] = "Bearer " + t.bearer
	}
	if len(in.Body) > 0 && string(in.Body) != "null" {
		body := []byte(in.Body)
		if !isJSONType(t.bodyType) {
			var s string
			if err := json.Unmarshal(in.Body, &s); err == nil {
				body = []byte(s)
			}
		}
		if len(body) > MaxHTTPRequestBody {
			return ErrorResult(`"body" is %d bytes, more than the limit of %d`, len(body), MaxHTTPRequestBody), nil
		}
		req.Body = body
		req.Header["Content-Type"] = t.bodyType
	}
	return sendHTTP(ctx, t.client, t.opts, req)
}

// paramString writes a parameter value as it goes into a URL or header:
// strings as they are, other values as JSON.
func paramString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
