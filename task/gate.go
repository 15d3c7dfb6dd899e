package task

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/run"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool"
)

// ToolGate is the run seam's gate (run.Options.Gate) over every agent's
// server tool calls on every surface — /v1, /api/chat, MCP, A2A, AG-UI,
// workflow agent nodes: a call of the held capability or above is not
// made in the run. It becomes a task of the caller's whose plan is that
// one call: it waits for an approval like any task step (the card to
// the inbox), runs exactly once when approved (the ledger, across
// restarts), and its result is the task's. The model is told the call
// is held, and says so. Calls of lower capability, and medium ones of a
// trusted executor, run as before.
type ToolGate struct {
	hold store.Capability

	mu  sync.Mutex // guards svc
	svc *Service
}

// NewToolGate holds calls of capability hold ("medium" or "high") and
// above; "" or "off" holds nothing.
func NewToolGate(hold string) (*ToolGate, error) {
	switch hold {
	case "", "off":
		return &ToolGate{}, nil
	case "medium", "high":
		return &ToolGate{hold: store.Capability(hold)}, nil
	}
	return nil, fmt.Errorf("task: hold %q is not off, medium or high", hold)
}

// Attach gives the gate the service whose tasks held calls become; until
// then (a process without one, such as the CLI's `agentcraft run`) the
// gate holds nothing.
func (g *ToolGate) Attach(s *Service) {
	g.mu.Lock()
	g.svc = s
	g.mu.Unlock()
}

func (g *ToolGate) service() *Service {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.svc
}

// For implements run.CallerGate.
func (g *ToolGate) For(c run.Caller, agentName string) agent.Gate {
	return callGate{g: g, c: c, agent: agentName}
}

var _ run.CallerGate = (*ToolGate)(nil)

type callGate struct {
	g     *ToolGate
	c     run.Caller
	agent string
}

// ChannelConversation is the channel of a held call's answers when it
// was made in a stored conversation: Target is the conversation id.
const ChannelConversation = "conversation"

// ActionCallTool is the intent action of a held call's task.
const ActionCallTool = "call_tool"

// ErrHeld is the refusal of a held call; the model reads its text.
var ErrHeld = errors.New("held for a person's approval")

func (cg callGate) Allow(ctx context.Context, t tool.Tool, call llm.ToolCall) error {
	g := cg.g
	s := g.service()
	if g.hold == "" || s == nil {
		return nil
	}
	c := storeCapability(t.Capability())
	if t.Name() == ToolKBSearch {
		c = store.CapabilityLow // the workspace's own knowledge: see workspaceRead
	}
	if rank(c) < rank(g.hold) || c == store.CapabilityMedium && s.policy.of(ctx, cg.c.WorkspaceID).Trusts(cg.agent) {
		return nil
	}
	var input map[string]any
	if err := json.Unmarshal([]byte(call.Arguments), &input); err != nil {
		return fmt.Errorf("%w: its arguments are not a JSON object", ErrHeld)
	}
	ref := "call:" + cg.c.RunID + cg.c.ConversationID + ":" + call.ID
	if call.ID == "" {
		ref = ""
	}
	summary := fmt.Sprintf("%s calls %s (%s) with %s", cmp.Or(cg.agent, "an agent"), t.Name(), c, clip(call.Arguments, 300))
	// In a stored conversation, the approval request and the call's
	// result are appended to it (the "conversation" channel's sender),
	// so the thread goes on from the result once a person decided.
	var replyTo Address
	if cg.c.ConversationID != "" {
		replyTo = Address{Channel: ChannelConversation, Target: cg.c.ConversationID}
	}
	out, err := s.Submit(context.WithoutCancel(ctx), Request{WorkspaceID: cg.c.WorkspaceID, Source: string(cg.c.Surface), SourceRef: ref, ReplyTo: replyTo,
		Intent:    &Intent{Action: ActionCallTool, Object: t.Name(), Target: summary},
		Requester: Requester{UserID: cg.c.UserID, Actor: cg.c.ActorString()},
		Plan:      &Plan{Agent: cmp.Or(cg.agent, "agent"), Steps: []Step{{Tool: t.Name(), Input: input, Summary: summary}}}})
	if err != nil {
		return fmt.Errorf("%w, and could not be held: %v", ErrHeld, err)
	}
	if out.Task.Status == store.TaskFailed {
		return fmt.Errorf("%w, and could not be held: task %s failed", ErrHeld, out.Task.ID)
	}
	where := "its result will be on that task"
	if replyTo.Channel != "" {
		where = "its result will be added to this conversation"
	}
	return fmt.Errorf("%w: it is %s-capability, so it waits as task %s until someone allowed to approves it, and then runs once; %s. Tell the user it awaits approval", ErrHeld, c, out.Task.ID, where)
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
