package aguiserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/internal/npmtest"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
)

// The CopilotKit runtime the relay test runs, with the @ag-ui/client it
// is built on (@copilotkit/runtime 1.75.0 depends on exactly 0.0.59).
const (
	copilotRuntimeVersion = "1.75.0"
	copilotAGUIVersion    = "0.0.59"
)

// copilotScript is a CopilotKit runtime (the v2 API, served by Node's
// http module) with two AG-UI agents: "helper", an HttpAgent pointing at
// AgentCraft's /agui/helper with the workspace's API key, and "locked",
// the same endpoint without a key. The AG-UI URL and key are substituted
// for AGUI_URL and AGUI_KEY.
const copilotScript = `
import { createServer } from "node:http";
import { CopilotRuntime, InMemoryAgentRunner } from "@copilotkit/runtime/v2";
import { createCopilotNodeListener } from "@copilotkit/runtime/v2/node";
import { HttpAgent } from "@ag-ui/client";

const url = AGUI_URL, key = AGUI_KEY;
const runtime = new CopilotRuntime({
  agents: {
    helper: new HttpAgent({ url: url + "/agui/helper", headers: { Authorization: "Bearer " + key } }),
    locked: new HttpAgent({ url: url + "/agui/helper" }),
  },
  runner: new InMemoryAgentRunner(),
});
const listener = createCopilotNodeListener({ runtime, basePath: "/api/copilotkit", activateChannels: false });
const server = createServer(listener);
server.listen(Number(process.argv[2]), "127.0.0.1", () => console.log("listening http://127.0.0.1:" + process.argv[2] + "/api/copilotkit"));
`

// copilotEvent is an AG-UI event as the CopilotKit runtime streams it.
type copilotEvent struct {
	Type    string `json:"type"`
	Delta   string `json:"delta"`
	Message string `json:"message"`
}

// TestCopilotKitRelay: a CopilotKit runtime configured with an HttpAgent
// pointing at /agui/{agent} relays a chat end to end. The test is the
// CopilotKit client: it asks the runtime's /info for its agents and posts
// the chat to /agent/{name}/run, the route @copilotkit/core's runtime
// agent uses, and the fake model's answer must come back through
// CopilotKit's event stream. The agent without the API key shows the
// relay really goes through AgentCraft's endpoint: its run fails.
func TestCopilotKitRelay(t *testing.T) {
	const answer = "CopilotKit relayed this answer."
	fake := llmtest.NewOpenAI(t, llmtest.Turn{Text: answer})
	env := servertest.New(t, &servertest.Options{
		Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)},
		Agents:    []platform.AgentSpec{{Name: "helper", Model: "fake/m", Instructions: "Help."}},
	})
	dir := npmtest.Packages(t, "copilotkit", "@copilotkit/runtime@"+copilotRuntimeVersion, "@ag-ui/client@"+copilotAGUIVersion)
	// No telemetry from the runtime: the test has no network.
	t.Setenv("COPILOTKIT_TELEMETRY_DISABLED", "true")
	t.Setenv("DO_NOT_TRACK", "1")
	t.Setenv("SCARF_ANALYTICS", "false")
	urlJSON, _ := json.Marshal(env.URL)
	keyJSON, _ := json.Marshal(env.Key)
	script := strings.NewReplacer("AGUI_URL", string(urlJSON), "AGUI_KEY", string(keyJSON)).Replace(copilotScript)
	base := npmtest.Start(t, dir, script)

	var info struct {
		Agents map[string]json.RawMessage `json:"agents"`
	}
	resp, body := (servertest.Client{T: t, Base: base}).Do("GET", "/info", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /info = %d %s", resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, &info); err != nil {
		t.Fatalf("GET /info: %s: %v", body, err)
	}
	if _, ok := info.Agents["helper"]; !ok {
		t.Fatalf("the runtime's /info lists agents %s; want helper", body)
	}

	events := copilotRun(t, base, "helper", "t-copilot")
	var got strings.Builder
	var types []string
	for _, ev := range events {
		types = append(types, ev.Type)
		if ev.Type == "TEXT_MESSAGE_CONTENT" {
			got.WriteString(ev.Delta)
		}
		if ev.Type == "RUN_ERROR" {
			t.Errorf("the relayed run failed: %s", ev.Message)
		}
	}
	t.Logf("events through CopilotKit: %s", strings.Join(types, " "))
	if got.String() != answer {
		t.Errorf("the answer through CopilotKit reads %q; want the fake model's %q", got.String(), answer)
	}
	if len(types) == 0 || types[0] != "RUN_STARTED" || types[len(types)-1] != "RUN_FINISHED" {
		t.Errorf("the relayed stream is %v; want RUN_STARTED … RUN_FINISHED", types)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("the model was called %d times; want once, for the relayed chat", n)
	}

	// Without the key AgentCraft refuses the run, and CopilotKit says so.
	var refused bool
	for _, ev := range copilotRun(t, base, "locked", "t-locked") {
		if ev.Type == "TEXT_MESSAGE_CONTENT" {
			t.Errorf("the agent without an API key streamed %q", ev.Delta)
		}
		if ev.Type == "RUN_ERROR" {
			refused = true
			t.Logf("without a key: RUN_ERROR %s", ev.Message)
		}
	}
	if !refused {
		t.Error("the agent without an API key ended without RUN_ERROR")
	}
}

// copilotRun posts one user message to the runtime's run route of agent
// and returns the events of its stream.
func copilotRun(t *testing.T, base, agent, thread string) []copilotEvent {
	t.Helper()
	input := map[string]any{
		"threadId": thread, "runId": thread + "-run",
		"messages": []map[string]any{{"id": "u1", "role": "user", "content": "Hello through CopilotKit"}},
		"tools":    []any{}, "context": []any{}, "state": map[string]any{}, "forwardedProps": map[string]any{},
	}
	b, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	resp, body := (servertest.Client{T: t, Base: base}).Do("POST", "/agent/"+agent+"/run", string(b))
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("POST /agent/%s/run = %d %s %s; want a 200 event stream", agent, resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	var out []copilotEvent
	for line := range strings.SplitSeq(string(body), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev copilotEvent
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		out = append(out, ev)
	}
	return out
}
