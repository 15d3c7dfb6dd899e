package transform_test

import (
	"context"
	"fmt"

	"github.com/agentcraftlab/agentcraft/workflow/transform"
)

func ExampleRunner_Run() {
	var r transform.Runner
	out, err := r.Run(context.Background(),
		map[string]any{"mode": "regex_extract", "pattern": `#(\d+)`},
		transform.Data{Input: "ticket #42"})
	fmt.Println(out, err)

	out, err = r.Run(context.Background(),
		map[string]any{"mode": "javascript", "script": "input.split(' ').length + vars.extra"},
		transform.Data{Input: "a b c", Vars: map[string]any{"extra": 1}})
	fmt.Println(out, err)

	out, err = r.Run(context.Background(),
		map[string]any{"mode": "starlark", "script": "result = len(input.split(' ')) + vars['extra']"},
		transform.Data{Input: "a b c", Vars: map[string]any{"extra": 1}})
	fmt.Println(out, err)
	// Output:
	// 42 <nil>
	// 4 <nil>
	// 4 <nil>
}

func ExampleRender() {
	s, err := transform.Render("Dear {{vars.name}}, re: {{nodes.plan.output.title}}", transform.Data{
		Vars:  map[string]any{"name": "Ada"},
		Nodes: map[string]any{"plan": map[string]any{"title": "Invoice"}},
	})
	fmt.Println(s, err)
	_, err = transform.Render("{{vars.missing}}", transform.Data{})
	fmt.Println(err)
	// Output:
	// Dear Ada, re: Invoice <nil>
	// template: {{vars.missing}} at character 1: variable "missing" is not set (set: none): unknown reference
}
