package servertest_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
)

// TestMCPOption checks that Options.MCP serves /mcp as `agentcraft serve`
// does: a client's token from /oauth/token lists the agent's tool, a call
// runs the agent on the server's providers, a request without a token is
// refused, and without the option /mcp is not there.
func TestMCPOption(t *testing.T) {
	fake := llmtest.NewOpenAI(t)
	env := servertest.New(t, &servertest.Options{MCP: true, Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)},
		Agents: []platform.AgentSpec{{Name: "helper", Model: "fake/m", Instructions: "Help."}}})

	id, secret := env.OAuthClient(t, "agents/*")
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}}
	resp, err := http.Post(env.URL+"/oauth/token", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	err = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || tok.AccessToken == "" {
		t.Fatalf("POST /oauth/token = %d (%v), want a token", resp.StatusCode, err)
	}

	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	s, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: env.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer(tok.AccessToken)}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect to /mcp: %v", err)
	}
	defer s.Close()
	list, err := s.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "agent_helper") {
		t.Errorf("tools = %v, want agent_helper", names)
	}
	fake.Push(llmtest.Turn{Text: "Hello over MCP."})
	res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "agent_helper", Arguments: map[string]any{"message": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if text, ok := res.Content[0].(*mcp.TextContent); res.IsError || !ok || text.Text != "Hello over MCP." {
		t.Errorf("agent_helper = %+v, want the fake's answer", res.Content)
	}

	anon := servertest.Client{T: t, Base: env.URL}
	if r, body := anon.Do("POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("/mcp without a token = %d %s, want 401", r.StatusCode, body)
	}
	// An API key is no MCP token.
	keyed := servertest.Client{T: t, Base: env.URL, Key: env.Key}
	if r, body := keyed.Do("POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("/mcp with an API key = %d %s, want 401", r.StatusCode, body)
	}

	plain := servertest.New(t, nil)
	if r, body := (servertest.Client{T: t, Base: plain.URL, Key: plain.Key}).Do("POST", "/mcp", `{}`); r.StatusCode != http.StatusNotFound {
		t.Errorf("/mcp without Options.MCP = %d %s, want 404", r.StatusCode, body)
	}
}

type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}
