package task_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/run"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/task"
	"github.com/agentcraftlab/agentcraft/tool"
)

// TestToolGateHoldsCalls: a chat agent's call of a held capability is not
// made in the chat; it becomes a task that runs it once when approved.
func TestToolGateHoldsCalls(t *testing.T) {
	publish := &fakeTool{name: "publish", cap: tool.CapabilityHigh}
	post := &fakeTool{name: "post", cap: tool.CapabilityMedium}
	e := newEnv(t, envOptions{policy: task.Policy{TrustedExecutors: []string{"trusted-bot"}},
		tools: toolSet{"publish": publish, "post": post}})
	ctx := t.Context()
	gate, err := task.NewToolGate("medium")
	if err != nil {
		t.Fatal(err)
	}
	caller := run.Caller{Principal: run.Principal{WorkspaceID: e.ws, Actor: run.ActorUser, ActorID: "alice", UserID: "alice"},
		Surface: run.SurfaceChat, ConversationID: "conv-1"}
	call := llm.ToolCall{ID: "call_1", Name: "publish", Arguments: `{"text":"release notes"}`}

	// Before a service is attached (the CLI's own process) nothing is held.
	if err := gate.For(caller, "writer").Allow(ctx, publish, call); err != nil {
		t.Fatalf("unattached gate = %v", err)
	}
	gate.Attach(e.svc)
	g := gate.For(caller, "writer")
	if err := g.Allow(ctx, &fakeTool{name: "lookup", cap: tool.CapabilityLow}, llm.ToolCall{ID: "c0", Arguments: `{}`}); err != nil {
		t.Errorf("low call = %v, want it run", err)
	}
	err = g.Allow(ctx, publish, call)
	if !errors.Is(err, task.ErrHeld) || !strings.Contains(err.Error(), "task ") {
		t.Fatalf("high call = %v, want held naming its task", err)
	}
	page, _ := e.st.Tasks().List(ctx, e.ws, store.TaskFilter{Source: string(run.SurfaceChat)})
	if len(page.Tasks) != 1 {
		t.Fatalf("tasks %+v, want the held call", page.Tasks)
	}
	tk := e.waitTask(t, page.Tasks[0].ID, store.TaskAwaitingApproval)
	if tk.Capability != store.CapabilityHigh || tk.CreatedBy != "user:alice" {
		t.Errorf("held task %+v", tk)
	}
	// The model retrying the same call id holds nothing new.
	if err := g.Allow(ctx, publish, call); !errors.Is(err, task.ErrHeld) {
		t.Errorf("retry = %v", err)
	}
	if page, _ = e.st.Tasks().List(ctx, e.ws, store.TaskFilter{}); len(page.Tasks) != 1 {
		t.Errorf("tasks after a retry of the call: %d, want 1", len(page.Tasks))
	}
	if calls, _ := e.eff.total(); calls != 0 {
		t.Fatalf("the held call ran before approval")
	}
	ap := e.pending(t, tk.ID)
	if _, err := e.svc.Decide(ctx, task.Decision{WorkspaceID: e.ws, ApprovalID: ap.ID, Approve: true, Approver: owner}); err != nil {
		t.Fatal(err)
	}
	e.waitTask(t, tk.ID, store.TaskDone)
	if calls, distinct := e.eff.total(); calls != 1 || distinct != 1 {
		t.Errorf("publish ran %d times, want once", calls)
	}
	v, _ := e.svc.Get(ctx, e.ws, tk.ID)
	if len(v.Steps) != 1 || !strings.Contains(string(v.Steps[0].Input), "release notes") {
		t.Errorf("evidence %+v; want the call's arguments", v.Steps)
	}

	// Medium: held, unless the agent is a trusted executor.
	if err := g.Allow(ctx, post, llm.ToolCall{ID: "call_2", Arguments: `{"to":"#general"}`}); !errors.Is(err, task.ErrHeld) {
		t.Errorf("medium call of an untrusted agent = %v, want held", err)
	}
	if err := gate.For(caller, "trusted-bot").Allow(ctx, post, llm.ToolCall{ID: "call_3", Arguments: `{}`}); err != nil {
		t.Errorf("medium call of a trusted agent = %v, want run", err)
	}
	high, _ := task.NewToolGate("high")
	high.Attach(e.svc)
	if err := high.For(caller, "writer").Allow(ctx, post, llm.ToolCall{ID: "call_4", Arguments: `{}`}); err != nil {
		t.Errorf("medium call with hold high = %v, want run", err)
	}
	if _, err := task.NewToolGate("sometimes"); err == nil {
		t.Error("NewToolGate accepted an unknown level")
	}
}

