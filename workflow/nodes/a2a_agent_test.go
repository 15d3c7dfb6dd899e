package nodes_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/a2a"
	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/internal/egress"
	"github.com/agentcraftlab/agentcraft/internal/npmtest"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/llm/openai"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/workflowtest"
)

// a2aAgents publishes one agent answering with the scripted turns.
type a2aAgents struct{ a *agent.Agent }

func (s a2aAgents) List(context.Context) ([]a2a.AgentInfo, error) {
	return []a2a.AgentInfo{{Name: "remote"}}, nil
}

func (s a2aAgents) Get(_ context.Context, name string) (*agent.Agent, a2a.AgentInfo, error) {
	if name != "remote" {
		return nil, a2a.AgentInfo{}, a2a.ErrUnknownAgent
	}
	return s.a, a2a.AgentInfo{Name: name}, nil
}

func (s a2aAgents) Describe(ctx context.Context, name string) (a2a.AgentInfo, error) {
	_, info, err := s.Get(ctx, name)
	return info, err
}

func (s a2aAgents) Scope(context.Context) string { return "" }

func a2aServer(t *testing.T, turns ...llmtest.Turn) string {
	t.Helper()
	fake := llmtest.NewOpenAI(t, turns...)
	m, err := openai.New(&openai.Options{Name: "fake", BaseURL: fake.URL + "/v1", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := a2a.NewServer(&a2a.ServerOptions{Agents: a2aAgents{&agent.Agent{Name: "remote", Model: m, ModelID: "m"}}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.Close(); s.Stop() })
	return hs.URL + "/a2a/remote"
}

func a2aFlow(config string) string {
	return `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"r","type":"a2a-agent","config":` + config + `},{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"r"},{"id":"e2","source":"r","target":"end"}]}`
}

func egressClient(t *testing.T, allow ...string) *http.Client {
	t.Helper()
	g, err := (&egress.Policy{Allow: allow}).Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g.Client()
}

func runA2A(t *testing.T, hc *http.Client, config string, input any) (workflow.Outcome, *workflowtest.Recorder) {
	t.Helper()
	e := workflowtest.Engine(t, workflow.Services{HTTP: hc})
	rec := &workflowtest.Recorder{}
	out := e.Run(t.Context(), workflowtest.Parse(t, e, a2aFlow(config)), workflow.Request{RunID: "r1", Input: input, Emit: rec.Emit})
	return out, rec
}

// taskIDOf returns the remote task id the node reported in its events.
func taskIDOf(rec *workflowtest.Recorder) string {
	for _, ev := range rec.Events {
		if d, ok := ev.Data.(map[string]any); ok && ev.NodeID == "r" {
			if id, ok := d["task_id"].(string); ok && id != "" {
				return id
			}
		}
	}
	return ""
}

func TestA2ANode(t *testing.T) {
	for _, tc := range []struct{ name, config string }{
		{"send", `{"url":%q,"message":"Question: {{input}}"}`},
		{"streaming", `{"url":%q,"message":"Question: {{input}}","streaming":true}`},
		{"send_0.3", `{"url":%q,"message":"Question: {{input}}","protocol_version":"0.3"}`},
		{"streaming_0.3", `{"url":%q,"message":"Question: {{input}}","streaming":true,"protocol_version":"0.3"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := a2aServer(t, llmtest.Turn{Chunks: []string{"It is ", "sunny."}, Check: func(body map[string]any) {
				if !strings.Contains(fmt.Sprint(body["messages"]), "Question: weather?") {
					t.Errorf("the remote agent got %v, want the rendered message", body["messages"])
				}
			}})
			out, rec := runA2A(t, egressClient(t, "127.0.0.1"), fmt.Sprintf(tc.config, url), "weather?")
			if out.Status != workflow.StatusSucceeded || out.Output != "It is sunny." {
				t.Fatalf("outcome %+v", out)
			}
			if taskIDOf(rec) == "" {
				t.Errorf("no event names the remote task: %v", rec.Types("r"))
			}
		})
	}
	t.Run("egress_blocked", func(t *testing.T) {
		url := a2aServer(t)
		out, _ := runA2A(t, egressClient(t), fmt.Sprintf(`{"url":%q}`, url), "hi")
		if out.Status != workflow.StatusFailed || !strings.Contains(out.Error, "egress allow list") {
			t.Fatalf("outcome %+v", out)
		}
	})
	t.Run("no_card", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		defer srv.Close()
		out, _ := runA2A(t, egressClient(t, "127.0.0.1"), fmt.Sprintf(`{"url":%q}`, srv.URL), "hi")
		if out.Status != workflow.StatusFailed || !strings.Contains(out.Error, "agent.json") {
			t.Fatalf("outcome %+v; want the failed card paths named", out)
		}
	})
}

// jsEchoServer1 is an echo agent on @a2a-js/sdk 1.x; compat enables its
// 0.3 compatibility layer (card and JSON-RPC).
const jsEchoServer1 = `
import express from 'express';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
const port = Number(process.argv[2]);
const url = 'http://127.0.0.1:' + port + '/rpc';
const card = {
  name: 'JS Echo', description: 'Echoes text.', version: '1.0.0',
  supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }, { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' }],
  capabilities: { streaming: true, pushNotifications: false },
  defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'],
  skills: [{ id: 'echo', name: 'Echo', description: 'Echoes', tags: ['echo'] }],
};
class Echo {
  async execute(ctx, bus) {
    const text = ctx.userMessage.parts.map(p => p.content?.$case === 'text' ? p.content.value : '').join('');
    bus.publish(AgentEvent.message({ messageId: crypto.randomUUID(), role: 2 /* ROLE_AGENT */,
      parts: [{ content: { $case: 'text', value: 'echo: ' + text } }], contextId: ctx.contextId }));
    bus.finished();
  }
  async cancelTask() {}
}
const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new Echo());
const app = express();
const compat = { legacyCompat: { enabled: true } };
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler, ...compat }));
app.use('/rpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, ...compat }));
app.listen(port, '127.0.0.1', () => console.log('listening http://127.0.0.1:' + port));
`

// jsEchoServer03 is the same agent on @a2a-js/sdk 0.3, a pure 0.3 server.
const jsEchoServer03 = `
import express from 'express';
import { DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { A2AExpressApp } from '@a2a-js/sdk/server/express';
const port = Number(process.argv[2]);
const card = {
  name: 'JS Echo 0.3', description: 'Echoes text.', protocolVersion: '0.3.0', version: '1.0.0',
  url: 'http://127.0.0.1:' + port + '/', preferredTransport: 'JSONRPC',
  capabilities: { streaming: true }, defaultInputModes: ['text'], defaultOutputModes: ['text'],
  skills: [{ id: 'echo', name: 'Echo', description: 'Echoes', tags: ['echo'] }],
};
class Echo {
  async execute(ctx, bus) {
    const text = ctx.userMessage.parts.map(p => p.text ?? '').join('');
    bus.publish({ kind: 'task', id: ctx.taskId, contextId: ctx.contextId, status: { state: 'submitted' }, history: [ctx.userMessage] });
    bus.publish({ kind: 'artifact-update', taskId: ctx.taskId, contextId: ctx.contextId, artifact: { artifactId: 'a1', parts: [{ kind: 'text', text: 'echo: ' + text }] } });
    bus.publish({ kind: 'status-update', taskId: ctx.taskId, contextId: ctx.contextId, status: { state: 'completed' }, final: true });
    bus.finished();
  }
  cancelTask = async () => {};
}
const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new Echo());
const app = new A2AExpressApp(handler).setupRoutes(express());
app.listen(port, '127.0.0.1', () => console.log('listening http://127.0.0.1:' + port));
`

// TestA2ANodeJSInterop calls echo agents built with @a2a-js/sdk from the
// a2a-agent node: 1.x in 1.0 and in its 0.3 compatibility mode, and a 0.3
// SDK server found by the card's protocolVersion.
func TestA2ANodeJSInterop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Node.js servers")
	}
	v1 := npmtest.A2ASDK(t, "1.3.0")
	v03 := npmtest.A2ASDK(t, "0.3.14")
	url1 := npmtest.Start(t, v1, jsEchoServer1)
	url03 := npmtest.Start(t, v03, jsEchoServer03)
	for _, tc := range []struct{ name, url, extra, version string }{
		{"sdk1_v1.0", url1, ``, "1.0"},
		{"sdk1_v1.0_streaming", url1, `,"streaming":true`, "1.0"},
		{"sdk1_compat_0.3", url1, `,"protocol_version":"0.3"`, "0.3"},
		{"sdk1_compat_0.3_streaming", url1, `,"protocol_version":"0.3","streaming":true`, "0.3"},
		{"sdk0.3", url03, ``, "0.3"},
		{"sdk0.3_streaming", url03, `,"streaming":true`, "0.3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, rec := runA2A(t, egressClient(t, "127.0.0.1"), fmt.Sprintf(`{"url":%q%s}`, tc.url, tc.extra), "ping")
			if out.Status != workflow.StatusSucceeded || out.Output != "echo: ping" {
				t.Fatalf("outcome %+v", out)
			}
			for _, ev := range rec.Events {
				if d, ok := ev.Data.(map[string]any); ok && d["protocol_version"] != nil && d["protocol_version"] != tc.version {
					t.Errorf("spoke %v, want %s", d["protocol_version"], tc.version)
				}
			}
		})
	}
}
