package server_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/server/servertest"
)

func TestMCPServersAPI(t *testing.T) {
	t.Parallel()
	env, fake, c := newEnv(t)
	ctx := context.Background()
	url := servertest.EchoMCP(t, "s3cret-token")
	wsB, err := env.Store.Workspaces().GetOrCreate(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	cb := client{t: t, base: env.URL, key: servertest.CreateKey(t, env.Store, wsB.ID)}

	var added struct {
		Name, Transport, Source, URL, Auth, Error string
		Connected                                 bool
		Tools                                     int
	}
	c.json("POST", "/api/mcp/servers", `{"name":"echo","url":"`+url+`","bearer":"s3cret-token"}`, http.StatusCreated, &added)
	if !added.Connected || added.Tools != 1 || added.Source != "api" || added.Auth != "bearer" || added.Transport != "http" {
		t.Errorf("POST /api/mcp/servers = %+v, want a connected http server with one tool, source api, auth bearer", added)
	}
	for _, path := range []string{"/api/mcp/servers", "/api/tools"} {
		if _, body := c.do("GET", path, ""); strings.Contains(string(body), "s3cret-token") {
			t.Errorf("GET %s reveals the bearer token: %s", path, body)
		}
	}
	if row, err := env.Store.MCPServers().List(ctx, env.Workspace.ID); err != nil || len(row) != 1 || strings.Contains(string(row[0].Ciphertext), "s3cret-token") {
		t.Errorf("stored servers = %+v, %v; want one, its token sealed", row, err)
	}
	var servers struct {
		Data []struct {
			Name      string
			Connected bool
		}
	}
	c.json("GET", "/api/mcp/servers", "", http.StatusOK, &servers)
	if len(servers.Data) != 1 || servers.Data[0].Name != "echo" || !servers.Data[0].Connected {
		t.Errorf("GET /api/mcp/servers = %+v, want echo connected", servers.Data)
	}
	cb.json("GET", "/api/mcp/servers", "", http.StatusOK, &servers)
	if len(servers.Data) != 0 {
		t.Errorf("workspace b lists %+v, want no servers", servers.Data)
	}

	var list toolList
	c.json("GET", "/api/tools", "", http.StatusOK, &list)
	if i := slices.IndexFunc(list.Data, func(tl toolItem) bool { return tl.Name == "echo__echo" }); i < 0 || list.Data[i].Source != "mcp:echo" {
		t.Errorf("GET /api/tools = %+v, want echo__echo from mcp:echo", list.Data)
	}
	cb.json("GET", "/api/tools", "", http.StatusOK, &list)
	if _, ok := list.enabled()["echo__echo"]; ok {
		t.Error("workspace b lists echo__echo, a tool of workspace a's server")
	}

	// An agent of the workspace gets the server's tools.
	c.json("POST", "/api/agents", `{"name":"echoer","model":"fake/fake-model","tools":["mcp:echo"]}`, http.StatusCreated, nil)
	chat := `{"model":"echoer","messages":[{"role":"user","content":"hi"}]}`
	fake.Push(llmtest.Turn{Text: "one"})
	c.json("POST", "/v1/chat/completions", chat, http.StatusOK, nil)
	if got := offeredTools(t, fake); !slices.Equal(got, []string{"echo__echo"}) {
		t.Errorf("agent is offered %v, want echo__echo", got)
	}
	// Workspace b cannot name it.
	if resp, body := cb.do("POST", "/api/agents", `{"name":"echoer","model":"fake/fake-model","tools":["mcp:echo"]}`); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("workspace b creating an agent with mcp:echo = %d %s, want 400", resp.StatusCode, body)
	}

	// MCP tools can be turned off like any other.
	c.json("POST", "/api/tools/settings", `{"tools":{"echo__echo":false}}`, http.StatusOK, nil)
	fake.Push(llmtest.Turn{Text: "two"})
	c.json("POST", "/v1/chat/completions", chat, http.StatusOK, nil)
	if got := offeredTools(t, fake); len(got) != 0 {
		t.Errorf("after disabling echo__echo the agent is offered %v, want nothing", got)
	}
	c.json("POST", "/api/tools/settings", `{"tools":{"echo__echo":true}}`, http.StatusOK, nil)

	for _, tc := range []struct{ name, body, want string }{
		{"stdio", `{"name":"local","command":"npx","args":["server"]}`, "agentcraft.yaml"},
		{"duplicate", `{"name":"echo","url":"` + url + `"}`, "conflict"},
		{"bad url", `{"name":"x","url":"ftp://x"}`, "http://"},
		{"bad name", `{"name":"a__b","url":"` + url + `"}`, "server name"},
		{"no url", `{"name":"x"}`, "url is required"},
		{"bearer and oauth", `{"name":"x","url":"` + url + `","bearer":"t","oauth":{"client_id":"a","client_secret":"b"}}`, "not both"},
	} {
		resp, body := c.do("POST", "/api/mcp/servers", tc.body)
		if resp.StatusCode/100 != 4 || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: POST /api/mcp/servers = %d %s, want 4xx containing %q", tc.name, resp.StatusCode, body, tc.want)
		}
	}

	if resp, body := cb.do("DELETE", "/api/mcp/servers/echo", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("workspace b deleting a's server = %d %s, want 404", resp.StatusCode, body)
	}
	if resp, body := c.do("DELETE", "/api/mcp/servers/echo", ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE /api/mcp/servers/echo = %d %s, want 204", resp.StatusCode, body)
	}
	c.json("GET", "/api/mcp/servers", "", http.StatusOK, &servers)
	if len(servers.Data) != 0 {
		t.Errorf("after delete GET /api/mcp/servers = %+v, want none", servers.Data)
	}
	fake.Push(llmtest.Turn{Text: "three"})
	c.json("POST", "/v1/chat/completions", chat, http.StatusOK, nil)
	if got := offeredTools(t, fake); len(got) != 0 {
		t.Errorf("after deleting the server the agent is offered %v, want nothing", got)
	}
}
