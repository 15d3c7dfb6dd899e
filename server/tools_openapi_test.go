package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentcraftlab/agentcraft/internal/egress"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/tool"
)

const petstoreJSON = `{
  "openapi": "3.0.3",
  "info": {"title": "Petstore", "version": "1.0"},
  "servers": [{"url": "https://petstore.example.com/v1"}],
  "paths": {
    "/pets/{petId}": {
      "get": {
        "operationId": "showPetById",
        "summary": "Info for a specific pet",
        "parameters": [{"name": "petId", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {"200": {"description": "ok"}}
      }
    },
    "/pets": {
      "post": {
        "summary": "Add a pet",
        "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {"name": {"type": "string"}}}}}},
        "responses": {"201": {"description": "created"}}
      }
    }
  }
}`

const petstoreYAMLDoc = `openapi: 3.0.3
info: {title: Zoo, version: "1.0"}
servers: [{url: "https://zoo.example.com"}]
paths:
  /animals:
    get:
      operationId: listAnimals
      responses: {"200": {description: ok}}
`

// openAPIEnv is a server whose tools may reach loopback, as the egress
// allow list of a deployment would let them reach an internal API.
func openAPIEnv(t *testing.T) (*servertest.Env, *llmtest.Server, client) {
	t.Helper()
	g, err := (&egress.Policy{Allow: []string{"127.0.0.1"}}).Compile()
	if err != nil {
		t.Fatal(err)
	}
	fake := llmtest.NewOpenAI(t)
	env := servertest.New(t, &servertest.Options{Providers: []platform.ProviderConfig{fakeProvider(fake)},
		Builtins: &tool.BuiltinOptions{HTTPClient: g.Client()}})
	return env, fake, client{t: t, base: env.URL, key: env.Key}
}

