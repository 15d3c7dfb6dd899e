package transform

import (
	"context"
	"fmt"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/jsrun"
	"github.com/agentcraftlab/agentcraft/internal/scriptrun"
	"github.com/agentcraftlab/agentcraft/internal/starlarkrun"
)

// DefaultMaxScriptMemory is the default of Options.MaxScriptMemory.
const DefaultMaxScriptMemory = jsrun.DefaultMaxMemory

// ErrMemory: a script grew the heap past its memory cap.
var ErrMemory = scriptrun.ErrMemory

// ScriptError is what a script did wrong, in either language: an
// exception it threw or a built-in raised, a syntax error, a result that
// is not JSON data, with the engine's message such as JavaScript's
// "TypeError: x is not a function" or Starlark's "script.star:3:9:
// undefined: x".
type ScriptError = scriptrun.Error

// scriptEngine runs source with globals under the Runner's limits and
// timeout; the script modes differ only in it.
type scriptEngine func(ctx context.Context, r *Runner, source string, globals map[string]any, timeout time.Duration) (any, error)

// scriptModes are the modes that run a script (scriptMode): they measure
// what they hand over and what comes back themselves.
var scriptModes = map[string]bool{"javascript": true, "starlark": true}

// scriptMode is the modeFunc of a script mode: it reads "script" and
// "timeout" and hands the engine three globals: input (the transformed
// value), vars and nodes ({<id>: {output: …}}), each a copy, so a script
// cannot mutate the caller's maps. The limits come from Options: the
// configured "timeout" (default DefaultTimeout) capped by MaxTimeout;
// MaxInputBytes for the JSON of input, vars and nodes together;
// MaxOutputBytes for the result's JSON; MaxScriptMemory for heap growth;
// and each engine's own (MaxCallStackSize, MaxScriptSteps).
func scriptMode(run scriptEngine) modeFunc {
	return func(ctx context.Context, r *Runner, cfg map[string]any, in any, data Data) (any, error) {
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
		return run(ctx, r, script, map[string]any{"input": in, "vars": orEmpty(data.Vars), "nodes": nodes}, timeout)
	}
}

// scriptInputName names the globals in the error for input over
// MaxInputBytes.
const scriptInputName = "input, vars and nodes"

// runJavaScript is javascript mode: the script's last value is the
// output; see [jsrun.Run] for the sandbox, how the result comes back and
// how its limits hold (a child process).
func runJavaScript(ctx context.Context, r *Runner, script string, globals map[string]any, timeout time.Duration) (any, error) {
	return jsrun.Run(ctx, script, globals, &jsrun.Limits{
		Timeout:          timeout,
		MaxInputBytes:    r.maxIn(),
		InputName:        scriptInputName,
		MaxOutputBytes:   r.maxOut(),
		MaxCallStackSize: r.opts.MaxCallStackSize,
		MaxMemory:        r.opts.MaxScriptMemory,
	})
}

// runStarlark is starlark mode: the value the script assigns to the
// global result is the output; see [starlarkrun.Run] for the language,
// how globals and the result convert and how its limits hold.
func runStarlark(ctx context.Context, r *Runner, script string, globals map[string]any, timeout time.Duration) (any, error) {
	return starlarkrun.Run(ctx, script, globals, &starlarkrun.Limits{
		Timeout:        timeout,
		MaxInputBytes:  r.maxIn(),
		InputName:      scriptInputName,
		MaxOutputBytes: r.maxOut(),
		MaxSteps:       r.opts.MaxScriptSteps,
		MaxMemory:      r.opts.MaxScriptMemory,
	})
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
