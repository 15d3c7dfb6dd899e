package tool

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/starlarkrun"
)

// Defaults of RunStarlark: those of RunJavaScript.
const (
	DefaultStarlarkTimeout   = DefaultJavaScriptTimeout
	DefaultStarlarkMaxMemory = DefaultJavaScriptMaxMemory
	DefaultStarlarkMaxOutput = DefaultJavaScriptMaxOutput
)

// RunStarlark is the built-in "run_starlark" tool: it runs Starlark, a
// small dialect of Python, in the same sandbox as the workflow code
// node's starlark mode (internal/starlarkrun, a child process) and
// returns the JSON of the value the code assigns to the global result.
// The zero value uses the defaults.
//
// The code sees Starlark's built-ins, the json and math modules and one
// global, input (a copy of the "input" argument, converted from JSON);
// it has no load, import, print output, file or network access. It is
// stopped after Timeout, after its step budget (10 million steps per
// second of Timeout), or when the heap grows by more than MaxMemory.
type RunStarlark struct {
	// Timeout bounds one run. Default DefaultStarlarkTimeout.
	Timeout time.Duration
	// MaxMemory caps the heap growth of one run, in bytes. Default
	// DefaultStarlarkMaxMemory.
	MaxMemory int64
	// MaxOutputBytes bounds the JSON of the result. Default
	// DefaultStarlarkMaxOutput.
	MaxOutputBytes int
}

var _ Tool = RunStarlark{}

var runStarlarkArgs = mustArgSchema("run_starlark",
	`{"type":"object","properties":{`+
		`"code":{"type":"string","minLength":1,"description":"Starlark (a Python dialect). Assign the value to return to the global result."},`+
		`"input":{"description":"Any JSON value, readable in the code as the global input (objects are dicts, arrays lists, whole numbers int)."}},`+
		`"required":["code"],"additionalProperties":false}`,
	`{"code": "result = sorted([x * 2 for x in input], reverse = True)", "input": [1, 2, 3]}`)

// Name implements Tool.
func (RunStarlark) Name() string { return "run_starlark" }

// Description implements Tool.
func (RunStarlark) Description() string {
	return "Run Starlark, a small dialect of Python, to compute something exactly: transform data, count, sort, parse text. " +
		"Assign the value to return to the global result (result = ...); it comes back as JSON. " +
		"The optional input argument is the global input (JSON objects are dicts, arrays lists, whole numbers int). " +
		"json (json.encode, json.decode) and math are predeclared; there is no import, network, file system or output from print. " +
		"Unlike Python: no class, try/except, recursion, ** (use math.pow), f-strings or %.2f (use '%s' % x, '{}'.format(x), str()), " +
		"sum() or round() (use a loop, math.round); strings are not iterable (use s.elems())."
}

// Schema implements Tool.
func (RunStarlark) Schema() json.RawMessage { return runStarlarkArgs.raw }

// Capability implements Tool: the code only computes, but it is
// arbitrary code using the server's CPU and memory up to the caps.
func (RunStarlark) Capability() Capability { return CapabilityMedium }

// Call implements Tool. Script errors, time-outs, the step budget and the
// memory cap are error Results; the caller's cancellation is returned as
// a Go error.
func (s RunStarlark) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	return callScript(ctx, args, runStarlarkArgs, func(ctx context.Context, code string, globals map[string]any) (any, error) {
		return starlarkrun.Run(ctx, code, globals, &starlarkrun.Limits{
			Timeout:        orDefault(s.Timeout, DefaultStarlarkTimeout),
			MaxMemory:      orDefault(s.MaxMemory, DefaultStarlarkMaxMemory),
			MaxOutputBytes: orDefault(s.MaxOutputBytes, DefaultStarlarkMaxOutput),
		})
	})
}