func TestImportOpenAPI(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		seen []string
	)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%q,"name":"Rex"}`, strings.TrimPrefix(r.URL.Path, "/v1/pets/"))
	}))
	defer upstream.Close()
	_, fake, c := openAPIEnv(t)

	// JSON as an object, with a base URL and a bearer token.
	var imported struct {
		Name      string
		Persisted bool
		Tools     []struct {
			Name       string
			Capability string
			Schema     json.RawMessage `json:"input_schema"`
		}
	}
	c.json("POST", "/api/tools/openapi", `{"name":"petstore","document":`+petstoreJSON+`,"base_url":"`+upstream.URL+`/v1","auth":{"bearer":"pet-token"}}`,
		http.StatusCreated, &imported)
	var got []string
	for _, tl := range imported.Tools {
		got = append(got, tl.Name+" "+tl.Capability)
	}
	if strings.Join(got, ", ") != "petstore__post__pets high, petstore__showPetById medium" {
		t.Errorf("imported tools = %v", got)
	}
	if !imported.Persisted {
		t.Error("POST /api/tools/openapi: persisted = false, want true (the import is stored)")
	}
	// YAML as a string.
	yamlDoc, _ := json.Marshal(petstoreYAMLDoc)
	c.json("POST", "/api/tools/openapi", `{"name":"zoo","document":`+string(yamlDoc)+`}`, http.StatusCreated, &imported)
	if len(imported.Tools) != 1 || imported.Tools[0].Name != "zoo__listAnimals" {
		t.Errorf("YAML import = %+v, want zoo__listAnimals", imported.Tools)
	}

	var list struct {
		Data []struct{ Name, Source, Capability string }
	}
	c.json("GET", "/api/tools", "", http.StatusOK, &list)
	sources := map[string]string{}
	for _, tl := range list.Data {
		sources[tl.Name] = tl.Source + " " + tl.Capability
	}
	for name, want := range map[string]string{"petstore__showPetById": "openapi:petstore medium", "petstore__post__pets": "openapi:petstore high", "zoo__listAnimals": "openapi:zoo medium"} {
		if sources[name] != want {
			t.Errorf("GET /api/tools: %s = %q, want %q", name, sources[name], want)
		}
	}

	// An agent of the workspace names the tool and calls it.
	c.json("POST", "/api/agents", `{"name":"vet","model":"fake/fake-model","instructions":"Look pets up.","tools":["petstore__showPetById"]}`, http.StatusCreated, nil)
	fake.Push(
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "p1", Name: "petstore__showPetById", Arguments: `{"path":{"petId":"42"}}`}}},
		llmtest.Turn{Text: "Pet 42 is Rex."},
	)
	var answer chatAnswer
	c.json("POST", "/api/chat", `{"agent":"vet","messages":[{"role":"user","content":"Who is pet 42?"}]}`, http.StatusOK, &answer)
	if len(answer.ToolCalls) != 1 || answer.ToolCalls[0].IsError || !strings.Contains(answer.ToolCalls[0].Result, `{"id":"42","name":"Rex"}`) {
		t.Fatalf("tool calls = %+v, want pet 42 read from the upstream", answer.ToolCalls)
	}
	mu.Lock()
	if len(seen) != 1 || seen[0] != "GET /v1/pets/42 Bearer pet-token" {
		t.Errorf("upstream saw %q, want one GET /v1/pets/42 with the bearer token", seen)
	}
	mu.Unlock()
	// The tool model definition sent upstream carries the built schema.
	if reqs := fake.Requests(); len(reqs) == 0 || !strings.Contains(string(reqs[0].Body), `"petstore__showPetById"`) || !strings.Contains(string(reqs[0].Body), `petId`) {
		t.Errorf("the model was not offered petstore__showPetById with its schema")
	}
}

func TestImportOpenAPIBadDocuments(t *testing.T) {
	t.Parallel()
	_, _, c := openAPIEnv(t)
	tests := []struct{ body, want string }{
		{`{"name":"x","document":{"swagger":"2.0","info":{"title":"x","version":"1"},"paths":{}}}`, "OpenAPI 3"},
		{`{"name":"x","document":"openapi: [3"}`, "does not load"},
		{`{"name":"x","document":{"openapi":"3.0.3","info":{"title":"x","version":"1"},"paths":{"/a":{"get":{}}}}}`, "not valid"},
		{`{"name":"x","document":{"openapi":"3.0.3","info":{"title":"x","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}}}}}`, "pass base_url"},
		{`{"name":"x"}`, "document is required"},
		{`{"name":"bad name","document":{}}`, "name must be"},
	}
	for _, tt := range tests {
		resp, body := c.do("POST", "/api/tools/openapi", tt.body)
		d := wantError(t, resp, body, http.StatusBadRequest, "invalid_request")
		if !strings.Contains(d.Message, tt.want) {
			t.Errorf("POST %s: message %q, want it to contain %q", tt.body, d.Message, tt.want)
		}
	}
	// Importing the same name again replaces its tools rather than
	// clashing with them.
	valid := `{"name":"x","base_url":"http://127.0.0.1:1","document":{"openapi":"3.0.3","info":{"title":"x","version":"1"},"paths":{"/a":{"get":{"operationId":"a","responses":{"200":{"description":"ok"}}}}}}}`
	c.json("POST", "/api/tools/openapi", valid, http.StatusCreated, nil)
	c.json("POST", "/api/tools/openapi", valid, http.StatusCreated, nil)

	// DELETE removes the import and its tools; a second DELETE is 404.
	hasTool := func(name string) bool {
		var list struct{ Data []struct{ Name string } }
		c.json("GET", "/api/tools", "", http.StatusOK, &list)
		for _, tl := range list.Data {
			if tl.Name == name {
				return true
			}
		}
		return false
	}
	if !hasTool("x__a") {
		t.Fatal("GET /api/tools lacks x__a after the import")
	}
	resp, body := c.do("DELETE", "/api/tools/openapi/x", "")
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE /api/tools/openapi/x = %d %s, want 204", resp.StatusCode, body)
	}
	if hasTool("x__a") {
		t.Error("GET /api/tools still lists x__a after DELETE")
	}
	resp, body = c.do("DELETE", "/api/tools/openapi/x", "")
	wantError(t, resp, body, http.StatusNotFound, "not_found")
}
