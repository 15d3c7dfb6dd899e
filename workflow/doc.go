// Package workflow holds the definition layer of AgentCraft's workflow
// engine: the [Definition] format (React Flow's node/edge vocabulary, in JSON
// or YAML), the node-type [Registry] that is the single source of truth for
// node metadata, [Validate], which reports every problem of a definition at
// once with a JSON path and a fix hint, and [DetectStrategy], which picks the
// engine strategy a graph needs.
//
// A caller parses, validates and then asks for the strategy:
//
//	reg := workflow.NewRegistry()
//	if err := nodes.RegisterBuiltins(reg); err != nil { ... }
//	def, err := workflow.Parse(data)
//	if err != nil { ... }              // malformed or too large input
//	if probs := workflow.Validate(def, reg); len(probs) > 0 { ... }
//	strategy, err := workflow.DetectStrategy(def, reg)
//
// Node kinds live in package workflow/nodes, one file per kind, and are
// registered explicitly. Nothing here executes a workflow yet.
package workflow
