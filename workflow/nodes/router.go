package nodes

import (
	"fmt"

	"github.com/agentcraftlab/agentcraft/workflow"
)

// router picks one of several routes, by expression (first match wins) or
// by an LLM classification with the route names as labels. Each outgoing
// edge leaves by the sourceHandle of its route's name.
func router() workflow.Kind {
	return workflow.Kind{
		Type:               "router",
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
