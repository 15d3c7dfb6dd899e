package aguiserver_test

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server"
	"github.com/agentcraftlab/agentcraft/server/aguiserver"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/workflowtest"
)

// reviewFlow drafts with an agent node, asks a person, then joins both.
const reviewFlow = `{"name":"review","nodes":[{"id":"start","type":"start"},
{"id":"draft","type":"agent","config":{"model":"m","prompt":"Draft: {{input}}"}},
{"id":"ask","type":"human","config":{"prompt":"Publish {{nodes.draft.output}}?","form_schema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}},
{"id":"final","type":"code","config":{"mode":"template","template":"{{nodes.draft.output}} / {{nodes.ask.output.ok}} / {{vars.lang}}"}},
{"id":"end","type":"end"}],
"edges":[{"id":"e1","source":"start","target":"draft"},{"id":"e2","source":"draft","target":"ask"},{"id":"e3","source":"ask","target":"final"},{"id":"e4","source":"final","target":"end"}]}`

// wfEnv serves /agui (agents and workflows) with a run service whose
// agent nodes answer the scripted turns, and stores reviewFlow.
type wfEnv struct {
	env  *servertest.Env
	svc  *controlplane.Service
	res  *workflowtest.Resolver
	url  string
	c    servertest.Client
	flow store.Workflow
}

func newWFEnv(t *testing.T, turns ...llmtest.Turn) *wfEnv {
	t.Helper()
	fake := llmtest.NewOpenAI(t, llmtest.Turn{Text: "Agent answer."})
	env := servertest.New(t, &servertest.Options{Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)},
		Agents: []platform.AgentSpec{{Name: "helper", Model: "fake/m", Instructions: "Help."}}})
	res := workflowtest.NewResolver(t, turns...)
	svc := controlplane.New(env.Store, workflowtest.Engine(t, workflow.Services{Agents: res}), controlplane.Options{Owner: "test", SingleProcess: true})
	g, err := aguiserver.New(env.Platform, &aguiserver.Options{Runner: env.Runner, Runs: svc})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(env.Platform, &server.Options{Version: "test", Runs: svc, Runner: env.Runner, Mounts: g.Mounts()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close(); srv.Stop(); svc.Wait() })
	wf, err := env.Store.Workflows().Create(t.Context(), store.Workflow{WorkspaceID: env.Workspace.ID, Name: "review", Definition: json.RawMessage(reviewFlow)})
	if err != nil {
		t.Fatal(err)
	}
	return &wfEnv{env: env, svc: svc, res: res, url: hs.URL, c: servertest.Client{T: t, Base: hs.URL, Key: env.Key}, flow: wf}
}

// stream posts input to path and returns the events of the 200 stream.
func stream(t *testing.T, c servertest.Client, path, input string) ([]event, http.Header) {
	t.Helper()
	resp, body := c.Do("POST", path, input)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("POST %s = %d %s %s, want a 200 event stream", path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	var out []event
	for line := range strings.SplitSeq(string(body), "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var ev event
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatalf("event %q: %v", data, err)
			}
			out = append(out, ev)
		}
	}
	return out, resp.Header
}

// compact lists the events as "TYPE" or "TYPE name" for steps and
// "STATE_DELTA path=value".
func compact(evs []event) []string {
	var out []string
	for _, e := range evs {
		s := e.str("type")
		switch s {
		case "STEP_STARTED", "STEP_FINISHED":
			s += " " + e.str("stepName")
		case "STATE_DELTA":
			for _, op := range e["delta"].([]any) {
				m := op.(map[string]any)
				s += " " + m["path"].(string) + "=" + m["value"].(string)
			}
		}
		out = append(out, s)
	}
	return out
}

// applyState applies every STATE_SNAPSHOT and STATE_DELTA in order, as
// a client does, supporting the replace operations the server sends.
func applyState(t *testing.T, state map[string]any, evs []event) map[string]any {
	t.Helper()
	for _, e := range evs {
		switch e.str("type") {
		case "STATE_SNAPSHOT":
			b, _ := json.Marshal(e["snapshot"])
			state = map[string]any{}
			if err := json.Unmarshal(b, &state); err != nil {
				t.Fatal(err)
			}
		case "STATE_DELTA":
			for _, op := range e["delta"].([]any) {
				m := op.(map[string]any)
				parts := strings.Split(strings.TrimPrefix(m["path"].(string), "/"), "/")
				if m["op"] != "replace" || len(parts) != 2 {
					t.Fatalf("patch op %v: want replace of /<object>/<member>", m)
				}
				obj, ok := state[parts[0]].(map[string]any)
				if !ok {
					t.Fatalf("patch %v: state has no object %q", m, parts[0])
				}
				if _, ok := obj[parts[1]]; !ok {
					t.Fatalf("patch %v replaces %q, which the snapshot lacks", m, parts[1])
				}
				obj[parts[1]] = m["value"]
			}
		}
	}
	return state
}

