package a2aserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/a2a"
	"github.com/agentcraftlab/agentcraft/budget"
	"github.com/agentcraftlab/agentcraft/internal/npmtest"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

// a2aEnv is a server whose agent "helper" answers the scripted turns.
func a2aEnv(t *testing.T, turns ...llmtest.Turn) (*servertest.Env, servertest.Client) {
	t.Helper()
	fake := llmtest.NewOpenAI(t, turns...)
	env := servertest.New(t, &servertest.Options{Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)},
		Agents: []platform.AgentSpec{{Name: "helper", Model: "fake/m", Instructions: "Help.", MaxSteps: 3}}})
	return env, servertest.Client{T: t, Base: env.URL, Key: env.Key}
}

// rpcAnswer is a JSON-RPC response with its result or error.
type rpcAnswer struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestA2AServer: the A2A routes need the API key, serve the workspace's
// agents, and keep a workspace's tasks from every other workspace.
func TestA2AServer(t *testing.T) {
	env, c := a2aEnv(t, llmtest.Turn{Text: "Paris."})
	anon := servertest.Client{T: t, Base: env.URL}
	for _, p := range []string{"/a2a", "/a2a/helper/.well-known/agent-card.json"} {
		if resp, body := anon.Do("GET", p, ""); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without a key = %d %s, want 401", p, resp.StatusCode, body)
		}
	}
	if resp, body := anon.Do("POST", "/a2a/helper", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST /a2a/helper without a key = %d %s, want 401", resp.StatusCode, body)
	}

	var idx struct {
		Agents []struct{ Name, CardURL string }
	}
	c.JSON("GET", "/a2a", "", http.StatusOK, &idx)
	if len(idx.Agents) != 1 || idx.Agents[0].Name != "helper" || idx.Agents[0].CardURL != env.URL+"/a2a/helper/.well-known/agent-card.json" {
		t.Errorf("index = %+v", idx)
	}
	var card struct {
		Name                string
		SupportedInterfaces []struct{ URL, ProtocolVersion string }
		SecuritySchemes     map[string]any
	}
	c.JSON("GET", "/a2a/helper/.well-known/agent-card.json", "", http.StatusOK, &card)
	if card.Name != "helper" || len(card.SupportedInterfaces) != 2 || card.SupportedInterfaces[0].URL != env.URL+"/a2a/helper" || card.SecuritySchemes["bearer"] == nil {
		t.Errorf("card = %+v; want helper at %s/a2a/helper with the bearer scheme", card, env.URL)
	}

	// SendMessage through the Go client with the key.
	ac, err := a2a.NewClient(t.Context(), env.URL+"/a2a/helper", &a2a.ClientOptions{Token: env.Key})
	if err != nil {
		t.Fatal(err)
	}
	answer, taskID, err := ac.SendText(t.Context(), "Capital of France?")
	if err != nil || answer != "Paris." || taskID == "" {
		t.Fatalf("SendText = %q, %q, %v", answer, taskID, err)
	}
	if task, err := ac.GetTask(t.Context(), taskID); err != nil || task.Status.State != a2a.StateCompleted {
		t.Fatalf("GetTask with the key = %+v, %v", task, err)
	}

	// Another workspace, with an agent of the same name, cannot read it.
	other, err := env.Store.Workspaces().Create(t.Context(), store.Workspace{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	oc := servertest.Client{T: t, Base: env.URL, Key: servertest.CreateKey(t, env.Store, other.ID)}
	oc.JSON("POST", "/api/agents", `{"name":"helper","model":"fake/m","instructions":"Other."}`, http.StatusCreated, nil)
	for _, method := range []string{"GetTask", "tasks/get", "CancelTask"} {
		var out rpcAnswer
		oc.JSON("POST", "/a2a/helper", fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{"id":%q}}`, method, taskID), http.StatusOK, &out)
		if out.Error == nil || out.Error.Code != a2a.CodeTaskNotFound || len(out.Result) != 0 {
			t.Errorf("%s from another workspace = %+v %s, want task not found (%d)", method, out.Error, out.Result, a2a.CodeTaskNotFound)
		}
	}
	// The task is still there for its own workspace.
	var own rpcAnswer
	c.JSON("POST", "/a2a/helper", fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":%q}}`, taskID), http.StatusOK, &own)
	if own.Error != nil || !strings.Contains(string(own.Result), "TASK_STATE_COMPLETED") {
		t.Errorf("GetTask by its workspace = %+v %s", own.Error, own.Result)
	}
}

