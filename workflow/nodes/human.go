package nodes

import (
	"context"
	"fmt"
	"time"

	"github.com/agentcraftlab/agentcraft/workflow"
)

// human parks the run until a person answers.
func human() workflow.Kind {
	return workflow.Kind{
		Type:               "human",
		Title:              "Human input",
		Category:           workflow.CategoryHuman,
		WaitsForHuman:      true,
		Example:            map[string]any{"prompt": "Approve this draft?"},
		Doc:                "Pauses the run until a person answers, optionally through a form.",
		Execute:            execHuman,
		IsExecutable:       true,
		RequiresImperative: true,
		Config: []workflow.ConfigKey{
			{Name: "prompt", Type: workflow.TypeTemplate, Required: true, Doc: "what the person is asked"},
			{Name: "form_schema", Type: workflow.TypeObject, Doc: "JSON Schema of the answer form; default: free text"},
			{Name: "timeout", Type: workflow.TypeDuration, Doc: "how long to wait before the run fails; default: no limit"},
		},
	}
}

// execHuman parks the run until a person answers through the API. The
// answer becomes the node's output when the run resumes.
func execHuman(_ context.Context, x *workflow.Exec) (workflow.Result, error) {
	prompt, err := x.ConfigTemplate("prompt", "")
	if err != nil {
		return workflow.Result{}, err
	}
	text, _ := textOf(prompt)
	w := &workflow.Wait{Prompt: text}
	if fs, ok := x.Node.Config["form_schema"].(map[string]any); ok {
		w.FormSchema = fs
	}
	if t, ok := x.Node.Config["timeout"].(string); ok {
		d, err := time.ParseDuration(t)
		if err != nil {
			return workflow.Result{}, fmt.Errorf("config.timeout: %w", err)
		}
		deadline := time.Now().Add(d).UTC()
		w.Deadline = &deadline
	}
	return workflow.Result{Wait: w}, nil
}
