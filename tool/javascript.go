package tool

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/jsrun"
)

// Defaults of RunJavaScript.
const (
	DefaultJavaScriptTimeout   = 5 * time.Second
	DefaultJavaScriptMaxMemory = 64 << 20
	DefaultJavaScriptMaxOutput = 64 << 10
)

// RunJavaScript is the built-in "run_javascript" tool: it runs a script in
// the same goja sandbox as the workflow code node (internal/jsrun) and
// returns the JSON of the script's last value. The zero value uses the
// defaults.
//
// The script sees the ECMAScript built-ins and one global, input (a copy
// of the "input" argument); it has no require, console, timers, file or
// network access. It is stopped after Timeout, when the heap grows by more
// than MaxMemory, or at a call depth of 1000.
type RunJavaScript struct {
	// Timeout bounds one run. Default DefaultJavaScriptTimeout.
	Timeout time.Duration
	// MaxMemory caps the heap growth of one run, in bytes. Default
	// DefaultJavaScriptMaxMemory.
	MaxMemory int64
	// MaxOutputBytes bounds the JSON of the result. Default
	// DefaultJavaScriptMaxOutput.
	MaxOutputBytes int
}

var _ Tool = RunJavaScript{}

var runJavaScriptArgs = mustArgSchema("run_javascript",
	`{"type":"object","properties":{`+
		`"code":{"type":"string","minLength":1,"description":"JavaScript (ES2015+). The value of the last expression statement is the result; there is no top-level return."},`+
		`"input":{"description":"Any JSON value, readable in the code as the global input."}},`+
		`"required":["code"],"additionalProperties":false}`,
	`{"code": "input.map(x => x * 2).reduce((a, b) => a + b, 0)", "input": [1, 2, 3]}`)

// Name implements Tool.
func (RunJavaScript) Name() string { return "run_javascript" }

// Description implements Tool.
func (RunJavaScript) Description() string {
	return "Run JavaScript to compute something exactly: transform data, count, sort, parse text, do date arithmetic. " +
		"The result is the JSON of the last expression's value (end the code with it; top-level return is a syntax error). " +
		"The optional input argument is available as the global input. There is no network, file system, console or timers."
}

// Schema implements Tool.
func (RunJavaScript) Schema() json.RawMessage { return runJavaScriptArgs.raw }

// Capability implements Tool: the code only computes, but it is
// arbitrary code using the server's CPU and memory up to the caps.
func (RunJavaScript) Capability() Capability { return CapabilityMedium }

// Call implements Tool. Script errors, time-outs and the memory cap are
// error Results; the caller's cancellation is returned as a Go error.
func (j RunJavaScript) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	return callScript(ctx, args, runJavaScriptArgs, func(ctx context.Context, code string, globals map[string]any) (any, error) {
		return jsrun.Run(ctx, code, globals, &jsrun.Limits{
			Timeout:        orDefault(j.Timeout, DefaultJavaScriptTimeout),
			MaxMemory:      orDefault(j.MaxMemory, DefaultJavaScriptMaxMemory),
			MaxOutputBytes: orDefault(j.MaxOutputBytes, DefaultJavaScriptMaxOutput),
		})
	})
}
