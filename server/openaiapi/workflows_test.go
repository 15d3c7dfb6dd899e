package openaiapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server"
	"github.com/agentcraftlab/agentcraft/server/openaiapi"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/workflowtest"
)

// The workflows of the fixture. summarize: start → agent → code → end.
const (
	summarizeFlow = `{"name":"summarize","nodes":[{"id":"start","type":"start"},
{"id":"draft","type":"agent","config":{"model":"m","prompt":"Summarize: {{input}}"}},
{"id":"final","type":"code","config":{"mode":"template","template":"{{nodes.draft.output}} ({{vars.lang}})"}},
{"id":"end","type":"end"}],
"edges":[{"id":"e1","source":"start","target":"draft"},{"id":"e2","source":"draft","target":"final"},{"id":"e3","source":"final","target":"end"}]}`
	gatedFlow = `{"name":"gated","nodes":[{"id":"start","type":"start"},
{"id":"draft","type":"agent","config":{"model":"m","prompt":"Answer: {{input}}"}},
{"id":"gate","type":"contract","config":{"repair":false,"schema":{"type":"object","required":["answer"],"properties":{"answer":{"type":"string"}}}}},
{"id":"end","type":"end"}],
"edges":[{"id":"e1","source":"start","target":"draft"},{"id":"e2","source":"draft","target":"gate"},{"id":"e3","source":"gate","target":"end"}]}`
	approveFlow = `{"name":"approve","nodes":[{"id":"start","type":"start"},
{"id":"ok","type":"human","config":{"prompt":"Approve {{input}}?"}},
{"id":"end","type":"end"}],
"edges":[{"id":"e1","source":"start","target":"ok"},{"id":"e2","source":"ok","target":"end"}]}`
)

type workflowFixture struct {
	env    *servertest.Env
	res    *workflowtest.Resolver // the workflows' agents
	agent  *llmtest.Server        // the provider of agent "workflow"
	svc    *controlplane.Service
	url    string
	client openai.Client
}

// newWorkflowFixture serves the three workflows above, whose agent nodes
// answer with turns, next to an agent named "workflow".
func newWorkflowFixture(t *testing.T, turns ...llmtest.Turn) *workflowFixture {
	t.Helper()
	f := &workflowFixture{res: workflowtest.NewResolver(t, turns...), agent: llmtest.NewOpenAI(t)}
	f.env = servertest.New(t, &servertest.Options{
		Providers: []platform.ProviderConfig{{Name: "fake", Type: "openai", BaseURL: f.agent.URL + "/v1", APIKey: "k", Middleware: fastRetry()}},
		Agents:    []platform.AgentSpec{{Name: "workflow", Model: "fake/fake-model", Instructions: "You are an agent named workflow."}},
	})
	eng := workflowtest.Engine(t, workflow.Services{Agents: f.res})
	f.svc = controlplane.New(f.env.Store, eng, controlplane.Options{Owner: "test", SingleProcess: true})
	// Runs execute in goroutines of the service and outlive the answer by
	// a moment (the row is updated after run_finished is sent).
	t.Cleanup(f.svc.Wait)
	srv, err := server.New(f.env.Platform, &server.Options{Version: "test", Runs: f.svc})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		srv.Stop()
	})
	f.url = hs.URL
	f.client = openai.NewClient(option.WithBaseURL(hs.URL+"/v1"), option.WithAPIKey(f.env.Key), option.WithMaxRetries(0))
	for _, def := range []string{summarizeFlow, gatedFlow, approveFlow} {
		var d struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal([]byte(def), &d); err != nil {
			t.Fatal(err)
		}
		if _, err := f.env.Store.Workflows().Create(t.Context(), store.Workflow{WorkspaceID: f.env.Workspace.ID, Name: d.Name, Definition: json.RawMessage(def)}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func workflowParams(model, input string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model: model,
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("ignored by workflows"),
			openai.UserMessage("an earlier question"),
			openai.AssistantMessage("an earlier answer"),
			openai.UserMessage(input),
		},
		Metadata: map[string]string{"lang": "fr"},
	}
}