// TestToolGateThroughTheRunSeam: a chat agent whose model calls a high
// tool gets the held answer through run.Runner; the tool runs only when
// the held task is approved.
func TestToolGateThroughTheRunSeam(t *testing.T) {
	fake := llmtest.NewOpenAI(t,
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "call_9", Name: "publish", Arguments: `{"text":"v2 is out"}`}}},
		llmtest.Turn{Text: "The post awaits approval."},
	)
	srv := servertest.New(t, &servertest.Options{Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)}})
	publish := &fakeTool{name: "publish", cap: tool.CapabilityHigh}
	e := newEnv(t, envOptions{store: srv.Store, workspace: srv.Workspace.ID, tools: toolSet{"publish": publish}})
	if err := srv.Platform.Tools().Register(publish); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := srv.Platform.CreateAgent(ctx, store.Agent{WorkspaceID: e.ws, Name: "writer", Model: "fake/fake-model", Tools: []string{"publish"}}); err != nil {
		t.Fatal(err)
	}
	gate, _ := task.NewToolGate("high")
	gate.Attach(e.svc)
	runner := run.New(srv.Platform, &run.Options{CallerGate: gate})
	a, err := runner.Agent(ctx, run.Caller{Principal: run.Principal{WorkspaceID: e.ws, Actor: run.ActorUser, ActorID: "alice", UserID: "alice"}, Surface: run.SurfaceChat}, "writer")
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Generate(ctx, agent.Input{Messages: []llm.Message{llm.Text(llm.RoleUser, "announce v2")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Message.Text() != "The post awaits approval." {
		t.Errorf("answer %q", res.Message.Text())
	}
	if calls, _ := e.eff.total(); calls != 0 {
		t.Fatal("the high tool ran inside the chat")
	}
	reqs := fake.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "held for a person") {
		t.Errorf("the model was not told the call is held")
	}
	page, _ := e.st.Tasks().List(ctx, e.ws, store.TaskFilter{Source: string(run.SurfaceChat)})
	if len(page.Tasks) != 1 {
		t.Fatalf("held tasks %d, want 1", len(page.Tasks))
	}
	tk := e.waitTask(t, page.Tasks[0].ID, store.TaskAwaitingApproval)
	ap := e.pending(t, tk.ID)
	if _, err := e.svc.Decide(ctx, task.Decision{WorkspaceID: e.ws, ApprovalID: ap.ID, Approve: true, Approver: owner}); err != nil {
		t.Fatal(err)
	}
	e.waitTask(t, tk.ID, store.TaskDone)
	if calls, _ := e.eff.total(); calls != 1 {
		t.Errorf("publish ran %d times after approval, want 1", calls)
	}
}

// recordSender records what a channel was asked to deliver.
type recordSender struct {
	mu   sync.Mutex
	sent []string // target: text
}

func (r *recordSender) Send(_ context.Context, n store.Notification, m task.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, n.Target+": "+m.Text)
	return nil
}

func (r *recordSender) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.sent...)
}

// TestHeldCallAnswersInItsConversation: a call held in a stored
// conversation tells that conversation it waits, and, once approved and
// run, appends the result, so the thread continues from it.
func TestHeldCallAnswersInItsConversation(t *testing.T) {
	publish := &fakeTool{name: "publish", cap: tool.CapabilityHigh}
	e := newEnv(t, envOptions{tools: toolSet{"publish": publish}})
	conv := &recordSender{}
	e.svc.SetSender(task.ChannelConversation, conv)
	gate, _ := task.NewToolGate("high")
	gate.Attach(e.svc)
	ctx := t.Context()
	caller := run.Caller{Principal: run.Principal{WorkspaceID: e.ws, Actor: run.ActorUser, ActorID: "alice", UserID: "alice"},
		Surface: run.SurfaceChat, ConversationID: "conv-7"}
	err := gate.For(caller, "writer").Allow(ctx, publish, llm.ToolCall{ID: "c1", Arguments: `{"text":"hello"}`})
	if !errors.Is(err, task.ErrHeld) || !strings.Contains(err.Error(), "added to this conversation") {
		t.Fatalf("Allow = %v", err)
	}
	page, _ := e.st.Tasks().List(ctx, e.ws, store.TaskFilter{})
	tk := e.waitTask(t, page.Tasks[0].ID, store.TaskAwaitingApproval)
	if _, err := e.svc.Deliver(ctx); err != nil {
		t.Fatal(err)
	}
	if got := conv.all(); len(got) != 1 || !strings.HasPrefix(got[0], "conv-7: Approval needed (high)") {
		t.Fatalf("delivered %q; want the approval request in conversation conv-7", got)
	}
	ap := e.pending(t, tk.ID)
	if _, err := e.svc.Decide(ctx, task.Decision{WorkspaceID: e.ws, ApprovalID: ap.ID, Approve: true, Approver: owner}); err != nil {
		t.Fatal(err)
	}
	e.waitTask(t, tk.ID, store.TaskDone)
	// The result is queued just after the task is marked done (not in its
	// transaction): deliver until it has been, for a second at most.
	var got []string
	for deadline := time.Now().Add(time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := e.svc.Deliver(ctx); err != nil {
			t.Fatal(err)
		}
		if got = conv.all(); len(got) >= 2 || time.Now().After(deadline) {
			break
		}
	}
	if len(got) != 2 || !strings.HasPrefix(got[1], "conv-7: Approved and done: ") || !strings.Contains(got[1], `"text":"hello"`) {
		t.Errorf("delivered %q; want the result appended to the conversation", got)
	}
}
