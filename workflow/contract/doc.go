// Package contract checks the data that AgentCraft workflows hand from one
// LLM agent to the next, so that an agent which returns half its schema
// stops the run instead of feeding the next agent a "successful" but empty
// package.
//
// It holds the logic of the three contract node kinds declared in
// workflow/nodes, as pure, deterministic functions: no I/O, no LLM, no
// clock. The workflow engine calls them and turns a failed result into a
// failed_contract run.
//
//   - [Normalize] (node kind normalize) fills defaults for optional inputs,
//     typically the run's start input, and reports which it filled.
//   - [Check] (node kind contract) extracts JSON from an upstream output
//     (a value, or prose with a JSON object or a ```json fence in it),
//     validates it against a JSON Schema compiled once with [Compile], and
//     repairs only mismatches whose fix cannot change meaning: fields inside a
//     wrapper object, numbers and booleans sent as strings, a single value
//     where the schema wants an array, and optional fields with a schema
//     default. It never invents a required field.
//   - [OutputCheck] (node kind output_check) rejects final outputs with
//     missing, empty, mistyped or placeholder fields, such as
//     "x_posts": ["x_posts"].
//
// A caller compiles each contract's schema once and reuses it; a compiled
// [Schema] is safe for concurrent use:
//
//	s, err := contract.Compile(schema)
//	if err != nil { ... } // the node's schema config is invalid
//	res := contract.Check(upstreamOutput, s, true, nil)
//	if res.Contract.Status == contract.StatusFailed { ... } // stop the run
//	next := res.Normalized
package contract
