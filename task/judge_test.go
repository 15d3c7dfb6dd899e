package task_test

import (
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/task"
)

// travelAgent handles what a model judges to be travel.
func travelAgent() task.Agent {
	a := stepsAgent("kb_search")
	a.Name = "travel"
	a.Handles = []task.Rule{{Judge: "books business trips: trains, flights and hotels", Score: 0.9}}
	return a
}

// TestJudgedRouting: an agent whose canHandle is a description gets the
// intents a model scores high enough, through the run seam; expression
// rules that already score as high are not second-guessed.
func TestJudgedRouting(t *testing.T) {
	fake := llmtest.NewOpenAI(t)
	srv := servertest.New(t, &servertest.Options{Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)}})
	judge := task.NewModelJudge(srv.Runner, "fake/fake-model")
	e := newEnv(t, envOptions{store: srv.Store, workspace: srv.Workspace.ID, judge: judge,
		agents: append(task.BuiltinAgents(), travelAgent())})

	fake.Push(llmtest.Turn{Text: "```json\n{\"score\": 0.8}\n```"})
	out := e.submit(t, task.Intent{Action: "arrange", Object: "trip", Target: "大阪出張 12/10-12/11"}, "")
	if out.Agent != "travel" {
		t.Fatalf("judged 0.8: agent %q (question %q), want travel", out.Agent, out.Question)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), "books business trips") || !strings.Contains(string(reqs[0].Body), "大阪出張") {
		t.Errorf("judge request: %d; want one naming the description and the intent", len(reqs))
	}

	fake.Push(llmtest.Turn{Text: `{"score": 0.2}`})
	out = e.submit(t, task.Intent{Action: "arrange", Object: "party"}, "")
	if out.Agent != "" || out.Question == "" || out.Task.Status != store.TaskCancelled {
		t.Errorf("judged 0.2: %+v; want no agent and a question", out)
	}

	fake.Push(llmtest.Turn{Text: `I think it is a good fit.`}) // breaks the contract: no route
	out = e.submit(t, task.Intent{Action: "arrange", Object: "dinner"}, "")
	if out.Agent != "" || out.Question == "" {
		t.Errorf("a judge answer breaking its contract: %+v; want no agent", out)
	}

	before := len(fake.Requests())
	out = e.submit(t, task.Intent{Action: "search", Object: "document", Target: "travel policy"}, "")
	if out.Agent != task.AgentResearch || len(fake.Requests()) != before {
		t.Errorf("an expression rule at 0.9: agent %q, %d judge requests; want research without asking", out.Agent, len(fake.Requests())-before)
	}
	if _, err := task.NewRouter(task.Agent{Name: "x", Plan: travelAgent().Plan, Handles: []task.Rule{{When: "true", Judge: "y", Score: 1}}}); err == nil {
		t.Error("a rule with both when and judge was accepted")
	}
}
