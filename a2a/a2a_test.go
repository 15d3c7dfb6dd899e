package a2a_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/a2a"
	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/llm/openai"
)

// testAgents publishes fixed agents in one scope.
type testAgents map[string]*agent.Agent

func (a testAgents) List(context.Context) ([]a2a.AgentInfo, error) {
	var out []a2a.AgentInfo
	for n := range a {
		out = append(out, a2a.AgentInfo{Name: n})
	}
	return out, nil
}

func (a testAgents) Get(_ context.Context, name string) (*agent.Agent, a2a.AgentInfo, error) {
	ag, ok := a[name]
	if !ok {
		return nil, a2a.AgentInfo{}, fmt.Errorf("%w %q", a2a.ErrUnknownAgent, name)
	}
	return ag, a2a.AgentInfo{Name: name, Description: "test agent " + name}, nil
}

func (a testAgents) Describe(ctx context.Context, name string) (a2a.AgentInfo, error) {
	_, info, err := a.Get(ctx, name)
	return info, err
}

func (a testAgents) Scope(context.Context) string { return "ws" }

// fakeAgent is an agent whose model is the OpenAI fake answering turns.
func fakeAgent(t *testing.T, turns ...llmtest.Turn) *agent.Agent {
	t.Helper()
	fake := llmtest.NewOpenAI(t, turns...)
	m, err := openai.New(&openai.Options{Name: "fake", BaseURL: fake.URL + "/v1", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	return &agent.Agent{Name: "helper", Model: m, ModelID: "gpt-test"}
}

// blockingModel streams one word, then waits until its request is canceled.
// started closes when its request begins, canceled when it sees the cancel.
type blockingModel struct{ started, canceled chan struct{} }

func (m blockingModel) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	return llm.Collect(m.Stream(ctx, req))
}

func (m blockingModel) Stream(ctx context.Context, _ llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		close(m.started)
		if !yield(llm.Event{Type: llm.EventTextDelta, Text: "thinking"}, nil) {
			return
		}
		<-ctx.Done()
		close(m.canceled)
		yield(llm.Event{}, ctx.Err())
	}
}

func startServer(t *testing.T, agents testAgents) string {
	t.Helper()
	s, err := a2a.NewServer(&a2a.ServerOptions{Agents: agents, Bearer: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		hs.Close()
		s.Stop()
	})
	return hs.URL
}

func TestA2ASendMessageAndGetTask(t *testing.T) {
	for _, version := range []string{"", a2a.Version03} {
		t.Run("version="+version, func(t *testing.T) {
			url := startServer(t, testAgents{"helper": fakeAgent(t, llmtest.Turn{Text: "Paris is the capital."})})
			ctx := context.Background()
			c, err := a2a.NewClient(ctx, url+"/a2a/helper", &a2a.ClientOptions{Version: version})
			if err != nil {
				t.Fatal(err)
			}
			want := version
			if want == "" {
				want = a2a.Version10
			}
			if c.Version() != want {
				t.Errorf("Version() = %q, want %q", c.Version(), want)
			}
			if got := c.Card().Name; got != "helper" {
				t.Errorf("card name = %q", got)
			}
			answer, id, err := c.SendText(ctx, "What is the capital of France?")
			if err != nil {
				t.Fatal(err)
			}
			if answer != "Paris is the capital." || id == "" {
				t.Errorf("SendText = %q, %q", answer, id)
			}
			task, err := c.GetTask(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if task.Status.State != a2a.StateCompleted || a2a.TaskText(task) != "Paris is the capital." {
				t.Errorf("GetTask = %+v", task)
			}
			if len(task.History) != 2 || task.History[0].Role != a2a.RoleUser || task.History[1].Role != a2a.RoleAgent {
				t.Errorf("history = %+v, want the question and the answer", task.History)
			}
		})
	}
}

func TestA2AStreaming(t *testing.T) {
	for _, version := range []string{a2a.Version10, a2a.Version03} {
		t.Run(version, func(t *testing.T) {
			url := startServer(t, testAgents{"helper": fakeAgent(t, llmtest.Turn{Chunks: []string{"one ", "two ", "three"}})})
			ctx := context.Background()
			c, err := a2a.NewClient(ctx, url+"/a2a/helper/.well-known/agent-card.json", &a2a.ClientOptions{Version: version})
			if err != nil {
				t.Fatal(err)
			}
			var (
				kinds []string
				text  strings.Builder
				final a2a.TaskState
			)
			for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("count"))}) {
				if err != nil {
					t.Fatal(err)
				}
				switch ev := ev.(type) {
				case *a2a.Task:
					kinds = append(kinds, "task:"+string(ev.Status.State))
				case *a2a.TaskArtifactUpdateEvent:
					kinds = append(kinds, "artifact")
					text.WriteString(a2a.Text(ev.Artifact.Parts))
				case *a2a.TaskStatusUpdateEvent:
					kinds = append(kinds, "status:"+string(ev.Status.State))
					final = ev.Status.State
				}
			}
			if text.String() != "one two three" {
				t.Errorf("streamed text = %q", text.String())
			}
			if final != a2a.StateCompleted {
				t.Errorf("last state = %s, events %v", final, kinds)
			}
			if len(kinds) < 5 || kinds[0] != "task:TASK_STATE_SUBMITTED" || kinds[1] != "status:TASK_STATE_WORKING" {
				t.Errorf("events = %v, want the submitted task, working, artifact chunks, completed", kinds)
			}
		})
	}
}

