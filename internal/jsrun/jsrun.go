// Package jsrun runs untrusted JavaScript with goja inside limits: a fresh
// runtime per call holding only the ECMAScript built-ins and the globals the
// caller passes as JSON data, a time limit, a cap on heap growth, a call
// depth limit and size limits on what goes in and comes out.
//
// It is the sandbox below both the workflow code node (workflow/transform)
// and the run_javascript tool (package tool), which cannot import each
// other: transform uses tool's calculator, so tool cannot import transform.
//
//	v, err := jsrun.Run(ctx, "input.items.length", map[string]any{"input": in}, nil)
//	if errors.Is(err, jsrun.ErrTimeout) { ... }
package jsrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dop251/goja"
)

// Defaults of Limits.
const (
	DefaultTimeout          = 5 * time.Second
	DefaultMaxInputBytes    = 4 << 20
	DefaultMaxOutputBytes   = 4 << 20
	DefaultMaxCallStackSize = 1000
	DefaultMaxMemory        = 256 << 20
)

// Sentinel errors; test for them with errors.Is.
var (
	// ErrTimeout: a script ran past its time limit.
	ErrTimeout = errors.New("script time limit exceeded")
	// ErrMemory: a run grew the heap past its memory cap.
	ErrMemory = errors.New("script memory cap exceeded")
	// ErrTooLarge: the globals or the result exceed their size limit.
	ErrTooLarge = errors.New("too large")
)

// Limits bound one run. The zero value means the defaults.
type Limits struct {
	// Timeout bounds the run. Default DefaultTimeout.
	Timeout time.Duration
	// MaxInputBytes bounds the JSON of all globals together. Default
	// DefaultMaxInputBytes.
	MaxInputBytes int
	// InputName names the globals, as a plural, in the error for input
	// over MaxInputBytes, such as "input, vars and nodes". Default: the
	// error says "the script's input is".
	InputName string
	// MaxOutputBytes bounds the JSON of the result. Default
	// DefaultMaxOutputBytes.
	MaxOutputBytes int
	// MaxCallStackSize bounds call depth. Default DefaultMaxCallStackSize.
	MaxCallStackSize int
	// MaxMemory caps how much the heap may grow while the script runs, in
	// bytes. Default DefaultMaxMemory.
	MaxMemory int64
}

func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// ScriptError is an exception a script threw (or raised by a failing
// built-in, or a syntax error), with the JavaScript message such as
// "TypeError: x is not a function".
type ScriptError struct {
	Message string
}

func (e *ScriptError) Error() string { return "script: " + e.Message }

// Run runs script and returns its last value as JSON data.
//
// Sandbox: the runtime holds only the ECMAScript built-ins (Object, JSON,
// Math, RegExp …) and globals, each set to a copy of the given value made
// by JSON.parse inside the runtime, never a Go value wrapped by goja, so a
// script cannot reach or mutate the caller's data. There is no require,
// console, fetch, setTimeout, process, file or network access; a script can
// only compute. lim nil means the defaults.
//
// The result is JSON.stringify(last value) decoded as JSON: objects,
// arrays, strings, numbers (float64), booleans and null come back as such;
// undefined becomes nil; functions, symbols, BigInt and cycles are errors.
//
// Limits, and what they do not cover:
//   - Time: the timeout and ctx cancellation interrupt the runtime
//     (vm.Interrupt), which goja checks between instructions. A single
//     built-in call that runs long in Go (a huge 'x'.repeat(n), a sort of
//     a huge array) is only interrupted when it returns.
//   - Memory: goja has no allocator hook, so the cap is enforced from
//     outside: the process heap is sampled every 5 ms and the script is
//     interrupted once the heap has grown by more than the cap (see
//     WatchHeap). One built-in call that allocates a huge value at once
//     is only stopped after it returns; GOMEMLIMIT and the container are
//     the backstop for that.
//
// Errors: *ScriptError for what the script did wrong, and errors wrapping
// ErrTimeout, ErrMemory, ErrTooLarge or ctx's error.
func Run(ctx context.Context, script string, globals map[string]any, lim *Limits) (any, error) {
	var l Limits
	if lim != nil {
		l = *lim
	}
	timeout := orDefault(l.Timeout, DefaultTimeout)
	maxIn := orDefault(l.MaxInputBytes, DefaultMaxInputBytes)
	maxOut := orDefault(l.MaxOutputBytes, DefaultMaxOutputBytes)

	if globals == nil {
		globals = map[string]any{}
	}
	gjson, err := json.Marshal(globals)
	if err != nil {
		return nil, fmt.Errorf("input is not JSON data: %w", err)
	}
	if len(gjson) > maxIn {
		subject := "the script's input is"
		if l.InputName != "" {
			subject = l.InputName + " are"
		}
		return nil, fmt.Errorf("%s %d bytes of JSON, more than the limit of %d: %w", subject, len(gjson), maxIn, ErrTooLarge)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	vm := goja.New()
	vm.SetMaxCallStackSize(orDefault(l.MaxCallStackSize, DefaultMaxCallStackSize))

	// Both stop functions run before vm is dropped; Interrupt is safe to
	// call from these goroutines.
	timer := time.AfterFunc(timeout, func() { vm.Interrupt(ErrTimeout) })
	defer timer.Stop()
	stop := context.AfterFunc(ctx, func() { vm.Interrupt(ctx.Err()) })
	defer stop()
	unwatch := WatchHeap(uint64(orDefault(l.MaxMemory, DefaultMaxMemory)), 5*time.Millisecond, func(err error) { vm.Interrupt(err) })
	defer unwatch()

	jsonObj := vm.Get("JSON").ToObject(vm)
	parse, _ := goja.AssertFunction(jsonObj.Get("parse"))
	stringify, _ := goja.AssertFunction(jsonObj.Get("stringify"))
	g, err := parse(goja.Undefined(), vm.ToValue(string(gjson)))
	if err != nil {
		return nil, scriptError(err, timeout)
	}
	gobj := g.ToObject(vm)
	for name := range globals {
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
	if len(text) > maxOut {
		return nil, fmt.Errorf("script result is %d bytes of JSON, more than the limit of %d: %w", len(text), maxOut, ErrTooLarge)
	}
	var out any
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return nil, fmt.Errorf("decode script result: %w", err)
	}
	return out, nil
}

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
