package autonomous_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/autonomous"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/search/memory"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/nodes"
)

func registry(t *testing.T) *workflow.Registry {
	t.Helper()
	reg := workflow.NewRegistry()
	if err := nodes.RegisterBuiltins(reg); err != nil {
		t.Fatal(err)
	}
	return reg
}

// A plan whose second step lacks its incoming edge is repaired: the steps
// are listed in order and the first has no outgoing edge.
func TestCheckPlanRepairsMissingEdge(t *testing.T) {
	answer := "Here is the plan:\n```json\n" + `{"goal":"greet","nodes":[
		{"id":"draft","kind":"agent","config":{"prompt":"Write a greeting for {{input}}"}},
		{"id":"polish","kind":"code","config":{"mode":"text","operation":"trim"}},
		{"id":"shout","kind":"code","config":{"mode":"text","operation":"upper"}}],
		"edges":[{"from":"polish","to":"shout"}]}` + "\n```"
	c, err := autonomous.CheckPlan(answer)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Plan.Edges) != 2 || c.Plan.Edges[1] != (autonomous.FlowEdge{From: "draft", To: "polish"}) {
		t.Fatalf("edges = %+v", c.Plan.Edges)
	}
	if len(c.Repairs) != 1 || !strings.Contains(c.Repairs[0], "draft → polish") {
		t.Errorf("repairs = %q", c.Repairs)
	}
	def, err := autonomous.Definition(c.Plan, "greet", "fake/m", registry(t))
	if err != nil {
		t.Fatal(err)
	}
	if def.Nodes[1].Config["model"] != "fake/m" {
		t.Errorf("the agent step did not get the executor model: %+v", def.Nodes[1])
	}
}

// A plan with an unknown kind is refused with the kind's JSON path; one
// whose gap cannot be linked safely is refused at the step.
func TestCheckPlanRefuses(t *testing.T) {
	_, err := autonomous.CheckPlan(`{"nodes":[{"id":"a","kind":"agent"},{"id":"b","kind":"code"},{"id":"c","kind":"teleport"}],"edges":[{"from":"a","to":"b"},{"from":"b","to":"c"}]}`)
	var pe *autonomous.PlanError
	if !errors.As(err, &pe) || pe.Problems[0].Path != "nodes[2].kind" {
		t.Fatalf("err = %v", err)
	}
	_, err = autonomous.CheckPlan(`{"nodes":[{"id":"a","kind":"condition","config":{"expression":"true"}},{"id":"b","kind":"code"}]}`)
	if !errors.As(err, &pe) || pe.Problems[0].Path != "nodes[1]" {
		t.Fatalf("err = %v", err)
	}
	_, err = autonomous.CheckPlan(`{"nodes":[{"id":"a","kind":"agent"}],"edges":[{"from":"a","to":"zz"}]}`)
	if !errors.As(err, &pe) || pe.Problems[0].Path != "edges[0].to" {
		t.Fatalf("err = %v", err)
	}
	// A config the workflow kind refuses is reported at the plan's path.
	c, err := autonomous.CheckPlan(`{"nodes":[{"id":"a","kind":"code","config":{"mode":"text","operation":"explode"}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = autonomous.Definition(c.Plan, "x", "fake/m", registry(t))
	if !errors.As(err, &pe) || !strings.HasPrefix(pe.Problems[0].Path, "nodes[0].config.operation") {
		t.Fatalf("err = %v", err)
	}
}

// The planner's answer is checked; the closest remembered plan is shown
// to it as a reference.
func TestPlanWithMemory(t *testing.T) {
	eng, err := memory.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	mem := autonomous.NewMemory(eng)
	ctx := context.Background()
	old := autonomous.FlowPlan{Goal: "summarise the weekly sales report", Nodes: []autonomous.FlowNode{{ID: "sum", Kind: "agent"}}}
	if err := mem.Remember(ctx, "ws1", old); err != nil {
		t.Fatal(err)
	}
	if err := mem.Remember(ctx, "ws1", autonomous.FlowPlan{Goal: "translate the manual to Japanese", Nodes: []autonomous.FlowNode{{ID: "tr", Kind: "agent"}}}); err != nil {
		t.Fatal(err)
	}
	ref, err := mem.Closest(ctx, "ws1", "summarise the monthly sales report")
	if err != nil || ref == nil || ref.Goal != old.Goal {
		t.Fatalf("closest = %+v, %v", ref, err)
	}
	if other, _ := mem.Closest(ctx, "ws2", "summarise the monthly sales report"); other != nil {
		t.Fatal("a plan of another workspace was recalled")
	}
	srv := llmtest.NewOpenAI(t, llmtest.Turn{Text: `{"nodes":[{"id":"sum","kind":"agent","config":{"prompt":"{{input}}"}}]}`})
	c, _, err := autonomous.Plan(ctx, autonomous.Model{Model: model(t, srv), ID: "planner"}, "summarise the monthly sales report", nil, ref)
	if err != nil {
		t.Fatal(err)
	}
	if c.Plan.Goal != "summarise the monthly sales report" || len(c.Plan.Nodes) != 1 {
		t.Fatalf("plan = %+v", c.Plan)
	}
	if !bodyHas(srv.Requests()[0].Body, "weekly sales report") {
		t.Error("the reference plan was not shown to the planner")
	}
}

// A ReAct trace of two spawned sub-agents becomes a parallel plan that
// validates as a workflow.
func TestPlanOfTrace(t *testing.T) {
	p := autonomous.PlanOfTrace("report on alpha and beta", []autonomous.TraceStep{
		{Agent: "researcher", Instructions: "Research.", Task: "topic alpha", Async: true},
		{Agent: "researcher", Instructions: "Research.", Task: "topic beta", Async: true},
	})
	if _, err := autonomous.CheckPlan(p); err != nil {
		t.Fatal(err)
	}
	if _, err := autonomous.Definition(*p, "report", "fake/m", registry(t)); err != nil {
		t.Fatal(err)
	}
	if p.Nodes[0].Kind != "parallel" || len(p.Nodes) != 5 {
		t.Fatalf("plan = %+v", p)
	}
}

// TestDropWorkspaceForgetsItsPlans: a deleted workspace's remembered plans
// go with it; another workspace's stay.
func TestDropWorkspaceForgetsItsPlans(t *testing.T) {
	eng, err := memory.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	mem := autonomous.NewMemory(eng)
	ctx := context.Background()
	for _, ws := range []string{"ws1", "ws2"} {
		if err := mem.Remember(ctx, ws, autonomous.FlowPlan{Goal: "summarise the weekly sales report of " + ws, Nodes: []autonomous.FlowNode{{ID: "sum", Kind: "agent"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := mem.DropWorkspace(ctx, "ws1"); err != nil {
		t.Fatal(err)
	}
	if p, err := mem.Closest(ctx, "ws1", "summarise the sales report"); err != nil || p != nil {
		t.Errorf("ws1's closest plan after the drop = %+v, %v; want none", p, err)
	}
	if p, err := mem.Closest(ctx, "ws2", "summarise the sales report"); err != nil || p == nil {
		t.Errorf("ws2's closest plan = %+v, %v; want its plan kept", p, err)
	}
}