func outcomeOf(e event) map[string]any { o, _ := e["outcome"].(map[string]any); return o }

// TestWorkflowInterruptResume: a run streams RUN_STARTED, the state
// snapshot, a step and state patches per node, and finishes with an
// interrupt carrying the human node's prompt and form; the next run's
// resume continues the parked run to its answer; answering again is 409.
func TestWorkflowInterruptResume(t *testing.T) {
	f := newWFEnv(t, llmtest.Turn{Text: "D1"})
	evs, h := stream(t, f.c, "/agui/workflows/review", `{"threadId":"th","runId":"r1","state":{"vars":{"lang":"fr"}},
		"messages":[{"id":"u1","role":"user","content":"the news"}]}`)
	want := []string{"RUN_STARTED", "STATE_SNAPSHOT",
		"STEP_STARTED start", "STATE_DELTA /nodes/start=running", "STEP_FINISHED start", "STATE_DELTA /nodes/start=succeeded",
		"STEP_STARTED draft", "STATE_DELTA /nodes/draft=running", "STEP_FINISHED draft", "STATE_DELTA /nodes/draft=succeeded",
		"STEP_STARTED ask", "STATE_DELTA /nodes/ask=running", "STEP_FINISHED ask", "STATE_DELTA /nodes/ask=waiting",
		"STATE_DELTA /run/status=waiting", "RUN_FINISHED"}
	if got := compact(evs); !slices.Equal(got, want) {
		t.Fatalf("events\n%q\nwant\n%q", got, want)
	}
	runID := h.Get("X-AgentCraft-Run-Id")
	if evs[0].str("threadId") != "th" || evs[0].str("runId") != "r1" || runID == "" {
		t.Errorf("RUN_STARTED %v, run header %q", evs[0], runID)
	}
	state := applyState(t, nil, evs)
	wantNodes := map[string]any{"start": "succeeded", "draft": "succeeded", "ask": "waiting", "final": "pending", "end": "pending"}
	if b1, b2 := mustJSON(state["nodes"]), mustJSON(wantNodes); b1 != b2 {
		t.Errorf("nodes after the patches = %s, want %s", b1, b2)
	}
	if run := state["run"].(map[string]any); run["id"] != runID || run["status"] != "waiting" || run["workflow"] != "review" {
		t.Errorf("state run = %v", run)
	}
	out := outcomeOf(evs[len(evs)-1])
	its, _ := out["interrupts"].([]any)
	if out["type"] != "interrupt" || len(its) != 1 {
		t.Fatalf("RUN_FINISHED outcome = %v, want one interrupt", out)
	}
	it := its[0].(map[string]any)
	meta, _ := it["metadata"].(map[string]any)
	if it["id"] != runID+":ask" || it["reason"] != "input_required" || it["message"] != "Publish D1?" ||
		it["responseSchema"] == nil || meta["runId"] != runID || meta["nodeId"] != "ask" {
		t.Errorf("interrupt = %v", it)
	}
	// The run is the durable run of the run API, parked on the node.
	if run, err := f.env.Store.Runs().Get(t.Context(), f.env.Workspace.ID, runID); err != nil || run.Status != store.RunWaiting || run.WaitingNode != "ask" || run.WorkflowID != f.flow.ID {
		t.Fatalf("stored run = %+v, %v", run, err)
	}

	resume := `{"threadId":"th","runId":"r2","state":` + mustJSON(state) + `,
		"resume":[{"interruptId":"` + runID + `:ask","status":"resolved","payload":{"ok":true}}],
		"messages":[{"id":"u1","role":"user","content":"the news"}]}`
	evs, h = stream(t, f.c, "/agui/workflows/review", resume)
	// start runs again (start and end nodes keep no checkpoint); draft
	// and ask are replayed from theirs, without events.
	want = []string{"RUN_STARTED", "STATE_SNAPSHOT",
		"STEP_STARTED start", "STATE_DELTA /nodes/start=running", "STEP_FINISHED start", "STATE_DELTA /nodes/start=succeeded",
		"STEP_STARTED final", "STATE_DELTA /nodes/final=running", "STEP_FINISHED final", "STATE_DELTA /nodes/final=succeeded",
		"STEP_STARTED end", "STATE_DELTA /nodes/end=running", "STEP_FINISHED end", "STATE_DELTA /nodes/end=succeeded",
		"STATE_DELTA /run/status=succeeded", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED"}
	if got := compact(evs); !slices.Equal(got, want) {
		t.Fatalf("resumed events\n%q\nwant\n%q", got, want)
	}
	if h.Get("X-AgentCraft-Run-Id") != runID || evs[0].str("runId") != "r2" {
		t.Errorf("resumed stream: run header %q, RUN_STARTED %v", h.Get("X-AgentCraft-Run-Id"), evs[0])
	}
	snap := evs[1]["snapshot"].(map[string]any)["nodes"].(map[string]any)
	if snap["draft"] != "succeeded" || snap["ask"] != "succeeded" || snap["final"] != "pending" {
		t.Errorf("resumed snapshot nodes = %v: earlier nodes done, the answered human node done", snap)
	}
	if text := evs[16].str("delta"); text != "D1 / true / fr" {
		t.Errorf("answer %q, want the draft, the human's answer and the var", text)
	}
	fin := evs[len(evs)-1]
	if outcomeOf(fin)["type"] != "success" || fin["result"] != "D1 / true / fr" {
		t.Errorf("RUN_FINISHED = %v", fin)
	}
	final := applyState(t, nil, evs)
	for id, st := range final["nodes"].(map[string]any) {
		if st != "succeeded" {
			t.Errorf("node %s ends %v, want succeeded", id, st)
		}
	}
	if n := len(f.res.LLM.Requests()); n != 1 {
		t.Errorf("the agent node's model was called %d times, want once: the resumed run replays it", n)
	}

	// The same answer again: the interrupt is no longer open.
	resp, body := f.c.Do("POST", "/agui/workflows/review", strings.Replace(resume, `"r2"`, `"r3"`, 1))
	if resp.StatusCode != http.StatusConflict || !strings.Contains(string(body), "interrupt_not_open") {
		t.Errorf("second resume = %d %s, want 409 interrupt_not_open", resp.StatusCode, body)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestWorkflowResumeCancelled: a cancelled resume entry cancels the
// parked run and finishes with the cancelled outcome.
func TestWorkflowResumeCancelled(t *testing.T) {
	f := newWFEnv(t, llmtest.Turn{Text: "D1"})
	_, h := stream(t, f.c, "/agui/workflows/review", `{"threadId":"th","runId":"r1","messages":[{"id":"u1","role":"user","content":"x"}]}`)
	id := h.Get("X-AgentCraft-Run-Id")
	evs, _ := stream(t, f.c, "/agui/workflows/review", `{"threadId":"th","runId":"r2","messages":[],"resume":[{"interruptId":"`+id+`:ask","status":"cancelled"}]}`)
	if got := compact(evs); !slices.Equal(got, []string{"RUN_STARTED", "STATE_SNAPSHOT", "STATE_DELTA /run/status=canceled", "RUN_FINISHED"}) {
		t.Fatalf("events %q", got)
	}
	if o := outcomeOf(evs[3]); o["type"] != "cancelled" {
		t.Errorf("outcome %v, want cancelled", o)
	}
	if run, _ := f.env.Store.Runs().Get(t.Context(), f.env.Workspace.ID, id); run.Status != store.RunCanceled {
		t.Errorf("stored run is %s, want canceled", run.Status)
	}
}

// TestWorkflowFailure: a run whose agent node fails ends with RUN_ERROR
// after the failed node's step is finished.
func TestWorkflowFailure(t *testing.T) {
	f := newWFEnv(t, llmtest.Turn{Fault: &llmtest.Fault{Status: 400, Message: "bad request"}})
	evs, _ := stream(t, f.c, "/agui/workflows/review", `{"threadId":"th","runId":"r1","messages":[{"id":"u1","role":"user","content":"x"}]}`)
	got := compact(evs)
	last := evs[len(evs)-1]
	if !slices.Contains(got, "STATE_DELTA /nodes/draft=failed") || !slices.Contains(got, "STEP_FINISHED draft") || last.str("type") != "RUN_ERROR" ||
		last.str("code") != "workflow_failed" || !strings.Contains(last.str("message"), "draft") || slices.Contains(got, "RUN_FINISHED") {
		t.Fatalf("events %q, last %v: want the draft step finished and failed, then RUN_ERROR naming the node", got, last)
	}
}

// TestWorkflowRefusals: what cannot start or resume is a JSON error.
func TestWorkflowRefusals(t *testing.T) {
	f := newWFEnv(t, llmtest.Turn{Text: "D1"})
	_, h := stream(t, f.c, "/agui/workflows/review", `{"threadId":"th","runId":"r1","messages":[{"id":"u1","role":"user","content":"x"}]}`)
	id := h.Get("X-AgentCraft-Run-Id")
	ctx := t.Context()
	// A guest key, and a member key scoped to chat: they may chat with
	// agents, not run workflows.
	guest, chat := newKey(t, f.env, store.RoleGuest, ""), newKey(t, f.env, store.RoleMember, store.APIKeyScopeChat)
	if _, err := f.env.Store.Workflows().Create(ctx, store.Workflow{WorkspaceID: f.env.Workspace.ID, Name: "other", Definition: json.RawMessage(strings.Replace(reviewFlow, `"review"`, `"other"`, 1))}); err != nil {
		t.Fatal(err)
	}
	ok := `{"threadId":"t","runId":"r","messages":[{"id":"1","role":"user","content":"Hi"}]}`
	resume := func(interrupt string) string {
		return `{"threadId":"t","runId":"r","messages":[],"resume":[{"interruptId":"` + interrupt + `","status":"resolved","payload":{"ok":true}}]}`
	}
	for _, tc := range []struct {
		name, path, body, key string
		status                int
		code                  string
	}{
		{"guest key", "/agui/workflows/review", ok, guest, 403, ""},
		{"chat-scoped key", "/agui/workflows/review", ok, chat, 403, ""},
		{"no key", "/agui/workflows/review", ok, "", 401, ""},
		{"unknown workflow", "/agui/workflows/nope", ok, f.env.Key, 404, "workflow_not_found"},
		{"no user message", "/agui/workflows/review", `{"threadId":"t","runId":"r","messages":[]}`, f.env.Key, 400, ""},
		{"state not an object", "/agui/workflows/review", `{"threadId":"t","runId":"r","state":[1],"messages":[{"id":"1","role":"user","content":"Hi"}]}`, f.env.Key, 400, ""},
		{"bad resume status", "/agui/workflows/review", `{"threadId":"t","runId":"r","messages":[],"resume":[{"interruptId":"x:y","status":"denied"}]}`, f.env.Key, 400, ""},
		{"unknown interrupt", "/agui/workflows/review", resume("nope:ask"), f.env.Key, 404, "interrupt_not_found"},
		{"malformed interrupt", "/agui/workflows/review", resume("nocolon"), f.env.Key, 404, "interrupt_not_found"},
		{"interrupt of another workflow", "/agui/workflows/other", resume(id + ":ask"), f.env.Key, 404, "interrupt_not_found"},
		{"interrupt at another node", "/agui/workflows/review", resume(id + ":draft"), f.env.Key, 409, "interrupt_not_open"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := servertest.Client{T: t, Base: f.url, Key: tc.key}.Do("POST", tc.path, tc.body)
			if resp.StatusCode != tc.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || !strings.Contains(string(body), tc.code) {
				t.Errorf("= %d %s %s, want a %d JSON error %s", resp.StatusCode, resp.Header.Get("Content-Type"), body, tc.status, tc.code)
			}
		})
	}
	// None of the refusals touched the parked run; the chat key still
	// chats with an agent.
	if run, _ := f.env.Store.Runs().Get(ctx, f.env.Workspace.ID, id); run.Status != store.RunWaiting {
		t.Errorf("the parked run is %s after the refusals, want waiting", run.Status)
	}
	if runs, _ := f.env.Store.Runs().List(ctx, f.env.Workspace.ID, store.RunFilter{}); len(runs) != 1 {
		t.Errorf("%d runs stored, want the one started", len(runs))
	}
	evs, _ := stream(t, servertest.Client{T: t, Base: f.url, Key: chat}, "/agui/helper", ok)
	if got := types(evs); got[len(got)-1] != "RUN_FINISHED" {
		t.Errorf("chat key on the agent endpoint: events %v", got)
	}
}

// TestWorkflowsNotConfigured: without Options.Runs the route says so.
func TestWorkflowsNotConfigured(t *testing.T) {
	env := servertest.New(t, nil)
	resp, body := servertest.Client{T: t, Base: env.URL, Key: env.Key}.Do("POST", "/agui/workflows/review", `{"threadId":"t","runId":"r","messages":[{"id":"1","role":"user","content":"Hi"}]}`)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "workflows_not_configured") {
		t.Errorf("= %d %s, want 503 workflows_not_configured", resp.StatusCode, body)
	}
}

// newKey stores an API key of the workspace with role and scope, made
// as servertest.CreateKey makes its owner keys.
func newKey(t *testing.T, env *servertest.Env, role store.Role, scope string) string {
	t.Helper()
	var b [24]byte
	_, _ = rand.Read(b[:])
	key := "ac_" + base64.RawURLEncoding.EncodeToString(b[:])
	h := sha256.Sum256([]byte(key))
	if _, err := env.Store.APIKeys().Create(t.Context(), store.APIKey{WorkspaceID: env.Workspace.ID, Name: "test", Prefix: key[:9], Hash: h[:], Role: role, Scope: scope}); err != nil {
		t.Fatal(err)
	}
	return key
}