// jsA2AClient calls the agent at argv[2] with the API key argv[3] through
// the @a2a-js/sdk 1.x client, once over A2A 1.0 and once over its 0.3
// compatibility transport, and prints what it got as JSON.
const jsA2AClient = `
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { taskStateToJSON } from '@a2a-js/sdk';
const [, , base, key] = process.argv;
let methods = []; // the JSON-RPC methods sent, to show which protocol version was spoken
const fetchImpl = (input, init = {}) => {
  if (typeof init.body === 'string') methods.push(JSON.parse(init.body).method);
  const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
  headers.set('Authorization', 'Bearer ' + key);
  return fetch(input, { ...init, headers });
};
const compat = { legacyCompat: { enabled: true } };
const resolver = new DefaultAgentCardResolver({ fetchImpl, ...compat });
const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
  transports: [new JsonRpcTransportFactory({ fetchImpl, ...compat })],
  cardResolver: resolver,
}));
const text = (parts) => (parts ?? []).map(p => p.content?.$case === 'text' ? p.content.value : '').join('');
const message = (t) => ({ messageId: crypto.randomUUID(), role: 1 /* ROLE_USER */, parts: [{ content: { $case: 'text', value: t } }] });
const card = await resolver.resolve(base + '/.well-known/agent-card.json', '');
const out = {};
for (const version of ['1.0', '0.3']) {
  methods = [];
  const client = await factory.createFromAgentCard({ ...card, supportedInterfaces: card.supportedInterfaces.filter(i => i.protocolVersion === version) });
  const task = await client.sendMessage({ message: message('Question ' + version) });
  const send = { taskId: task.id, state: taskStateToJSON(task.status?.state), text: (task.artifacts ?? []).map(a => text(a.parts)).join('') };
  const stream = { events: [], text: '', taskId: '' };
  for await (const ev of client.sendMessageStream({ message: message('Stream ' + version) })) {
    const { $case, value } = ev.payload ?? {};
    stream.events.push($case === 'statusUpdate' ? 'statusUpdate:' + taskStateToJSON(value.status?.state) : $case);
    if ($case === 'task') stream.taskId = value.id;
    if ($case === 'artifactUpdate') stream.text += text(value.artifact?.parts);
  }
  out[version] = { send, stream, methods };
}
console.log(JSON.stringify(out));
`

// TestA2AJSClient: the @a2a-js/sdk 1.3.0 client, in 1.0 and in its 0.3
// compatibility mode, sends and streams messages to an agent of this
// server, authenticated with the API key.
func TestA2AJSClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Node.js")
	}
	dir := npmtest.A2ASDK(t, "1.3.0")
	env, _ := a2aEnv(t,
		llmtest.Turn{Text: "Answer one."}, llmtest.Turn{Chunks: []string{"Streamed ", "one."}},
		llmtest.Turn{Text: "Answer two."}, llmtest.Turn{Chunks: []string{"Streamed ", "two."}})
	raw := npmtest.Run(t, dir, jsA2AClient, env.URL+"/a2a/helper", env.Key)
	type result struct {
		Send   struct{ TaskID, State, Text string }
		Stream struct {
			Events       []string
			Text, TaskID string
		}
		Methods []string
	}
	var out map[string]result
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("script output %s: %v", raw, err)
	}
	ac, err := a2a.NewClient(t.Context(), env.URL+"/a2a/helper", &a2a.ClientOptions{Token: env.Key})
	if err != nil {
		t.Fatal(err)
	}
	for i, version := range []string{"1.0", "0.3"} {
		r, ok := out[version]
		if !ok {
			t.Fatalf("no result for %s in %s", version, raw)
		}
		wantSend, wantStream := []string{"Answer one.", "Answer two."}[i], []string{"Streamed one.", "Streamed two."}[i]
		if want := []string{"SendMessage,SendStreamingMessage", "message/send,message/stream"}[i]; strings.Join(r.Methods, ",") != want {
			t.Errorf("%s client sent %v, want %s", version, r.Methods, want)
		}
		if r.Send.State != "TASK_STATE_COMPLETED" || r.Send.Text != wantSend || r.Send.TaskID == "" {
			t.Errorf("%s sendMessage = %+v, want a completed task answering %q", version, r.Send, wantSend)
		}
		ev := r.Stream.Events
		if r.Stream.Text != wantStream || len(ev) < 4 || ev[0] != "task" || ev[len(ev)-1] != "statusUpdate:TASK_STATE_COMPLETED" {
			t.Errorf("%s sendMessageStream = %+v, want the task, its chunks %q and completed", version, r.Stream, wantStream)
		}
		// The tasks the JS client started are this workspace's.
		for _, id := range []string{r.Send.TaskID, r.Stream.TaskID} {
			if task, err := ac.GetTask(t.Context(), id); err != nil || task.Status.State != a2a.StateCompleted {
				t.Errorf("%s: GetTask(%q) = %+v, %v", version, id, task, err)
			}
		}
	}
}

