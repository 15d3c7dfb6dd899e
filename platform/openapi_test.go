package platform_test

import (
	"context"
	"errors"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool"
)

const petsDoc = `openapi: 3.0.3
info: {title: Pets, version: "1.0"}
servers: [{url: "https://pets.example.com"}]
paths:
  /pets/{id}:
    get:
      operationId: getPet
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: ok}}
`

// importedTools lists the names of the workspace's added tools.
func importedTools(p *platform.Platform, ws string) string {
	var names []string
	for _, wt := range p.WorkspaceTools(ws) {
		names = append(names, wt.Group+":"+wt.Tool.Name())
	}
	return strings.Join(names, ",")
}

// An OpenAPI import survives a restart: a new Platform on the same store
// and master key rebuilds its tools, bearer token included, for its
// workspace only; a stored document that no longer parses is skipped.
func TestOpenAPIImportsReloadedAtStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var (
		mu   sync.Mutex
		seen []string
	)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"name":"Rex"}`))
	}))
	t.Cleanup(upstream.Close)

	st := newStore(t)
	box := newBox(t)
	fake := llmtest.NewOpenAI(t)
	opts := &platform.Options{OllamaURL: deadURL, Getenv: func(string) string { return "" },
		Providers: []platform.ProviderConfig{fakeProvider("fake", fake, "k")},
		Builtins:  &tool.BuiltinOptions{HTTPClient: upstream.Client()}}
	p1, err := platform.New(ctx, st, box, opts)
	if err != nil {
		t.Fatal(err)
	}
	ws := p1.DefaultWorkspace().ID
	other, err := st.Workspaces().GetOrCreate(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p1.ImportOpenAPI(ctx, ws, platform.OpenAPIImportSpec{Name: "pets", Document: []byte(petsDoc),
		BaseURL: upstream.URL, Bearer: "pet-token"}); err != nil {
		t.Fatalf("ImportOpenAPI = %v", err)
	}
	_, err = p1.ImportOpenAPI(ctx, ws, platform.OpenAPIImportSpec{Name: "broken", Document: []byte("openapi: [3")})
	if !errors.Is(err, platform.ErrInvalidOpenAPI) {
		t.Errorf("ImportOpenAPI(broken) = %v, want ErrInvalidOpenAPI", err)
	}
	rows, err := st.OpenAPIImports().List(ctx, ws)
	if err != nil || len(rows) != 1 || rows[0].Document != petsDoc || len(rows[0].Ciphertext) == 0 ||
		strings.Contains(string(rows[0].Ciphertext), "pet-token") {
		t.Fatalf("stored imports = %+v, %v; want pets alone, document as sent, token sealed", rows, err)
	}
	p1.Stop()

	// A document stored by an older version that no longer parses.
	if _, err := st.OpenAPIImports().Put(ctx, store.OpenAPIImport{WorkspaceID: other.ID, Name: "stale", Document: "openapi: [3"}); err != nil {
		t.Fatal(err)
	}

	p2, err := platform.New(ctx, st, box, opts)
	if err != nil {
		t.Fatalf("New with a stale stored document = %v, want it skipped", err)
	}
	t.Cleanup(p2.Stop)
	if got := importedTools(p2, ws); got != "pets:pets__getPet" {
		t.Errorf("after restart WorkspaceTools(default) = %q, want pets:pets__getPet", got)
	}
	if got := importedTools(p2, other.ID); got != "" {
		t.Errorf("after restart WorkspaceTools(other) = %q, want none", got)
	}
	tl := p2.WorkspaceTools(ws)[0].Tool
	res, err := tl.Call(ctx, []byte(`{"path":{"id":"7"}}`))
	if err != nil || res.IsError || !strings.Contains(res.Content, "Rex") {
		t.Fatalf("reloaded tool Call = %+v, %v; want the upstream's pet", res, err)
	}
	mu.Lock()
	if len(seen) != 1 || seen[0] != "/pets/7 Bearer pet-token" {
		t.Errorf("upstream saw %q, want /pets/7 with the unsealed bearer token", seen)
	}
	mu.Unlock()

	if _, err := p2.CreateAgent(ctx, store.Agent{WorkspaceID: ws, Name: "vet", Model: "fake/m", Tools: []string{"pets__getPet"}}); err != nil {
		t.Fatal(err)
	}
	if err := p2.DeleteOpenAPIImport(ctx, ws, "pets"); err != nil {
		t.Fatalf("DeleteOpenAPIImport = %v", err)
	}
	// An agent still naming a removed import's tool runs without it, and
	// the warning does not blame a missing MCP server.
	vet, err := p2.Agent(ctx, ws, "vet")
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(vet.Runtime.Warnings, "; "); !strings.Contains(w, "pets__getPet") || !strings.Contains(w, "OpenAPI import") || strings.Contains(w, "no MCP server is configured") {
		t.Errorf("warnings = %q, want pets__getPet left out naming a removed MCP server or OpenAPI import", w)
	}
	if err := p2.DeleteOpenAPIImport(ctx, ws, "pets"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("DeleteOpenAPIImport twice = %v, want ErrNotFound", err)
	}
	if got := importedTools(p2, ws); got != "" {
		t.Errorf("after delete WorkspaceTools = %q, want none", got)
	}
	p3, err := platform.New(ctx, st, box, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p3.Stop)
	if got := importedTools(p3, ws); got != "" {
		t.Errorf("after delete and restart WorkspaceTools = %q, want none", got)
	}
}
