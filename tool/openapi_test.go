package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const petstoreYAML = `openapi: 3.0.3
info: {title: Petstore, version: "1.0"}
servers: [{url: "https://{host}/v1", variables: {host: {default: petstore.example.com}}}]
paths:
  /pets:
    get:
      operationId: listPets
      summary: List pets
      parameters:
        - {name: limit, in: query, schema: {type: integer}, description: How many}
        - {name: X-Trace, in: header, schema: {type: string}}
        - {name: session, in: cookie, schema: {type: string}}
      responses: {"200": {description: ok}}
    post:
      summary: Add a pet
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Pet"}
      responses: {"201": {description: created}}
  /pets/{petId}:
    parameters:
      - {name: petId, in: path, required: true, schema: {type: string}}
    get:
      operationId: showPetById
      description: Info for a specific pet
      responses: {"200": {description: ok}}
    delete:
      operationId: "delete pet/by id!"
      responses: {"204": {description: gone}}
components:
  schemas:
    Pet:
      type: object
      required: [name]
      properties:
        name: {type: string}
        parent: {$ref: "#/components/schemas/Pet"}
`

func TestOpenAPIInputSchema(t *testing.T) {
	doc, err := ParseOpenAPI(context.Background(), []byte(petstoreYAML))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path, method string
		want         string
		bodyType     string
	}{
		{"/pets", "GET", `{"type":"object","additionalProperties":false,"properties":{
			"query":{"type":"object","additionalProperties":false,"description":"query parameters","properties":{"limit":{"type":"integer","description":"How many"}}},
			"header":{"type":"object","additionalProperties":false,"description":"header parameters","properties":{"X-Trace":{"type":"string"}}}}}`, ""},
		{"/pets/{petId}", "GET", `{"type":"object","additionalProperties":false,"required":["path"],"properties":{
			"path":{"type":"object","additionalProperties":false,"description":"path parameters","required":["petId"],"properties":{"petId":{"type":"string"}}}}}`, ""},
		// The $ref is inlined; its recursion stops at maxInlineDepth.
		{"/pets", "POST", "", "application/json"},
	}
	for _, tt := range tests {
		item := doc.Paths.Value(tt.path)
		got, bodyType, err := OpenAPIInputSchema(doc, item.Parameters, item.GetOperation(tt.method))
		if err != nil {
			t.Fatalf("%s %s: %v", tt.method, tt.path, err)
		}
		if bodyType != tt.bodyType {
			t.Errorf("%s %s: body type %q, want %q", tt.method, tt.path, bodyType, tt.bodyType)
		}
		var gotV map[string]any
		if err := json.Unmarshal(got, &gotV); err != nil {
			t.Fatal(err)
		}
		if tt.want == "" {
			body := gotV["properties"].(map[string]any)["body"].(map[string]any)
			if body["type"] != "object" || fmt.Sprint(body["required"]) != "[name]" || strings.Contains(string(got), "$ref") {
				t.Errorf("POST /pets body schema = %s, want Pet inlined without $ref", got)
			}
			parent := body["properties"].(map[string]any)["parent"].(map[string]any)
			if parent["type"] != "object" {
				t.Errorf("POST /pets: parent = %v, want the Pet schema inlined once more", parent)
			}
			if fmt.Sprint(gotV["required"]) != "[body]" {
				t.Errorf("POST /pets: required = %v, want [body]", gotV["required"])
			}
			continue
		}
		var wantV map[string]any
		if err := json.Unmarshal([]byte(tt.want), &wantV); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantV, gotV); diff != "" {
			t.Errorf("%s %s schema (-want +got):\n%s", tt.method, tt.path, diff)
		}
	}
}

