package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpHelperEnv makes the test binary an MCP server on stdio (see
// TestMCPHelperProcess).
const mcpHelperEnv = "AGENTCRAFT_TEST_MCP_STDIO_SERVER"

func newCLITestMCPServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "cli-test", Version: "1"}, nil)
	type echoIn struct {
		Message string `json:"message"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echo a message.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Message}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "fail", Description: "Always fails."},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no luck"}}}, nil, nil
		})
	return srv
}

// TestMCPHelperProcess is not a test: run by the tests below as a child
// process with mcpHelperEnv set, it serves newCLITestMCPServer on stdin
// and stdout, as the helper processes of package os/exec do.
func TestMCPHelperProcess(t *testing.T) {
	if os.Getenv(mcpHelperEnv) != "1" {
		t.Skip("helper process for the mcp --stdio tests")
	}
	err := newCLITestMCPServer().Run(context.Background(), &mcp.StdioTransport{})
	if err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// stdioCommand is the --stdio command line that runs the helper.
func stdioCommand(t *testing.T) string {
	t.Setenv(mcpHelperEnv, "1")
	return "'" + os.Args[0] + "' -test.run '^TestMCPHelperProcess$'"
}

func TestMCPToolsCommand(t *testing.T) {
	srv := newCLITestMCPServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0k" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)

	for _, tc := range []struct {
		name string
		args []string
	}{
		{"http", []string{"mcp", "tools", hs.URL, "--bearer", "t0k"}},
		{"stdio", []string{"mcp", "tools", "--stdio", stdioCommand(t)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Capability  string          `json:"capability"`
				InputSchema json.RawMessage `json:"input_schema"`
			}
			if err := json.Unmarshal([]byte(out), &tools); err != nil {
				t.Fatalf("stdout is not a JSON list of tools: %v\n%s", err, out)
			}
			var got []string
			for _, tl := range tools {
				got = append(got, tl.Name+":"+tl.Capability)
			}
			if diff := cmp.Diff([]string{"echo:low", "fail:medium"}, got); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if !strings.Contains(string(tools[0].InputSchema), `"message"`) {
				t.Errorf("echo input_schema = %s", tools[0].InputSchema)
			}
		})
	}

	code, out, errOut := run(t, "mcp", "tools", hs.URL, "--bearer", "wrong")
	if code == 0 || out != "" || !strings.Contains(errOut, "connect to MCP server "+hs.URL) {
		t.Errorf("wrong token: exit %d, stdout %q, stderr %q; want a connection error", code, out, errOut)
	}
}

func TestMCPCallCommand(t *testing.T) {
	cmd := stdioCommand(t)
	code, out, errOut := run(t, "mcp", "call", "--stdio", cmd, "echo", `{"message":"hi"}`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Content) != 1 || res.Content[0].Text != "echo: hi" || res.IsError {
		t.Errorf("stdout = %s (%v), want the echo result", out, err)
	}

	code, out, errOut = run(t, "mcp", "call", "--stdio", cmd, "fail")
	if code == 0 || !strings.Contains(out, "no luck") || !strings.Contains(errOut, "tool fail reported an error") {
		t.Errorf("failing tool: exit %d, stdout %q, stderr %q; want the result printed and a non-zero exit", code, out, errOut)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "call", "--stdio", cmd, "echo", `{"message":`}, "not a JSON object"},
		{[]string{"mcp", "call", "--stdio", cmd}, "give the tool name"},
		{[]string{"mcp", "call"}, "give the server's URL"},
		{[]string{"mcp", "call", "ftp://x", "echo"}, "http:// or https://"},
		{[]string{"mcp", "call", "http://127.0.0.1:1/mcp", "echo", "--client-id", "x"}, "--client-secret"},
		{[]string{"mcp", "call", "--stdio", "'unterminated", "echo"}, "unterminated single quote"},
		{[]string{"mcp", "call", "--stdio", "/nonexistent/mcp-server", "echo"}, "connect to MCP server"},
		{[]string{"mcp", "call", "http://127.0.0.1:1/mcp", "echo", "--timeout", "2s"}, "connect to MCP server http://127.0.0.1:1/mcp"},
	} {
		code, out, errOut := run(t, tc.args...)
		if code == 0 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want an error mentioning %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

func TestMCPSplitCommand(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"npx -y @modelcontextprotocol/server-everything", []string{"npx", "-y", "@modelcontextprotocol/server-everything"}},
		{`node '/path with space/index.js' "a \"b\"" c\ d`, []string{"node", "/path with space/index.js", `a "b"`, "c d"}},
		{"  ", nil},
	} {
		got, err := splitCommand(tc.in)
		if err != nil || !cmp.Equal(tc.want, got) {
			t.Errorf("splitCommand(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
