package transform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dop251/goja"
)

// runJavaScript runs "script" with goja and returns its last value.
//
// Sandbox: every call gets a fresh goja.Runtime holding only the
// ECMAScript built-ins (Object, JSON, Math, RegExp …) and three globals:
// input (the transformed value), vars and nodes ({<id>: {output: …}}).
// Nothing else is registered: there is no require, console, fetch,
// setTimeout, process, file or network access; a script can only compute.
// The globals are copies made by JSON.parse inside the runtime, never Go
// values wrapped by goja, so a script cannot mutate the caller's maps.
//
// The result is JSON.stringify(last value) decoded as JSON: objects,
// arrays, strings, numbers, booleans and null come back as such; undefined
// becomes nil; functions, symbols, BigInt and cycles are errors.
//
// Limits, and what they do not cover:
//   - Time: "timeout" (default DefaultTimeout, capped by
//     Options.MaxTimeout) and ctx cancellation interrupt the runtime
//     (vm.Interrupt), which goja checks between instructions. A single
//     built-in call that runs long in Go (a huge 'x'.repeat(n), a sort of
//     a huge array) is only interrupted when it returns.
//   - Input: the JSON of input, vars and nodes together must fit in
//     MaxInputBytes, before anything runs.
//   - Output: the result's JSON must fit in MaxOutputBytes, checked
//     before it is decoded into Go values.
//   - Recursion: call depth is capped (MaxCallStackSize).
//   - Memory: goja has no allocator hook, so the cap (MaxScriptMemory,
//     default 256 MiB) is enforced from outside: the process heap is
//     sampled every 5 ms while the script runs and the script is
//     interrupted once the heap has grown by more than the cap (see
//     watchMemory). One built-in call that allocates a huge value at
//     once ('x'.repeat(1e9)) is only stopped after it returns; the
//     process's own limit (GOMEMLIMIT, the container) is the backstop
//     for that.
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
	globals, err := json.Marshal(map[string]any{"input": in, "vars": orEmpty(data.Vars), "nodes": nodes})
	if err != nil {
		return nil, fmt.Errorf("input is not JSON data: %w", err)
	}
	if len(globals) > r.maxIn() {
		return nil, fmt.Errorf("input, vars and nodes are %d bytes of JSON, more than the limit of %d: %w", len(globals), r.maxIn(), ErrTooLarge)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	vm := goja.New()
	depth := r.opts.MaxCallStackSize
	if depth <= 0 {
		depth = DefaultMaxCallStackSize
	}
	vm.SetMaxCallStackSize(depth)

	// Both stop functions run before vm is dropped; Interrupt is safe to
	// call from these goroutines.
	timer := time.AfterFunc(timeout, func() { vm.Interrupt(ErrTimeout) })
	defer timer.Stop()
	stop := context.AfterFunc(ctx, func() { vm.Interrupt(ctx.Err()) })
	defer stop()
	memCap := uint64(DefaultMaxScriptMemory)
	if r.opts.MaxScriptMemory > 0 {
		memCap = uint64(r.opts.MaxScriptMemory)
	}
	unwatch := watchMemory(memCap, 5*time.Millisecond, func(err error) { vm.Interrupt(err) })
	defer unwatch()

	jsonObj := vm.Get("JSON").ToObject(vm)
	parse, _ := goja.AssertFunction(jsonObj.Get("parse"))
	stringify, _ := goja.AssertFunction(jsonObj.Get("stringify"))
	g, err := parse(goja.Undefined(), vm.ToValue(string(globals)))
	if err != nil {
		return nil, scriptError(err, timeout)
	}
	gobj := g.ToObject(vm)
	for _, name := range []string{"input", "vars", "nodes"} {
		if err := vm.Set(name, gobj.Get(name)); err != nil {
			return nil, fmt.Errorf("set %s: %w", name, err)
		}
	}

	res, err := vm.RunScript("script.js", script)
	if err != nil {
		return nil, scriptError(err, timeout)
	}
	if goja.IsUndefined(res) {
		return nil, nil
	}
	if _, ok := goja.AssertFunction(res); ok {
		return nil, errors.New("script result is a function, not data: end the script with the value to return")
	}
	js, err := stringify(goja.Undefined(), res)
	if err != nil {
		return nil, scriptError(err, timeout)
	}
	if goja.IsUndefined(js) {
		return nil, fmt.Errorf("script result (%s) cannot be written as JSON", res.ExportType())
	}
	text := js.String()
	if len(text) > r.maxOut() {
		return nil, fmt.Errorf("script result is %d bytes of JSON, more than the limit of %d: %w", len(text), r.maxOut(), ErrTooLarge)
	}
	var out any
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return nil, fmt.Errorf("decode script result: %w", err)
	}
	return out, nil
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// ScriptError is an exception a script threw (or raised by a failing
// built-in), with the JavaScript message such as "TypeError: x is not a
// function".
type ScriptError struct {
	Message string
}

func (e *ScriptError) Error() string { return "script: " + e.Message }

func scriptError(err error, timeout time.Duration) error {
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		if v, ok := ie.Value().(error); ok {
			if errors.Is(v, ErrTimeout) {
				return fmt.Errorf("script ran longer than %v: %w", timeout, ErrTimeout)
			}
			return fmt.Errorf("script stopped: %w", v)
		}
		return fmt.Errorf("script stopped: %v", ie.Value())
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		return &ScriptError{Message: "RangeError: maximum call stack size exceeded"}
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		if v := ex.Value(); v != nil {
			return &ScriptError{Message: v.String()}
		}
		return &ScriptError{Message: ex.Error()}
	}
	// Syntax errors come as *goja.CompilerSyntaxError.
	return &ScriptError{Message: err.Error()}
}