// TestA2APersonalMemory: an A2A task runs for the person its API key acts
// for. Two people's keys send the same message/send to a memory-enabled
// agent whose model calls recall; the tool result the model receives holds
// the caller's own personal memory and never the other person's.
func TestA2APersonalMemory(t *testing.T) {
	t.Parallel()
	fake := llmtest.NewOpenAI(t)
	env := servertest.New(t, &servertest.Options{Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)}, Memory: true,
		Agents: []platform.AgentSpec{{Name: "rememberer", Model: "fake/m", Memory: &store.AgentMemory{Enabled: true}}}})
	a := servertest.NewPerson(t, env.Store, env.Workspace.ID, "a@example.com")
	b := servertest.NewPerson(t, env.Store, env.Workspace.ID, "b@example.com")
	ac := servertest.Client{T: t, Base: env.URL, Key: a.Key}
	bc := servertest.Client{T: t, Base: env.URL, Key: b.Key}
	ac.JSON("POST", "/api/memories", `{"text":"A's secret project is Bluebird"}`, http.StatusCreated, nil)
	bc.JSON("POST", "/api/memories", `{"text":"B's secret project is Redwood"}`, http.StatusCreated, nil)

	recall := llm.ToolCall{ID: "call_recall", Name: "recall", Arguments: `{"query":"secret project"}`}
	send := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user",` +
		`"parts":[{"kind":"text","text":"What is my secret project?"}]}}}`
	for _, tc := range []struct {
		name      string
		c         servertest.Client
		own, leak string
	}{{"A", ac, "Bluebird", "Redwood"}, {"B", bc, "Redwood", "Bluebird"}} {
		result := servertest.ScriptToolCall(t, fake, recall, "Your project is secret.")
		var out rpcAnswer
		tc.c.JSON("POST", "/a2a/rememberer", send, http.StatusOK, &out)
		if out.Error != nil || !strings.Contains(string(out.Result), "Your project is secret.") {
			t.Fatalf("%s: message/send = %+v %s, want the completed task", tc.name, out.Error, out.Result)
		}
		if got := result(); !strings.Contains(got, tc.own) || strings.Contains(got, tc.leak) {
			t.Errorf("%s's recall over A2A showed the model %s; want %s and never %s", tc.name, got, tc.own, tc.leak)
		}
	}
}

// TestA2ABudgetRefusesRunsNotCards: a workspace that has spent its monthly
// budget still reads its agents' cards and its tasks — describing costs
// nothing — while every message, 1.0 or 0.3, streaming or not, is refused
// with 429 naming the budget before any model is called.
func TestA2ABudgetRefusesRunsNotCards(t *testing.T) {
	fake := llmtest.NewOpenAI(t, llmtest.Turn{Text: "Paris.", Usage: llm.Usage{InputTokens: 150, OutputTokens: 50}})
	env := servertest.New(t, &servertest.Options{Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)},
		Agents: []platform.AgentSpec{{Name: "helper", Model: "fake/m", Instructions: "Help.", MaxSteps: 3}},
		Budget: &budget.Options{Default: budget.Limits{Tokens: 100}}})
	c := servertest.Client{T: t, Base: env.URL, Key: env.Key}

	ac, err := a2a.NewClient(t.Context(), env.URL+"/a2a/helper", &a2a.ClientOptions{Token: env.Key})
	if err != nil {
		t.Fatal(err)
	}
	answer, taskID, err := ac.SendText(t.Context(), "Capital of France?")
	if err != nil || answer != "Paris." {
		t.Fatalf("SendText within the budget = %q, %v", answer, err)
	}
	// 200 of 100 tokens are spent now.

	for _, p := range []string{"/a2a/helper/.well-known/agent-card.json", "/a2a/helper/.well-known/agent.json", "/a2a/helper"} {
		var card struct{ Name, Description string }
		c.JSON("GET", p, "", http.StatusOK, &card)
		if card.Name != "helper" || !strings.Contains(card.Description, "fake/m") {
			t.Errorf("GET %s over budget: card = %+v; want helper's card", p, card)
		}
	}
	if resp, body := c.Do("GET", "/a2a/nobody/.well-known/agent-card.json", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("card of an unknown agent over budget = %d %s; want 404", resp.StatusCode, body)
	}
	var got rpcAnswer
	c.JSON("POST", "/a2a/helper", fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":%q}}`, taskID), http.StatusOK, &got)
	if got.Error != nil || !strings.Contains(string(got.Result), "Paris.") {
		t.Errorf("GetTask over budget = %+v %s; want the finished task", got.Error, got.Result)
	}

	before := len(fake.Requests())
	msg10 := `{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"Capital of Italy?"}]}`
	msg03 := `{"kind":"message","messageId":"m2","role":"user","parts":[{"kind":"text","text":"Capital of Italy?"}]}`
	for method, message := range map[string]string{"SendMessage": msg10, "SendStreamingMessage": msg10, "message/send": msg03, "message/stream": msg03} {
		resp, body := c.Do("POST", "/a2a/helper", fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":%q,"params":{"message":%s}}`, method, message))
		var out rpcAnswer
		_ = json.Unmarshal(body, &out)
		if resp.StatusCode != http.StatusTooManyRequests || out.Error == nil || !strings.Contains(out.Error.Message, "monthly token budget of 100 tokens") {
			t.Errorf("%s over budget = %d %s; want 429 naming the monthly token budget", method, resp.StatusCode, body)
		}
	}
	if n := len(fake.Requests()) - before; n != 0 {
		t.Errorf("over budget, the provider saw %d requests; want none", n)
	}
}