func TestOpenAPIToolsNamesAndCapabilities(t *testing.T) {
	doc, err := ParseOpenAPI(context.Background(), []byte(petstoreYAML))
	if err != nil {
		t.Fatal(err)
	}
	tools, err := OpenAPITools(doc, egressClient(t), &OpenAPIOptions{Prefix: "petstore"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tl := range tools {
		got = append(got, fmt.Sprintf("%s %v %s", tl.Name(), tl.Capability(), tl.Description()))
		if err := ValidateName(tl.Name()); err != nil {
			t.Errorf("%s: %v", tl.Name(), err)
		}
	}
	want := []string{
		"petstore__listPets medium List pets (GET /pets)",
		"petstore__post__pets high Add a pet (POST /pets)",
		"petstore__delete_pet_by_id_ high DELETE /pets/{petId}",
		"petstore__showPetById medium Info for a specific pet (GET /pets/{petId})",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if tools[0].base != "https://petstore.example.com/v1" {
		t.Errorf("base = %q, want the server URL with its variable filled in", tools[0].base)
	}
	long := sanitizeName("p__" + strings.Repeat("x", 100))
	taken := map[string]bool{}
	a, b := uniqueName(long, taken), uniqueName(long, taken)
	if len(a) != 64 || len(b) != 64 || a == b {
		t.Errorf("uniqueName of a long name twice = %q, %q; want two distinct 64-byte names", a, b)
	}
}

func TestParseOpenAPIErrors(t *testing.T) {
	tests := []struct{ doc, want string }{
		{`{"swagger": "2.0", "info": {"title": "x", "version": "1"}, "paths": {}}`, "OpenAPI 3"},
		{`openapi: 3.0.3`, "not valid"},
		{`{"openapi": "3.0.3", "info": {"title": "x", "version": "1"}, "paths": {}}`, "no paths"},
		{`not: [valid`, "does not load"},
		{`{"openapi": "3.0.3", "info": {"title": "x", "version": "1"}, "paths": {"/a": {"get": {"responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "other.yaml#/X"}}}}}}}}}`, "does not load"},
	}
	for _, tt := range tests {
		_, err := ParseOpenAPI(context.Background(), []byte(tt.doc))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseOpenAPI(%.40q) error = %v, want one containing %q", tt.doc, err, tt.want)
		}
	}
}

func TestOpenAPIToolCall(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = append(got, fmt.Sprintf("%s %s auth=%q trace=%q ctype=%q body=%s", r.Method, r.URL.RequestURI(), r.Header.Get("Authorization"), r.Header.Get("X-Trace"), r.Header.Get("Content-Type"), body))
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/missing") {
			w.WriteHeader(http.StatusNotFound)
		}
		io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	doc, err := ParseOpenAPI(context.Background(), []byte(petstoreYAML))
	if err != nil {
		t.Fatal(err)
	}
	tools, err := OpenAPITools(doc, egressClient(t, "127.0.0.1"), &OpenAPIOptions{Prefix: "pets", BaseURL: srv.URL + "/v1", Bearer: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*OpenAPITool{}
	for _, tl := range tools {
		byName[tl.Name()] = tl
	}
	calls := []struct {
		tool, args, want string
		wantErr          bool
		sent             string
	}{
		{"pets__listPets", `{"query":{"limit":3},"header":{"X-Trace":"t1"}}`, `{"ok":true}`, false,
			`GET /v1/pets?limit=3 auth="Bearer s3cret" trace="t1" ctype="" body=`},
		{"pets__showPetById", `{"path":{"petId":"a b/c"}}`, "HTTP 200 OK", false, `GET /v1/pets/a%20b%2Fc auth="Bearer s3cret" trace="" ctype="" body=`},
		{"pets__showPetById", `{"path":{"petId":"missing"}}`, "HTTP 404 Not Found", true, `GET /v1/pets/missing auth="Bearer s3cret" trace="" ctype="" body=`},
		{"pets__post__pets", `{"body":{"name":"Rex"}}`, "HTTP 200 OK", false, `POST /v1/pets auth="Bearer s3cret" trace="" ctype="application/json" body={"name":"Rex"}`},
		{"pets__post__pets", `{}`, `missing required argument "body"`, true, ""},
		{"pets__showPetById", `{"path":{}}`, "petId", true, ""},
	}
	for _, c := range calls {
		got = nil
		res, err := byName[c.tool].Call(context.Background(), json.RawMessage(c.args))
		if err != nil {
			t.Fatalf("%s %s: %v", c.tool, c.args, err)
		}
		if res.IsError != c.wantErr || !strings.Contains(res.Content, c.want) {
			t.Errorf("%s %s = %+v, want %q (error %v)", c.tool, c.args, res, c.want, c.wantErr)
		}
		if c.sent != "" && (len(got) != 1 || got[0] != c.sent) {
			t.Errorf("%s %s sent %q, want %q", c.tool, c.args, got, c.sent)
		}
	}
	// The egress policy applies: without the allow list loopback is refused.
	blocked, err := OpenAPITools(doc, egressClient(t), &OpenAPIOptions{Prefix: "pets", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	res, err := blocked[0].Call(context.Background(), json.RawMessage(`{}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "outbound policy") {
		t.Errorf("call to loopback without allow list = %+v, %v; want a policy refusal", res, err)
	}
}