// run returns the stored run the answer names.
func (f *workflowFixture) run(t *testing.T, h http.Header) store.Run {
	t.Helper()
	id := h.Get(openaiapi.RunIDHeader)
	if id == "" {
		t.Fatalf("%s header missing", openaiapi.RunIDHeader)
	}
	run, err := f.env.Store.Runs().Get(t.Context(), f.env.Workspace.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func TestWorkflowModelsListed(t *testing.T) {
	f := newWorkflowFixture(t)
	page, err := f.client.Models.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	owner := map[string]string{}
	for _, m := range page.Data {
		owner[m.ID] = string(m.OwnedBy)
	}
	want := map[string]string{
		"workflow":           "agentcraft",
		"workflow/approve":   "agentcraft-workflow",
		"workflow/gated":     "agentcraft-workflow",
		"workflow/summarize": "agentcraft-workflow",
	}
	if len(owner) != len(want) || len(page.Data) != len(want) {
		t.Fatalf("models = %v, want %v", owner, want)
	}
	for id, o := range want {
		if owner[id] != o {
			t.Errorf("model %s owned by %q, want %q", id, owner[id], o)
		}
	}
	m, err := f.client.Models.Get(t.Context(), "workflow/summarize")
	if err != nil || m.ID != "workflow/summarize" || m.OwnedBy != "agentcraft-workflow" {
		t.Errorf("GET /v1/models/workflow/summarize = %+v, %v", m, err)
	}

	// The agent called "workflow" still answers as model "workflow".
	f.agent.Push(llmtest.Turn{Text: "I am the agent."})
	params := userMessage("who are you?")
	params.Model = "workflow"
	c, err := f.client.Chat.Completions.New(t.Context(), params)
	if err != nil {
		t.Fatal(err)
	}
	if c.Choices[0].Message.Content != "I am the agent." {
		t.Errorf("model workflow answered %q, want the agent's answer", c.Choices[0].Message.Content)
	}
	if n := len(f.res.LLM.Requests()); n != 0 {
		t.Errorf("model workflow ran a workflow (%d workflow LLM calls)", n)
	}
}

func TestWorkflowChatNonStreaming(t *testing.T) {
	f := newWorkflowFixture(t, llmtest.Turn{Text: "A memo.", Usage: llm.Usage{InputTokens: 12, OutputTokens: 4}})
	var resp *http.Response
	c, err := f.client.Chat.Completions.New(t.Context(), workflowParams("workflow/summarize", "the budget"), option.WithResponseInto(&resp))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Choices[0].Message.Content; got != "A memo. (fr)" {
		t.Errorf("content = %q, want the code node's output", got)
	}
	if c.Choices[0].FinishReason != "stop" || c.Model != "workflow/summarize" || c.Usage.PromptTokens != 12 || c.Usage.CompletionTokens != 4 {
		t.Errorf("completion = %+v", c)
	}
	run := f.run(t, resp.Header)
	wf, err := f.env.Store.Workflows().GetByName(t.Context(), f.env.Workspace.ID, "summarize")
	if err != nil {
		t.Fatal(err)
	}
	if run.WorkflowID != wf.ID || run.WorkflowVersion != wf.Version {
		t.Errorf("run pins workflow %s v%d, want %s v%d", run.WorkflowID, run.WorkflowVersion, wf.ID, wf.Version)
	}
	var in controlplane.RunInput
	if err := json.Unmarshal(run.Input, &in); err != nil {
		t.Fatal(err)
	}
	if in.Input != "the budget" || in.Vars["lang"] != "fr" {
		t.Errorf("run input = %s, want the last user message and the metadata as vars", run.Input)
	}
	reqs := f.res.LLM.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), "Summarize: the budget") {
		t.Errorf("agent node requests = %d, want one with the last user message", len(reqs))
	}
}

// sseAnswer is a raw streamed answer.
type sseAnswer struct {
	status    int
	header    http.Header
	content   string
	reasoning string
	finish    string
	chunks    int // chunks with content
	done      bool
	errBody   map[string]any // an in-band error chunk
	body      map[string]any // the JSON of a non-SSE answer
}

