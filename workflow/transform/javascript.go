package transform

import (
	"context"
	"fmt"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/jsrun"
)

// DefaultMaxScriptMemory is the default of Options.MaxScriptMemory.
const DefaultMaxScriptMemory = jsrun.DefaultMaxMemory

// ErrMemory: a script grew the heap past its memory cap.
var ErrMemory = jsrun.ErrMemory

// ScriptError is an exception a script threw (or raised by a failing
// built-in, or a syntax error), with the JavaScript message such as
// "TypeError: x is not a function".
type ScriptError = jsrun.ScriptError

// runJavaScript runs "script" in the jsrun sandbox and returns its last
// value.
//
// The script sees the ECMAScript built-ins and three globals: input (the
// transformed value), vars and nodes ({<id>: {output: …}}), each a copy,
// so a script cannot mutate the caller's maps; see [jsrun.Run] for the
// sandbox, how the result comes back and how its limits hold (a child process).
// The limits come from Options: the configured "timeout" (default
// DefaultTimeout) capped by MaxTimeout; MaxInputBytes for the JSON of
// input, vars and nodes together; MaxOutputBytes for the result's JSON;
// MaxCallStackSize; and MaxScriptMemory for heap growth.
func runJavaScript(ctx context.Context, r *Runner, cfg map[string]any, in any, data Data) (any, error) {
	script, err := str(cfg, "script", true)
	if err != nil {
		return nil, err
	}
	timeout := DefaultTimeout
	if _, ok := cfg["timeout"]; ok {
		s, err := str(cfg, "timeout", true)
		if err != nil {
			return nil, err
		}
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return nil, &ConfigError{Key: "timeout", Message: fmt.Sprintf("%q is not a positive duration (write one such as \"2s\")", s)}
		}
		timeout = d
	}
	if r.opts.MaxTimeout > 0 && timeout > r.opts.MaxTimeout {
		timeout = r.opts.MaxTimeout
	}

	nodes := make(map[string]any, len(data.Nodes))
	for id, out := range data.Nodes {
		nodes[id] = map[string]any{"output": out}
	}
	return jsrun.Run(ctx, script, map[string]any{"input": in, "vars": orEmpty(data.Vars), "nodes": nodes}, &jsrun.Limits{
		Timeout:          timeout,
		MaxInputBytes:    r.maxIn(),
		InputName:        "input, vars and nodes",
		MaxOutputBytes:   r.maxOut(),
		MaxCallStackSize: r.opts.MaxCallStackSize,
		MaxMemory:        r.opts.MaxScriptMemory,
	})
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
