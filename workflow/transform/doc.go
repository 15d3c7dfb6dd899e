// Package transform executes the modes of the workflow `code` node: pure
// functions from a node's input (plus workflow variables and earlier node
// outputs) to an output value. It does no I/O and holds no state between
// calls, so the engine can checkpoint its result and re-run it at will.
//
// The modes and config keys are the ones declared by the `code` kind in
// package workflow/nodes; Run reads the same config map the definition holds:
//
//	var r transform.Runner // zero value: default limits
//	out, err := r.Run(ctx, map[string]any{"mode": "regex_extract", "pattern": `#(\d+)`},
//		transform.Data{Input: "ticket #42"})
//	// out == "42"
//
// Values are JSON-shaped: string, float64, bool, nil, []any and
// map[string]any. The `input` config key (default "{{input}}") chooses the
// value a mode transforms; see [Resolve] for how a template that is a single
// reference keeps the referenced value's type.
//
// [Render] is the template resolver for {{input}}, {{vars.<name>}} and
// {{nodes.<id>.output}}; the engine reuses it for prompts and configs.
// [Extract] is the small JSON path language of json_path mode.
package transform
