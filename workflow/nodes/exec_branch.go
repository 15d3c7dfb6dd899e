package nodes

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// execCondition evaluates the expression and leaves by "true" or "false";
// its output is its input, so the branch sees the same data.
func execCondition(_ context.Context, x *workflow.Exec) (workflow.Result, error) {
	ok, err := x.Eval("")
	if err != nil {
		return workflow.Result{}, fmt.Errorf("expression: %w", err)
	}
	return workflow.Result{Output: x.Input, Handle: fmt.Sprint(ok)}, nil
}

// execRouter picks a route: in expression mode the first route whose
// expression holds; in llm mode the route whose name the model answers.
// With no match it takes default, or fails naming the routes.
func execRouter(ctx context.Context, x *workflow.Exec) (workflow.Result, error) {
	routes := routeNames(x.Node.Config)
	def, _ := x.Node.Config["default"].(string)
	in, err := x.ConfigTemplate("input", "{{input}}")
	if err != nil {
		return workflow.Result{}, err
	}
	choice := ""
	if x.Node.Config["mode"] == "llm" {
		choice, err = classify(ctx, x, in)
		if err != nil {
			return workflow.Result{}, err
		}
	} else {
		for _, name := range routes {
			ok, err := x.Eval(name)
			if err != nil {
				return workflow.Result{}, fmt.Errorf("route %q: %w", name, err)
			}
			if ok {
				choice = name
				break
			}
		}
	}
	if choice == "" {
		choice = def
	}
	if choice == "" {
		return workflow.Result{}, fmt.Errorf("no route matched and no default is set (routes: %s)", strings.Join(routes, ", "))
	}
	return workflow.Result{Output: x.Input, Handle: choice}, nil
}

// classify asks the router's model for one route name.
func classify(ctx context.Context, x *workflow.Exec, in any) (string, error) {
	if x.Services.Agents == nil {
		return "", fmt.Errorf("llm routing needs a model, and no agent resolver is configured")
	}
	model, _ := x.Node.Config["model"].(string)
	var b strings.Builder
	b.WriteString("Classify the user's text into exactly one of these labels and answer with the label only.\nLabels:\n")
	routes, _ := x.Node.Config["routes"].([]any)
	var names []string
	for _, r := range routes {
		route, _ := r.(map[string]any)
		name, _ := route["name"].(string)
		desc, _ := route["description"].(string)
		names = append(names, name)
		fmt.Fprintf(&b, "- %s", name)
		if desc != "" {
			fmt.Fprintf(&b, ": %s", desc)
		}
		b.WriteByte('\n')
	}
	a, err := x.Services.Agents.Inline(ctx, x.WorkspaceID, workflow.InlineAgent{Model: model, Instructions: b.String(), MaxTurns: 1})
	if err != nil {
		return "", err
	}
	text, _ := textOf(in)
	res, err := a.Generate(ctx, agent.Input{Messages: []llm.Message{llm.Text(llm.RoleUser, text)}, Buffered: true})
	if err != nil {
		return "", fmt.Errorf("classify: %w", err)
	}
	answer := strings.Trim(strings.TrimSpace(res.Message.Text()), "\"'`.")
	for _, n := range names {
		if strings.EqualFold(answer, n) {
			return n, nil
		}
	}
	// A model that answers in a sentence: take the one label it names.
	var found []string
	for _, n := range names {
		if strings.Contains(strings.ToLower(answer), strings.ToLower(n)) {
			found = append(found, n)
		}
	}
	if len(found) == 1 {
		return found[0], nil
	}
	return "", nil
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

// execCode runs the code node's transform.
func execCode(ctx context.Context, x *workflow.Exec) (workflow.Result, error) {
	out, err := x.Services.Transform.Run(ctx, x.Node.Config, x.Data)
	if err != nil {
		return workflow.Result{}, err
	}
	return workflow.Result{Output: out}, nil
}
