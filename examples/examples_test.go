package examples_test

import (
	"os"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/workflowtest"
)

const (
	goodPlan     = `{"topic": "Heat pumps for old houses", "audience": "home owners", "outline": ["how they work", "insulation first", "costs"]}`
	goodResearch = "Here is what I found:\n```json\n{\"facts\": [\"Heat pumps move heat rather than make it\", \"A COP of 3 is common\"], \"sources\": [\"energy.gov\"]}\n```"
	goodWriting  = `{"tags": ["heat pumps", "retrofit", "energy"], "x_posts": ["Old house? A heat pump can still work.", "Insulate first, then size the pump.", "COP 3 means 3 kWh of heat per kWh."], "article": "# Heat pumps for old houses\n\nThey move heat..."}`
)

func runPackage(t *testing.T, turns ...llmtest.Turn) (workflow.Outcome, *workflowtest.Recorder, *workflowtest.Resolver) {
	t.Helper()
	src, err := os.ReadFile("content-package.json")
	if err != nil {
		t.Fatal(err)
	}
	res := workflowtest.NewResolver(t, turns...)
	e := workflowtest.Engine(t, workflow.Services{Agents: res})
	p := workflowtest.Parse(t, e, string(src))
	if p.Strategy != workflow.StrategySequential {
		t.Errorf("strategy %s, want sequential (three agents in a chain)", p.Strategy)
	}
	rec := &workflowtest.Recorder{}
	out := e.Run(t.Context(), p, workflow.Request{RunID: "r", Input: "heat pumps", Emit: rec.Emit})
	return out, rec, res
}

func contractEvents(rec *workflowtest.Recorder) map[string]string {
	got := map[string]string{}
	for _, ev := range rec.Events {
		if ev.Type == workflow.EventContract {
			got[ev.NodeID] = ev.Status
		}
	}
	return got
}

func TestContentPackageGood(t *testing.T) {
	out, rec, res := runPackage(t, llmtest.Turn{Text: goodPlan}, llmtest.Turn{Text: goodResearch}, llmtest.Turn{Text: goodWriting})
	if out.Status != workflow.StatusSucceeded {
		t.Fatalf("status %s: %s", out.Status, out.Error)
	}
	pkg, ok := out.Output.(map[string]any)
	if !ok {
		t.Fatalf("output %T %v, want the checked package object", out.Output, out.Output)
	}
	if a, _ := pkg["article"].(string); strings.TrimSpace(a) == "" {
		t.Error("empty article")
	}
	for _, k := range []string{"x_posts", "tags"} {
		if l, _ := pkg[k].([]any); len(l) == 0 {
			t.Errorf("empty %s", k)
		}
	}
	if got := contractEvents(rec); got["plan_gate"] != "ok" || got["research_gate"] != "ok" || got["package_check"] != "ok" {
		t.Errorf("contract results %v", got)
	}
	reqs := res.LLM.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3", len(reqs))
	}
	// The writer got the normalized plan (with the tone default) and the
	// facts extracted from the researcher's fenced JSON.
	body := string(reqs[2].Body)
	for _, want := range []string{"Heat pumps for old houses", "clear and friendly", "600 words", "A COP of 3 is common"} {
		if !strings.Contains(body, want) {
			t.Errorf("writer request lacks %q", want)
		}
	}
}

func TestContentPackageBroken(t *testing.T) {
	cases := []struct {
		name   string
		turns  []llmtest.Turn
		gate   string // node that must fail the contract
		calls  int    // model calls made: none after the gate
		reason string
	}{
		{
			name:   "planning_returns_only_handoff",
			turns:  []llmtest.Turn{{Text: `{"handoff": "research"}`}, {Text: goodResearch}, {Text: goodWriting}},
			gate:   "plan_gate",
			calls:  1,
			reason: "missing required audience, outline, topic",
		},
		{
			name: "writing_echoes_field_names",
			turns: []llmtest.Turn{{Text: goodPlan}, {Text: goodResearch},
				{Text: `{"tags": ["heat pumps"], "x_posts": ["x_posts"], "article": "# Heat pumps\n\nText."}`}},
			gate:   "package_check",
			calls:  3,
			reason: "x_posts",
		},
		{
			name:   "research_without_facts",
			turns:  []llmtest.Turn{{Text: goodPlan}, {Text: `{"sources": ["somewhere"]}`}, {Text: goodWriting}},
			gate:   "research_gate",
			calls:  2,
			reason: "missing required facts",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, rec, res := runPackage(t, c.turns...)
			if out.Status != workflow.StatusFailedContract {
				t.Fatalf("status %s (%s), want failed_contract", out.Status, out.Error)
			}
			if !strings.Contains(out.Error, `"`+c.gate+`"`) || !strings.Contains(out.Error, c.reason) {
				t.Errorf("error %q does not name gate %s and %q", out.Error, c.gate, c.reason)
			}
			if got := contractEvents(rec)[c.gate]; got != "failed" {
				t.Errorf("contract event of %s: %q", c.gate, got)
			}
			if n := len(res.LLM.Requests()); n != c.calls {
				t.Errorf("%d model calls, want %d: no agent after the gate may run", n, c.calls)
			}
			for _, ev := range rec.Events {
				if ev.Type == workflow.EventNodeFinished && ev.NodeID == "end" {
					t.Error("the end node ran after a failed contract")
				}
			}
		})
	}
}
