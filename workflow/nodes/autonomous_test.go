package nodes_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/agentcraftlab/agentcraft/autonomous"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/workflowtest"
)

type planKeeper struct {
	mu    sync.Mutex
	plans map[string][]autonomous.FlowPlan // by workspace
}

func (k *planKeeper) KeepPlan(_ context.Context, ws string, raw json.RawMessage) error {
	var p autonomous.FlowPlan
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.plans[ws] = append(k.plans[ws], p)
	return nil
}

// An autonomous node whose run spawned and collected two sub-agents keeps
// the plan of that trace (a parallel step with one branch each, then the
// answer) in the execution memory, in the run's workspace.
func TestAutonomousNodeKeepsTracePlan(t *testing.T) {
	res := workflowtest.NewResolver(t,
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "create_agent", Arguments: `{"name":"researcher","instructions":"Research one topic."}`}}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{
			{ID: "s1", Name: "spawn_agent", Arguments: `{"name":"researcher","task":"topic alpha"}`},
			{ID: "s2", Name: "spawn_agent", Arguments: `{"name":"researcher","task":"topic beta"}`}}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "c2", Name: "collect_results", Arguments: `{}`}}},
		llmtest.Turn{Text: "Report on both."},
	)
	res.LLM.Respond(func(body []byte) (llmtest.Turn, bool) {
		if strings.Contains(string(body), "You are a sub-agent") {
			return llmtest.Turn{Text: "facts"}, true
		}
		return llmtest.Turn{}, false
	})
	keep := &planKeeper{plans: map[string][]autonomous.FlowPlan{}}
	e := workflowtest.Engine(t, workflow.Services{Agents: res, Plans: keep})
	p := workflowtest.Parse(t, e, `{"name":"auto","nodes":[{"id":"start","type":"start"},
{"id":"lead","type":"autonomous","config":{"model":"fake/m","goal":"Report on alpha and beta: {{input}}"}},
{"id":"end","type":"end"}],
"edges":[{"id":"e1","source":"start","target":"lead"},{"id":"e2","source":"lead","target":"end"}]}`)
	out := e.Run(t.Context(), p, workflow.Request{RunID: "r1", WorkspaceID: "ws1", Input: "now"})
	if out.Status != workflow.StatusSucceeded || out.Output != "Report on both." {
		t.Fatalf("run = %s %q, output %v", out.Status, out.Error, out.Output)
	}
	kept := keep.plans["ws1"]
	if len(kept) != 1 {
		t.Fatalf("plans kept = %+v, want one in ws1", keep.plans)
	}
	pl := kept[0]
	if pl.Goal != "Report on alpha and beta: now" || pl.Nodes[0].Kind != "parallel" || pl.Nodes[len(pl.Nodes)-1].ID != "answer" {
		t.Errorf("kept plan = %+v", pl)
	}
	if _, err := autonomous.CheckPlan(pl); err != nil {
		t.Errorf("the kept plan does not pass the gate: %v", err)
	}
}