func TestA2ACancelTask(t *testing.T) {
	m := blockingModel{started: make(chan struct{}), canceled: make(chan struct{})}
	url := startServer(t, testAgents{"slow": {Name: "slow", Model: m}})
	ctx := context.Background()
	c, err := a2a.NewClient(ctx, url+"/a2a/slow", nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("take your time")),
		Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	started, ok := r.(*a2a.Task)
	if err != nil || !ok {
		t.Fatalf("SendMessage = %+v, %v", r, err)
	}
	id := string(started.ID)
	// Cancel a model request in flight: a cancel that comes before the
	// agent reaches its model ends the task without any request at all.
	select {
	case <-m.started:
	case <-time.After(5 * time.Second):
		t.Fatal("the agent's model request did not start")
	}
	task, err := c.CancelTask(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if task.Status.State != a2a.StateCanceled {
		t.Errorf("CancelTask state = %s", task.Status.State)
	}
	select {
	case <-m.canceled:
	case <-time.After(5 * time.Second):
		t.Fatal("the agent's model request was not canceled")
	}
	got, err := c.GetTask(ctx, id)
	if err != nil || got.Status.State != a2a.StateCanceled {
		t.Errorf("GetTask after cancel = %+v, %v", got, err)
	}
	_, err = c.CancelTask(ctx, id)
	if a2a.ErrorCode(err) != a2a.CodeTaskNotCancelable {
		t.Errorf("second CancelTask error = %v, want code %d", err, a2a.CodeTaskNotCancelable)
	}
}

// TestA2ACardFallback serves only the pre-0.3 card path, with a 0.3 card.
func TestA2ACardFallback(t *testing.T) {
	url := startServer(t, testAgents{"helper": fakeAgent(t, llmtest.Turn{Text: "ok"})})
	var cardPaths []string
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		cardPaths = append(cardPaths, r.URL.Path)
		if r.URL.Path != "/old/.well-known/agent.json" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, `{"name":"old","description":"0.3 agent","url":%q,"protocolVersion":"0.3.0","version":"1","capabilities":{},"defaultInputModes":["text"],"defaultOutputModes":["text"],"skills":[]}`, url+"/a2a/helper")
	})
	cards := httptest.NewServer(mux)
	defer cards.Close()
	c, err := a2a.NewClient(context.Background(), cards.URL+"/old", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/old/.well-known/agent-card.json", "/old/.well-known/agent.json"}; strings.Join(cardPaths, ",") != strings.Join(want, ",") {
		t.Errorf("card requests = %v, want %v", cardPaths, want)
	}
	if c.Version() != a2a.Version03 {
		t.Errorf("Version() = %q, want 0.3 from the card", c.Version())
	}
	if answer, _, err := c.SendText(context.Background(), "hi"); err != nil || answer != "ok" {
		t.Errorf("SendText = %q, %v", answer, err)
	}
}

// TestA2AMethodNotFoundFallback talks to a server whose card claims 1.0 but
// which knows only the 0.3 method names.
func TestA2AMethodNotFoundFallback(t *testing.T) {
	s, err := a2a.NewServer(&a2a.ServerOptions{Agents: testAgents{"helper": fakeAgent(t, llmtest.Turn{Text: "fine"})}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	var methods []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			body, _ := readAll(r)
			_ = json.Unmarshal(body, &req)
			methods = append(methods, req.Method)
			if !strings.Contains(req.Method, "/") {
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, req.ID)
				return
			}
			r.Body = nopCloser{strings.NewReader(string(body))}
		}
		s.ServeHTTP(w, r)
	}))
	defer hs.Close()
	c, err := a2a.NewClient(context.Background(), hs.URL+"/a2a/helper", nil)
	if err != nil {
		t.Fatal(err)
	}
	answer, _, err := c.SendText(context.Background(), "hi")
	if err != nil || answer != "fine" {
		t.Fatalf("SendText = %q, %v", answer, err)
	}
	if c.Version() != a2a.Version03 || strings.Join(methods, ",") != "SendMessage,message/send" {
		t.Errorf("version %q after methods %v, want 0.3 after SendMessage,message/send", c.Version(), methods)
	}
}

