package nodes

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// router picks one of several routes, by expression (first match wins) or
// by an LLM classification with the route names as labels. Each outgoing
// edge leaves by the sourceHandle of its route's name.
func router() workflow.Kind {
	return workflow.Kind{
		Type:        "router",
		Title:       "Router",
		Category:    workflow.CategoryFlow,
		HandlesFrom: "routes[].name",
		Rules: []string{
			"at least one route; route names are unique",
			"in expression mode every route has an expression",
			"default, when set, names one of the routes",
		},
		Example: map[string]any{"routes": []any{
			map[string]any{"name": "refund", "expression": `input contains "refund"`},
			map[string]any{"name": "other", "expression": "true"},
		}},
		Doc:                "Picks one of several routes by expression or LLM classification; edges leave by route name.",
		Execute:            execRouter,
		IsExecutable:       true,
		RequiresImperative: true,
		Config: []workflow.ConfigKey{
			{Name: "mode", Type: workflow.TypeString, Enum: []string{"expression", "llm"}, Default: "expression", Doc: "how the route is chosen"},
			{Name: "routes", Type: workflow.TypeArray, Required: true, Doc: "the routes, tried in order in expression mode", Elem: &workflow.ConfigKey{
				Type: workflow.TypeObject, Doc: "a route", Fields: []workflow.ConfigKey{
					{Name: "name", Type: workflow.TypeString, Required: true, Doc: "route name, used as the edge's sourceHandle and as the LLM label"},
					{Name: "expression", Type: workflow.TypeExpression, Doc: "expr-lang expression choosing this route (expression mode)"},
					{Name: "description", Type: workflow.TypeString, Doc: "what the route is for, shown to the LLM (llm mode)"},
				},
			}},
			{Name: "default", Type: workflow.TypeString, Doc: "route taken when no expression matches or the LLM answer is no route name"},
			{Name: "model", Type: workflow.TypeString, Doc: "model that classifies in llm mode; default: the workspace default"},
			inputKey("text the routes are chosen on"),
		},
		Handles: routeNames,
		Check: func(cfg map[string]any, at string) []workflow.Problem {
			var probs []workflow.Problem
			routes := cfg["routes"].([]any)
			if len(routes) == 0 {
				return []workflow.Problem{{Path: at + ".routes", Message: "no routes", Hint: "add at least one route {name, expression}"}}
			}
			llm := cfg["mode"] == "llm"
			seen := map[string]int{}
			for i, r := range routes {
				route := r.(map[string]any)
				name := route["name"].(string)
				if first, dup := seen[name]; dup {
					probs = append(probs, workflow.Problem{Path: fmt.Sprintf("%s.routes[%d].name", at, i), Message: fmt.Sprintf("duplicate route name %q, first used by routes[%d]", name, first), Hint: "give every route a unique name"})
				}
				seen[name] = i
				if _, ok := route["expression"]; !ok && !llm {
					probs = append(probs, workflow.Problem{Path: fmt.Sprintf("%s.routes[%d].expression", at, i), Message: "missing expression in expression mode", Hint: "add an expression choosing this route, or set mode to \"llm\""})
				}
			}
			if d, ok := cfg["default"].(string); ok {
				if _, known := seen[d]; !known {
					probs = append(probs, workflow.Problem{Path: at + ".default", Message: fmt.Sprintf("default route %q is not one of the routes", d), Hint: "name one of the routes"})
				}
			}
			return probs
		},
	}
}

// routeNames reads the route names from a config that may not have been
// checked yet, so it asserts nothing.
func routeNames(cfg map[string]any) []string {
	routes, _ := cfg["routes"].([]any)
	var names []string
	for _, r := range routes {
		route, _ := r.(map[string]any)
		if name, ok := route["name"].(string); ok {
			names = append(names, name)
		}
	}
	return names
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
	a, err := x.Services.Agents.Inline(ctx, x.AgentCall(), workflow.InlineAgent{Model: model, Instructions: b.String(), MaxTurns: 1})
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
