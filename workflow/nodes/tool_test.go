package nodes_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/workflowtest"
)

// fakeActions records what tool and approval nodes ask of the task
// service and answers approvals from a table.
type fakeActions struct {
	calls     []workflow.ToolCall
	asked     []workflow.ApprovalRequest
	approvals map[string]workflow.ApprovalState // by step key
	fail      error
}

func (f *fakeActions) Act(_ context.Context, c workflow.ToolCall) (any, error) {
	f.calls = append(f.calls, c)
	if f.fail != nil {
		return nil, f.fail
	}
	return map[string]any{"did": c.Tool, "with": c.Input}, nil
}

func (f *fakeActions) Approval(_ context.Context, r workflow.ApprovalRequest) (workflow.ApprovalState, error) {
	f.asked = append(f.asked, r)
	if st, ok := f.approvals[r.StepKey]; ok {
		return st, nil
	}
	exp := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	return workflow.ApprovalState{ID: "ap-" + r.StepKey, Status: workflow.ApprovalPending, ExpiresAt: &exp}, nil
}

const gatedFlow = `{"name":"w","nodes":[{"id":"start","type":"start"},
	{"id":"ask","type":"approval","config":{"step":"create","summary":"Create {{vars.title}}","capability":"high","ttl":"2h"}},
	{"id":"create","type":"tool","config":{"tool":"calendar_create_event","summary":"create {{vars.title}}","input":{"summary":"{{vars.title}}","n":"{{vars.n}}","tags":["{{input.approver}}", 3]}}},
	{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"ask"},{"id":"e2","source":"ask","target":"create"},{"id":"e3","source":"create","target":"end"}]}`

func TestApprovalGatesToolNode(t *testing.T) {
	acts := &fakeActions{approvals: map[string]workflow.ApprovalState{}}
	e := workflowtest.Engine(t, workflow.Services{Actions: acts})
	p := workflowtest.Parse(t, e, gatedFlow)
	cp := &workflowtest.MemoryCheckpoints{}
	req := workflow.Request{RunID: "r1", WorkspaceID: "ws", Input: "x", Vars: map[string]any{"title": "Standup", "n": 2.0}, Checkpoints: cp}

	out := e.Run(t.Context(), p, req)
	if out.Status != workflow.StatusWaiting || out.WaitingNode != "ask" || out.Wait.ApprovalID != "ap-create" || out.Wait.Prompt != "Create Standup" || out.Wait.Deadline == nil {
		t.Fatalf("first run: %+v (wait %+v); want parked at ask with its approval", out, out.Wait)
	}
	if len(acts.calls) != 0 {
		t.Fatalf("tool called before approval: %+v", acts.calls)
	}
	want := workflow.ApprovalRequest{WorkspaceID: "ws", RunID: "r1", NodeID: "ask", StepKey: "create", Summary: "Create Standup", Capability: "high", TTL: 2 * time.Hour}
	if diff := cmp.Diff([]workflow.ApprovalRequest{want}, acts.asked); diff != "" {
		t.Errorf("approval asked (-want +got):\n%s", diff)
	}

	// A decision made while the run was not parked (a crash between
	// asking and parking) is read on the next execution: no second wait.
	acts.approvals["create"] = workflow.ApprovalState{ID: "ap-create", Status: workflow.ApprovalApproved, Approver: "user:u2"}
	out = e.Run(t.Context(), p, req)
	if out.Status != workflow.StatusSucceeded {
		t.Fatalf("after approval: %+v", out)
	}
	if len(acts.calls) != 1 {
		t.Fatalf("tool calls = %d, want 1", len(acts.calls))
	}
	c := acts.calls[0]
	wantInput := map[string]any{"summary": "Standup", "n": 2.0, "tags": []any{"user:u2", 3.0}}
	if c.Tool != "calendar_create_event" || c.Key != "create" || c.NodeID != "create" || c.RunID != "r1" || c.WorkspaceID != "ws" || c.Summary != "create Standup" || !cmp.Equal(c.Input, wantInput) {
		t.Errorf("tool call %+v; want calendar_create_event with input %v", c, wantInput)
	}
	if !slices.Equal(cp.Order, []string{"ask", "create"}) {
		t.Errorf("checkpoints %v", cp.Order)
	}
}

func TestApprovalRejectedFailsRun(t *testing.T) {
	for _, status := range []string{workflow.ApprovalRejected, workflow.ApprovalExpired} {
		acts := &fakeActions{approvals: map[string]workflow.ApprovalState{"create": {ID: "ap1", Status: status}}}
		e := workflowtest.Engine(t, workflow.Services{Actions: acts})
		out := e.Run(t.Context(), workflowtest.Parse(t, e, gatedFlow), workflow.Request{RunID: "r1", Vars: map[string]any{"title": "T", "n": 1.0}})
		if out.Status != workflow.StatusFailed || !strings.Contains(out.Error, "approval ap1 of create was "+status) {
			t.Errorf("%s: outcome %+v; want failed naming the approval", status, out)
		}
		if len(acts.calls) != 0 {
			t.Errorf("%s: the tool ran: %+v", status, acts.calls)
		}
	}
}

func TestToolNodeErrors(t *testing.T) {
	src := `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"t","type":"tool","config":{"tool":"current_time"}},{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"t"},{"id":"e2","source":"t","target":"end"}]}`
	e := workflowtest.Engine(t, workflow.Services{})
	out := e.Run(t.Context(), workflowtest.Parse(t, e, src), workflow.Request{RunID: "r1"})
	if out.Status != workflow.StatusFailed || !strings.Contains(out.Error, "task service") {
		t.Errorf("without Actions: %+v; want failed naming the task service", out)
	}
	acts := &fakeActions{fail: errors.New("refused: needs approval")}
	e = workflowtest.Engine(t, workflow.Services{Actions: acts})
	out = e.Run(t.Context(), workflowtest.Parse(t, e, src), workflow.Request{RunID: "r1"})
	if out.Status != workflow.StatusFailed || !strings.Contains(out.Error, "tool current_time: refused: needs approval") {
		t.Errorf("refused call: %+v", out)
	}
	if len(acts.calls) != 1 || len(acts.calls[0].Input) != 0 {
		t.Errorf("calls %+v; want one with empty input", acts.calls)
	}
}
