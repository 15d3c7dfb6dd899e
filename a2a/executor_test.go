package a2a

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/agentcraftlab/agentcraft/agent"
)

// refusingAgents describes its one agent and refuses to run it, as the
// platform does for a workspace that has spent its budget.
type refusingAgents struct{ gets *int }

func (a refusingAgents) List(context.Context) ([]AgentInfo, error) { return nil, nil }
func (a refusingAgents) Describe(context.Context, string) (AgentInfo, error) {
	return AgentInfo{Name: "helper"}, nil
}
func (a refusingAgents) Get(context.Context, string) (*agent.Agent, AgentInfo, error) {
	*a.gets++
	return nil, AgentInfo{}, &RefusalError{Status: http.StatusTooManyRequests, Message: "budget spent", Err: errors.New("quota")}
}
func (a refusingAgents) Scope(context.Context) string { return "ws" }

// TestExecutorResolvesUnresolvedAgent: a message that reaches the executor
// with only a described agent (one ServeHTTP did not recognise as a
// message) is resolved through Agents.Get before anything runs, so its
// refusal stands.
func TestExecutorResolvesUnresolvedAgent(t *testing.T) {
	var gets int
	s, err := NewServer(&ServerOptions{Agents: refusingAgents{gets: &gets}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.WithValue(t.Context(), callKey{}, &call{name: "helper", info: AgentInfo{Name: "helper"}, scope: "ws\x00helper"})
	ec := &a2asrv.ExecutorContext{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi")), TaskID: a2a.NewTaskID()}
	var events int
	var first error
	for ev, err := range (&executor{s: s}).Execute(ctx, ec) {
		if err != nil {
			first = err
			break
		}
		if ev != nil {
			events++
		}
	}
	if gets != 1 || events != 0 || first == nil || !strings.Contains(first.Error(), "budget spent") {
		t.Errorf("Execute of an unresolved agent: %d Get calls, %d events, error %v; want one Get and its refusal before any event", gets, events, first)
	}
}
