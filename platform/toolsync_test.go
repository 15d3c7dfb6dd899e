package platform_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/tool"
)

// eventually polls cond until it holds or 10 s pass.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, got := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %s after 10 s", what, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Two processes on one database (two serve replicas, or serve and a
// worker running workflows): MCP servers and OpenAPI imports that one adds,
// replaces or removes through the API reach the other's agents without a
// restart.
func TestToolsAddedInOneProcessReachAnother(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hs := pingMCPServer(t)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"name":"Rex"}`))
	}))
	t.Cleanup(upstream.Close)

	st := newStore(t)
	box := newBox(t)
	opts := &platform.Options{OllamaURL: deadURL, Getenv: func(string) string { return "" },
		Builtins: &tool.BuiltinOptions{HTTPClient: upstream.Client()}, ToolSync: 50 * time.Millisecond}
	a, err := platform.New(ctx, st, box, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	b, err := platform.New(ctx, st, box, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Stop)
	ws := a.DefaultWorkspace().ID

	toolNames := func(p *platform.Platform) (bool, string) {
		tools, err := p.ListTools(ctx, ws)
		if err != nil {
			return false, err.Error()
		}
		var names []string
		for _, tl := range tools {
			if strings.Contains(tl.Name, "__") {
				names = append(names, tl.Name)
			}
		}
		slices.Sort(names)
		return true, strings.Join(names, ",")
	}
	want := func(p *platform.Platform, names string) func() (bool, string) {
		return func() (bool, string) {
			ok, got := toolNames(p)
			return ok && got == names, got
		}
	}

	if _, err := a.AddMCPServer(ctx, ws, platform.MCPServerSpec{Name: "up", URL: hs.URL}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ImportOpenAPI(ctx, ws, platform.OpenAPIImportSpec{Name: "pets", Document: []byte(petsDoc), BaseURL: upstream.URL}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "B's tools after A added an MCP server and an import", want(b, "pets__getPet,up__ping"))
	res, err := b.WorkspaceTools(ws)[0].Tool.Call(ctx, []byte(`{"path":{"id":"7"}}`))
	if err != nil || !strings.Contains(res.Content, "Rex") {
		t.Fatalf("B calls the synced import: %+v, %v", res, err)
	}

	// A replaces the import with a document of other operations.
	other := strings.ReplaceAll(strings.ReplaceAll(petsDoc, "getPet", "fetchPet"), "/pets/{id}", "/animals/{id}")
	if _, err := a.ImportOpenAPI(ctx, ws, platform.OpenAPIImportSpec{Name: "pets", Document: []byte(other), BaseURL: upstream.URL}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "B's tools after A replaced the import", want(b, "pets__fetchPet,up__ping"))

	// B removes both; A follows.
	if err := b.DeleteMCPServer(ctx, ws, "up"); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteOpenAPIImport(ctx, ws, "pets"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "A's tools after B removed them", want(a, ""))
	if infos, err := a.MCPServers(ctx, ws); err != nil || len(infos) != 0 {
		t.Errorf("A's MCP servers after B removed its own = %+v, %v", infos, err)
	}
}
