package agent

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/llm"
)

func TestWarningsComeFirst(t *testing.T) {
	model := script(t, turn{events: events(text("Fine."), finish(llm.FinishStop, 3, 1))})
	a := &Agent{Name: "helper", Model: model, ModelID: "m",
		Warnings: []string{`MCP server "github" is down: its tools are left out`}}
	got, err := collect(a.Run(context.Background(), Input{Messages: []llm.Message{llm.Text(llm.RoleUser, "Hi")}}))
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{Type: EventWarning, Text: `MCP server "github" is down: its tools are left out`},
		{Type: EventTextDelta, Step: 1, Text: "Fine."},
		{Type: EventFinish, Step: 1, FinishReason: llm.FinishStop, Usage: usage(3, 1), Steps: 1,
			Messages: []llm.Message{llm.Text(llm.RoleAssistant, "Fine.")}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