// postStream sends a streamed completion and reads the SSE answer.
func (f *workflowFixture) postStream(t *testing.T, body string) sseAnswer {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, f.url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+f.env.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	a := sseAnswer{status: resp.StatusCode, header: resp.Header}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		if err := json.NewDecoder(resp.Body).Decode(&a.body); err != nil {
			t.Fatal(err)
		}
		return a
	}
	sc := bufio.NewScanner(resp.Body)
	var content, reasoning strings.Builder
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if a.done {
			t.Errorf("data after [DONE]: %s", data)
		}
		if data == "[DONE]" {
			a.done = true
			continue
		}
		var ch struct {
			Choices []struct {
				Delta struct {
					Content          string `json:"content"`
					ReasoningContent string `json:"reasoning_content"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Error map[string]any `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			t.Fatalf("chunk is not JSON: %s", data)
		}
		if ch.Error != nil {
			a.errBody = ch.Error
		}
		for _, c := range ch.Choices {
			if c.Delta.Content != "" {
				a.chunks++
			}
			content.WriteString(c.Delta.Content)
			reasoning.WriteString(c.Delta.ReasoningContent)
			if c.FinishReason != nil {
				a.finish = *c.FinishReason
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	a.content, a.reasoning = content.String(), reasoning.String()
	return a
}

func streamBody(model, input string, metadata map[string]string) string {
	b, _ := json.Marshal(map[string]any{
		"model": model, "stream": true, "metadata": metadata,
		"messages": []map[string]string{{"role": "user", "content": input}},
	})
	return string(b)
}

func TestWorkflowChatStreaming(t *testing.T) {
	long := strings.Repeat("Ünïcode memo line. ", 40) // several chunks, multi-byte runes on the cuts
	f := newWorkflowFixture(t, llmtest.Turn{Text: long})
	a := f.postStream(t, streamBody("workflow/summarize", "the budget", map[string]string{"lang": "de"}))
	if a.status != 200 {
		t.Fatalf("status %d body %v", a.status, a.body)
	}
	if want := long + " (de)"; a.content != want {
		t.Errorf("content = %q, want %q", a.content, want)
	}
	if a.chunks < 2 {
		t.Errorf("a %d-byte output came in %d chunk(s); want it split", len(a.content), a.chunks)
	}
	if a.finish != "stop" || !a.done || a.reasoning != "" {
		t.Errorf("finish %q, [DONE] %v, reasoning %q; want stop, true and no progress unless asked", a.finish, a.done, a.reasoning)
	}
	if run := f.run(t, a.header); run.WorkflowVersion != 1 {
		t.Errorf("run = %+v", run)
	}

	// The SDK reads the same stream.
	f.res.LLM.Push(llmtest.Turn{Text: "Short."})
	params := workflowParams("workflow/summarize", "x")
	stream := f.client.Chat.Completions.NewStreaming(t.Context(), params)
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if got := acc.Choices[0].Message.Content; got != "Short. (fr)" || acc.Choices[0].FinishReason != "stop" {
		t.Errorf("SDK stream content %q finish %q", got, acc.Choices[0].FinishReason)
	}
}

func TestWorkflowStreamProgress(t *testing.T) {
	f := newWorkflowFixture(t, llmtest.Turn{Text: "A memo."})
	a := f.postStream(t, streamBody("workflow/summarize", "the budget", map[string]string{"lang": "en", "progress": "true"}))
	if a.status != 200 || a.content != "A memo. (en)" || a.finish != "stop" || !a.done {
		t.Fatalf("status %d content %q finish %q done %v", a.status, a.content, a.finish, a.done)
	}
	for _, want := range []string{"▶ node draft (agent)…\n", "A memo.", "✓ draft ", "▶ node final (code)…\n", "✓ final "} {
		if !strings.Contains(a.reasoning, want) {
			t.Errorf("reasoning lacks %q:\n%s", want, a.reasoning)
		}
	}
	if strings.Contains(a.reasoning, "node start") || strings.Contains(a.reasoning, "node end") {
		t.Errorf("reasoning reports start/end nodes:\n%s", a.reasoning)
	}
}

func TestWorkflowContractFailure(t *testing.T) {
	f := newWorkflowFixture(t, llmtest.Turn{Text: "not an object"}, llmtest.Turn{Text: "not an object"}, llmtest.Turn{Text: "not an object"})
	var resp *http.Response
	_, err := f.client.Chat.Completions.New(t.Context(), workflowParams("workflow/gated", "q"), option.WithResponseInto(&resp))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 422 || apiErr.Type != "failed_contract" || !strings.Contains(apiErr.Message, "gate") {
		t.Fatalf("error = %v; want 422 failed_contract naming the node", err)
	}
	waitRun(t, f, f.run(t, apiErr.Response.Header).ID, store.RunFailedContract)

	// Streamed without progress: nothing was sent, so it is still an HTTP error.
	a := f.postStream(t, streamBody("workflow/gated", "q", nil))
	if e, _ := a.body["error"].(map[string]any); a.status != 422 || e["type"] != "failed_contract" || a.header.Get(openaiapi.RunIDHeader) == "" {
		t.Errorf("stream: status %d body %v", a.status, a.body)
	}

	// With progress the stream has begun: the error comes in-band.
	a = f.postStream(t, streamBody("workflow/gated", "q", map[string]string{"progress": "true"}))
	if a.status != 200 || a.errBody == nil || a.errBody["type"] != "failed_contract" || a.done || a.content != "" {
		t.Errorf("progress stream: status %d error %v done %v content %q", a.status, a.errBody, a.done, a.content)
	}
	if !strings.Contains(a.reasoning, "✗ gate") {
		t.Errorf("reasoning lacks the failed node:\n%s", a.reasoning)
	}
}

// waitRun waits for the service to record the run's final status, which
// happens just after run_finished reached the client.
func waitRun(t *testing.T, f *workflowFixture, id string, want store.RunStatus) {
	t.Helper()
	f.svc.Wait()
	run, err := f.env.Store.Runs().Get(t.Context(), f.env.Workspace.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != want {
		t.Errorf("run %s is %s, want %s", id, run.Status, want)
	}
}

func TestWorkflowWaitingForInput(t *testing.T) {
	f := newWorkflowFixture(t)
	var resp *http.Response
	c, err := f.client.Chat.Completions.New(t.Context(), workflowParams("workflow/approve", "the budget"), option.WithResponseInto(&resp))
	if err != nil {
		t.Fatal(err)
	}
	id := resp.Header.Get(openaiapi.RunIDHeader)
	got := c.Choices[0].Message.Content
	if id == "" || !strings.Contains(got, id) || !strings.Contains(got, "Approve the budget?") || c.Choices[0].FinishReason != "stop" {
		t.Errorf("answer %q finish %q run %q; want the run id and the human node's prompt", got, c.Choices[0].FinishReason, id)
	}
	waitRun(t, f, id, store.RunWaiting)

	a := f.postStream(t, streamBody("workflow/approve", "the plan", nil))
	if a.status != 200 || !strings.Contains(a.content, "Approve the plan?") || !a.done || a.finish != "stop" {
		t.Errorf("stream: status %d content %q done %v", a.status, a.content, a.done)
	}
}

func TestWorkflowUnknown(t *testing.T) {
	f := newWorkflowFixture(t)
	_, err := f.client.Chat.Completions.New(t.Context(), workflowParams("workflow/nope", "x"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Code != "model_not_found" {
		t.Fatalf("error = %v; want 404 model_not_found", err)
	}
	if apiErr.Response.Header.Get(openaiapi.RunIDHeader) != "" {
		t.Error("an unknown workflow started a run")
	}
	a := f.postStream(t, streamBody("workflow/nope", "x", nil))
	if e, _ := a.body["error"].(map[string]any); a.status != 404 || e["code"] != "model_not_found" {
		t.Errorf("stream: status %d body %v", a.status, a.body)
	}
	if _, err := f.client.Models.Get(t.Context(), "workflow/nope"); !errors.As(err, &apiErr) || apiErr.StatusCode != 404 {
		t.Errorf("GET /v1/models/workflow/nope error = %v; want 404", err)
	}
	runs, err := f.env.Store.Runs().List(t.Context(), f.env.Workspace.ID, store.RunFilter{})
	if err != nil || len(runs) != 0 {
		t.Errorf("runs = %d, %v; want none", len(runs), err)
	}
}

func TestWorkflowBadMetadata(t *testing.T) {
	f := newWorkflowFixture(t)
	status, body, _ := rawPost(t, f.url+"/v1/chat/completions", f.env.Key,
		`{"model":"workflow/summarize","metadata":{"lang":3},"messages":[{"role":"user","content":"x"}]}`)
	if e, _ := body["error"].(map[string]any); status != 400 || e["param"] != "metadata.lang" {
		t.Errorf("status %d body %v; want 400 naming metadata.lang", status, body)
	}
}

func TestWorkflowSkipsOpenWebUITasks(t *testing.T) {
	f := newWorkflowFixture(t)
	c, err := f.client.Chat.Completions.New(context.Background(), workflowParams("workflow/summarize", "### Task:\nGenerate a title"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Choices[0].Message.Content != "" {
		t.Errorf("task answer = %q, want empty", c.Choices[0].Message.Content)
	}
	runs, err := f.env.Store.Runs().List(t.Context(), f.env.Workspace.ID, store.RunFilter{})
	if err != nil || len(runs) != 0 {
		t.Errorf("runs = %d, %v; an Open WebUI task must not run the workflow", len(runs), err)
	}
}