func TestA2AErrors(t *testing.T) {
	url := startServer(t, testAgents{"helper": fakeAgent(t)})
	tests := []struct {
		name    string
		body    string
		header  string
		status  int
		code    int
		path    string
		message string
	}{
		{name: "parse error", body: `{not json`, code: a2a.CodeParseError},
		{name: "not JSON-RPC 2.0", body: `{"id":1,"method":"GetTask"}`, code: a2a.CodeInvalidRequest},
		{name: "unknown method", body: `{"jsonrpc":"2.0","id":1,"method":"tasks/rename","params":{}}`, code: a2a.CodeMethodNotFound},
		{name: "unknown 1.0 method", body: `{"jsonrpc":"2.0","id":1,"method":"RenameTask","params":{}}`, code: a2a.CodeMethodNotFound},
		{name: "unknown task", body: `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"nope"}}`, code: a2a.CodeTaskNotFound},
		{name: "task without id", body: `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{}}`, code: a2a.CodeInvalidParams},
		{name: "empty message", body: `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"  "}]}}}`, code: a2a.CodeInvalidParams},
		{name: "file part", body: `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"file","file":{"uri":"https://x/y.png"}}]}}}`, code: a2a.CodeContentTypeNotSupport},
		{name: "unsupported version", body: `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`, header: "2.0", code: a2a.CodeVersionNotSupported},
		{name: "unknown agent", body: `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`, path: "/a2a/nobody", status: http.StatusNotFound, code: a2a.CodeInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path
			if path == "" {
				path = "/a2a/helper"
			}
			req, _ := http.NewRequest(http.MethodPost, url+path, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			if tt.header != "" {
				req.Header.Set(a2a.VersionHeader, tt.header)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if want := cmpOr(tt.status, http.StatusOK); resp.StatusCode != want {
				t.Errorf("status = %d, want %d", resp.StatusCode, want)
			}
			var out struct {
				JSONRPC string `json:"jsonrpc"`
				Error   *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
				t.Fatal(err)
			}
			if out.JSONRPC != "2.0" || out.Error == nil || out.Error.Code != tt.code || out.Error.Message == "" {
				t.Errorf("answer = %+v %+v, want JSON-RPC error %d", out, out.Error, tt.code)
			}
		})
	}
}

func TestA2ACardAndIndex(t *testing.T) {
	url := startServer(t, testAgents{"helper": fakeAgent(t)})
	for _, p := range []string{"/a2a/helper/.well-known/agent-card.json", "/a2a/helper/.well-known/agent.json"} {
		card, err := a2a.DiscoverCard(context.Background(), url+p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(card.SupportedInterfaces) != 2 || card.SupportedInterfaces[0].ProtocolVersion != "1.0" || card.SupportedInterfaces[1].ProtocolVersion != "0.3" ||
			!card.Capabilities.Streaming || len(card.SecuritySchemes) != 1 || len(card.SecurityRequirements) != 1 {
			t.Errorf("card at %s = %+v", p, card)
		}
		// The 0.3 fields, which the 1.0 card type does not hold.
		resp, err := http.Get(url + p)
		if err != nil {
			t.Fatal(err)
		}
		var legacy struct {
			URL                string                    `json:"url"`
			ProtocolVersion    string                    `json:"protocolVersion"`
			PreferredTransport string                    `json:"preferredTransport"`
			Security           []map[string][]string     `json:"security"`
			SecuritySchemes    map[string]map[string]any `json:"securitySchemes"`
		}
		err = json.NewDecoder(resp.Body).Decode(&legacy)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if legacy.URL != url+"/a2a/helper" || !strings.HasPrefix(legacy.ProtocolVersion, "0.3") || legacy.PreferredTransport != "JSONRPC" ||
			len(legacy.Security) != 1 || legacy.SecuritySchemes["bearer"]["type"] != "http" {
			t.Errorf("0.3 fields of the card at %s = %+v", p, legacy)
		}
	}
	resp, err := http.Get(url + "/a2a")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var idx struct {
		Agents []struct{ Name, URL, CardURL string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&idx); err != nil {
		t.Fatal(err)
	}
	if len(idx.Agents) != 1 || idx.Agents[0].CardURL != url+"/a2a/helper/.well-known/agent-card.json" {
		t.Errorf("index = %+v", idx)
	}
}

func TestA2ATool(t *testing.T) {
	url := startServer(t, testAgents{"helper": fakeAgent(t, llmtest.Turn{Text: "42"})})
	c, err := a2a.NewClient(context.Background(), url+"/a2a/helper", nil)
	if err != nil {
		t.Fatal(err)
	}
	card := *c.Card()
	card.Name = "Helper Agent (v2)!"
	tl := a2a.Tool(c, &card)
	if tl.Name() != "Helper_Agent_v2" {
		t.Errorf("Name() = %q", tl.Name())
	}
	res, err := tl.Call(context.Background(), json.RawMessage(`{"message":"answer?"}`))
	if err != nil || res.IsError || res.Content != "42" {
		t.Errorf("Call = %+v, %v", res, err)
	}
	res, err = tl.Call(context.Background(), json.RawMessage(`{}`))
	if err != nil || !res.IsError {
		t.Errorf("Call without message = %+v, %v; want an error result", res, err)
	}
}
