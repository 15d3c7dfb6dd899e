package nodes

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/transform"
)

// toolKind calls one of the workspace's tools as a recorded step of the
// run's task.
func toolKind() workflow.Kind {
	return workflow.Kind{
		Type:               "tool",
		Title:              "Tool",
		Category:           workflow.CategoryIntegration,
		SideEffects:        true,
		Example:            map[string]any{"tool": "current_time", "input": map[string]any{}},
		Doc:                "Calls a workspace tool once, as a recorded step with evidence; medium and high tools need an approval node first.",
		Execute:            execTool,
		IsExecutable:       true,
		RequiresImperative: true,
		Config: []workflow.ConfigKey{
			{Name: "tool", Type: workflow.TypeString, Required: true, Doc: "the tool's name, as agents list it (calendar_create_event, mcp server__tool, …)"},
			{Name: "input", Type: workflow.TypeObject, Doc: "the tool's arguments; string values are templates, such as {{vars.title}}"},
			{Name: "summary", Type: workflow.TypeTemplate, Doc: "what the call does, in words, for the evidence ledger"},
		},
	}
}

// execTool renders the arguments and hands the call to Services.Actions,
// which records the step before the effect and returns the recorded
// output when the run resumes past a call already made.
func execTool(ctx context.Context, x *workflow.Exec) (workflow.Result, error) {
	if x.Services.Actions == nil {
		return workflow.Result{}, errors.New("tool nodes need the task service, which this server does not run")
	}
	name, _ := x.Node.Config["tool"].(string)
	input := map[string]any{}
	if raw, ok := x.Node.Config["input"].(map[string]any); ok {
		v, err := renderValues(raw, x.Data, "config.input")
		if err != nil {
			return workflow.Result{}, err
		}
		input = v.(map[string]any)
	}
	var summary string
	if _, ok := x.Node.Config["summary"]; ok {
		s, err := x.ConfigTemplate("summary", "")
		if err != nil {
			return workflow.Result{}, err
		}
		summary, _ = textOf(s)
	}
	out, err := x.Services.Actions.Act(ctx, workflow.ToolCall{WorkspaceID: x.WorkspaceID, RunID: x.RunID,
		NodeID: x.Node.ID, Key: x.Key, Tool: name, Input: input, Summary: summary})
	if err != nil {
		return workflow.Result{}, fmt.Errorf("tool %s: %w", name, err)
	}
	return workflow.Result{Output: out}, nil
}

// renderValues resolves every string in v (nested in objects and arrays)
// as a template; a string that is one reference keeps its type.
func renderValues(v any, data transform.Data, at string) (any, error) {
	switch t := v.(type) {
	case string:
		r, err := transform.Resolve(t, data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		return r, nil
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			r, err := renderValues(e, data, at+"."+k)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			r, err := renderValues(e, data, fmt.Sprintf("%s[%d]", at, i))
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return v, nil
}
