package trigger_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/secret"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/trigger"
	"github.com/agentcraftlab/agentcraft/trigger/triggertest"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/workflowtest"
)

// actorResolver records whom each agent node of a run acts for.
type actorResolver struct {
	*workflowtest.Resolver
	mu     sync.Mutex
	actors []string
}

func (r *actorResolver) Named(ctx context.Context, at workflow.AgentCall, name string) (*agent.Agent, error) {
	r.mu.Lock()
	r.actors = append(r.actors, at.Actor)
	r.mu.Unlock()
	return r.Resolver.Named(ctx, at, name)
}

// TestAgentRunActsForTheTrigger: an agent a trigger runs is a durable run
// whose agent node acts as the trigger (system:trigger:<id> in the run
// seam), not as the executing worker.
func TestAgentRunActsForTheTrigger(t *testing.T) {
	st := openSQLite(t)
	ws, _ := mustWorkflow(t, st)
	res := &actorResolver{Resolver: workflowtest.NewResolver(t, llmtest.Turn{Text: "Summary done."})}
	res.Add("helper", "Summarise.")
	box, err := secret.New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	runs := controlplane.New(st, workflowtest.Engine(t, workflow.Services{Agents: res}), controlplane.Options{Owner: "w1"})
	svc, err := trigger.New(st, runs, box, &trigger.Options{Agents: agents{"helper": {Name: "helper"}}})
	if err != nil {
		t.Fatal(err)
	}
	tg, secretText, err := svc.Create(t.Context(), ws, trigger.Spec{Name: ptr("summarise"), Kind: ptr("webhook"), Agent: ptr("helper")})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	d, err := svc.Deliver(t.Context(), tg.ID, triggertest.Headers(secretText, now, `"the minutes"`, "m1"), []byte(`"the minutes"`), 0, now)
	if err != nil {
		t.Fatal(err)
	}
	runs.Wait()
	run, err := st.Runs().Get(t.Context(), ws, d.Run.ID)
	if err != nil || run.Status != store.RunSucceeded || string(run.Output) != `"Summary done."` {
		t.Fatalf("run = %+v (%s), %v; want the agent's answer", run, run.Output, err)
	}
	if want := []string{"trigger:" + tg.ID}; !slices.Equal(res.actors, want) {
		t.Errorf("agent node acted as %v, want %v", res.actors, want)
	}
	if got := trigger.Actor(tg.ID); got != "system:trigger:"+tg.ID {
		t.Errorf("Actor = %q", got)
	}
}
