package mcpserver_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/server/mcpserver"
)

// tsSDKDir installs the official MCP TypeScript SDK once per machine into
// the user cache (outside the repository) and returns the directory whose
// node_modules holds it. CI runs the same command:
//
//	npm install --prefix "$HOME/.cache/agentcraft-npm-sdk" @modelcontextprotocol/sdk
func tsSDKDir(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the TypeScript SDK acceptance test needs node and npm")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no user cache directory for the npm install: %v", err)
	}
	dir := filepath.Join(cache, "agentcraft-npm-sdk")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err == nil {
		return dir
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed: the TypeScript SDK acceptance test needs node and npm")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "@modelcontextprotocol/sdk").CombinedOutput()
	if err != nil {
		t.Skipf("npm install @modelcontextprotocol/sdk failed (no registry?): %v\n%s", err, out)
	}
	return dir
}

// tsClient is the acceptance client: it fetches a client-credentials
// token, connects with the SDK's StreamableHTTPClientTransport, lists the
// tools and calls one, then tries without a token and with a token lacking
// the tool's scope, and prints what happened as JSON.
const tsClient = `
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [base, id, secret, narrowID, narrowSecret] = process.argv.slice(2);
const out = {};

async function token(cid, csecret) {
  const r = await fetch(base + "/oauth/token", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded",
               "Authorization": "Basic " + Buffer.from(cid + ":" + csecret).toString("base64") },
    body: "grant_type=client_credentials",
  });
  return (await r.json()).access_token;
}

async function connect(tok) {
  const headers = tok ? { Authorization: "Bearer " + tok } : {};
  const transport = new StreamableHTTPClientTransport(new URL(base + "/mcp"), { requestInit: { headers } });
  const client = new Client({ name: "ts-acceptance", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

const client = await connect(await token(id, secret));
out.protocolVersion = client.transport.protocolVersion ?? null;
out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
const res = await client.callTool({ name: "agent_helper", arguments: { message: "hi" } });
out.call = res.content.map((c) => c.text).join("");
out.isError = !!res.isError;
await client.close();

const noToken = await fetch(base + "/mcp", {
  method: "POST",
  headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
});
out.noTokenStatus = noToken.status;
out.noTokenChallenge = noToken.headers.get("www-authenticate");
try {
  await connect(undefined);
  out.sdkNoToken = "connected";
} catch (e) {
  out.sdkNoToken = String(e.code ?? e.message);
}

const narrow = await connect(await token(narrowID, narrowSecret));
out.narrowTools = (await narrow.listTools()).tools.map((t) => t.name);
try {
  await narrow.callTool({ name: "docsearch", arguments: { query: "x" } });
  out.narrowCall = "allowed";
} catch (e) {
  out.narrowCall = String(e.code ?? "") + " " + String(e.message);
}
console.log(JSON.stringify(out));
process.exit(0);
`

func TestMCPTypeScriptSDKAcceptance(t *testing.T) {
	t.Parallel()
	sdk := tsSDKDir(t)
	e := newMCPEnv(t, mcpserver.Options{})
	id, secret := e.newClient(t, "docsearch/read", "docsearch/search", "agents/*")
	narrowID, narrowSecret := e.newClient(t, "docsearch/read")
	e.fake.Push(llmtest.Turn{Text: "Hello from helper."})

	dir := t.TempDir()
	script := filepath.Join(dir, "client.mjs")
	if err := os.WriteFile(script, []byte(tsClient), 0o600); err != nil {
		t.Fatal(err)
	}
	// ES modules resolve packages from the script's directory upwards,
	// not from NODE_PATH: link the cached node_modules next to it.
	if err := os.Symlink(filepath.Join(sdk, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "node", script, e.url, id, secret, narrowID, narrowSecret)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("node client: %v\n%s\n%s", err, out, stderr)
	}
	var got struct {
		Tools            []string `json:"tools"`
		Call             string   `json:"call"`
		IsError          bool     `json:"isError"`
		NoTokenStatus    int      `json:"noTokenStatus"`
		NoTokenChallenge string   `json:"noTokenChallenge"`
		SDKNoToken       string   `json:"sdkNoToken"`
		NarrowTools      []string `json:"narrowTools"`
		NarrowCall       string   `json:"narrowCall"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node printed %s: %v", out, err)
	}
	t.Logf("TypeScript client: %s", out)
	if strings.Join(got.Tools, ",") != "agent_helper,docsearch" {
		t.Errorf("tools = %v, want agent_helper and docsearch", got.Tools)
	}
	if got.Call != "Hello from helper." || got.IsError {
		t.Errorf("callTool(agent_helper) = %q (error %v)", got.Call, got.IsError)
	}
	if got.NoTokenStatus != 401 || !strings.Contains(got.NoTokenChallenge, `resource_metadata="`+e.url+`/.well-known/oauth-protected-resource"`) {
		t.Errorf("no token: %d %q, want 401 with resource_metadata", got.NoTokenStatus, got.NoTokenChallenge)
	}
	if got.SDKNoToken == "connected" {
		t.Errorf("the SDK client connected without a token")
	}
	if strings.Join(got.NarrowTools, ",") != "docsearch" {
		t.Errorf("narrow token lists %v, want docsearch", got.NarrowTools)
	}
	if !strings.Contains(got.NarrowCall, "403") && !strings.Contains(got.NarrowCall, "insufficient_scope") {
		t.Errorf("call without docsearch/search = %q, want a 403 insufficient_scope", got.NarrowCall)
	}
}
