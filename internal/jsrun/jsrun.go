// Package jsrun runs untrusted JavaScript with goja inside limits: a fresh
// runtime per call holding only the ECMAScript built-ins and the globals the
// caller passes as JSON data, a time limit, a cap on heap growth, a call
// depth limit and size limits on what goes in and comes out. Each call runs
// in a child process (internal/sandbox) killed at the limits, so they hold
// even for one long built-in call; the program calls sandbox.Main first.
//
// It is the sandbox below both the workflow code node (workflow/transform)
// and the run_javascript tool (package tool), which cannot import each
// other: transform uses tool's calculator, so tool cannot import transform.
// What does not depend on JavaScript (the sentinel errors, ScriptError, the
// sandbox job, the heap watch) is internal/scriptrun's, shared with the
// Starlark engine (internal/starlarkrun).
//
//	v, err := jsrun.Run(ctx, "input.items.length", map[string]any{"input": in}, nil)
//	if errors.Is(err, jsrun.ErrTimeout) { ... }
package jsrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dop251/goja"

	"github.com/agentcraftlab/agentcraft/internal/scriptrun"
)

// Defaults of Limits.
const (
	DefaultTimeout          = 5 * time.Second
	DefaultMaxInputBytes    = 4 << 20
	DefaultMaxOutputBytes   = 4 << 20
	DefaultMaxCallStackSize = 1000
	DefaultMaxMemory        = 256 << 20
)

// Sentinel errors; test for them with errors.Is. They are
// internal/scriptrun's, shared with the Starlark engine.
var (
	// ErrTimeout: a script ran past its time limit.
	ErrTimeout = scriptrun.ErrTimeout
	// ErrMemory: a run grew the heap past its memory cap.
	ErrMemory = scriptrun.ErrMemory
	// ErrTooLarge: the globals or the result exceed their size limit.
	ErrTooLarge = scriptrun.ErrTooLarge
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
// "TypeError: x is not a function". It is scriptrun.Error, the type of
// every engine's script faults.
type ScriptError = scriptrun.Error

// Run runs script and returns its last value as JSON data.
//
// Isolation: the script runs in a child process (package
// internal/sandbox) that re-executes this program with an empty
// environment, no network, no file writes and OS limits on address space,
// resident memory and CPU time, and that is killed at the deadline. So
// the limits hold for any code, a single long built-in call included
// (new Array(4294967295).join('x'), a sort of a huge array): such a call
// ends with ErrTimeout at the time limit or ErrMemory at the memory cap,
// and the server's own memory does not grow. The program must call
// sandbox.Main first in main (and in TestMain).
//
// Sandbox inside the child: the runtime holds only the ECMAScript
// built-ins (Object, JSON, Math, RegExp …) and globals, each set to a copy
// of the given value made by JSON.parse inside the runtime, never a Go
// value wrapped by goja, so a script cannot reach or mutate the caller's
// data. There is no require, console, fetch, setTimeout, process, file or
// network access; a script can only compute. lim nil means the defaults.
//
// The result is JSON.stringify(last value) decoded as JSON: objects,
// arrays, strings, numbers (float64), booleans and null come back as such;
// undefined becomes nil; functions, symbols, BigInt and cycles are errors.
//
// Limits:
//   - Time: inside the child the timeout interrupts the runtime
//     (vm.Interrupt) between instructions, with a clear error; the parent
//     kills the child startGrace after the timeout when one built-in call
//     did not return, and at once when ctx ends.
//   - Memory: inside the child the heap is sampled every 5 ms and the
//     script interrupted once it grew by more than the cap
//     (scriptrun.WatchHeap);
//     one call that allocates a huge value at once hits the child's
//     address-space or resident-memory limit (the cap plus the input
//     plus sandbox.AddressSlack) and the child dies with ErrMemory.
//
// Errors: *ScriptError for what the script did wrong, and errors wrapping
// ErrTimeout, ErrMemory, ErrTooLarge or ctx's error.
func Run(ctx context.Context, script string, globals map[string]any, lim *Limits) (any, error) {
	l, gjson, err := prepare(globals, lim)
	if err != nil {
		return nil, err
	}
	return runSandboxed(ctx, script, gjson, l)
}

// prepare fills in the default limits and checks the globals' size.
func prepare(globals map[string]any, lim *Limits) (Limits, []byte, error) {
	var l Limits
	if lim != nil {
		l = *lim
	}
	l.Timeout = orDefault(l.Timeout, DefaultTimeout)
	l.MaxInputBytes = orDefault(l.MaxInputBytes, DefaultMaxInputBytes)
	l.MaxOutputBytes = orDefault(l.MaxOutputBytes, DefaultMaxOutputBytes)
	l.MaxCallStackSize = orDefault(l.MaxCallStackSize, DefaultMaxCallStackSize)
	l.MaxMemory = orDefault(l.MaxMemory, DefaultMaxMemory)

	gjson, err := scriptrun.EncodeGlobals(globals, l.MaxInputBytes, l.InputName)
	if err != nil {
		return l, nil, err
	}
	return l, gjson, nil
}

// runLocal runs script in this process's goja runtime, under the limits
// goja can enforce itself; gjson is the JSON object of the globals and l
// has its defaults filled in. The sandbox child calls it.
func runLocal(ctx context.Context, script string, gjson []byte, l Limits) (string, error) {
	vm := goja.New()
	vm.SetMaxCallStackSize(l.MaxCallStackSize)

	// Both stop functions run before vm is dropped; Interrupt is safe to
	// call from these goroutines.
	timer := time.AfterFunc(l.Timeout, func() { vm.Interrupt(ErrTimeout) })
	defer timer.Stop()
	stop := context.AfterFunc(ctx, func() { vm.Interrupt(ctx.Err()) })
	defer stop()
	unwatch := scriptrun.WatchHeap(uint64(l.MaxMemory), 5*time.Millisecond, func(err error) { vm.Interrupt(err) })
	defer unwatch()

	jsonObj := vm.Get("JSON").ToObject(vm)
	parse, _ := goja.AssertFunction(jsonObj.Get("parse"))
	stringify, _ := goja.AssertFunction(jsonObj.Get("stringify"))
	g, err := parse(goja.Undefined(), vm.ToValue(string(gjson)))
	if err != nil {
		return "", scriptError(err, l.Timeout)
	}
	gobj := g.ToObject(vm)
	for _, name := range gobj.Keys() {
		if err := vm.Set(name, gobj.Get(name)); err != nil {
			return "", fmt.Errorf("set %s: %w", name, err)
		}
	}

	res, err := vm.RunScript("script.js", script)
	if err != nil {
		return "", scriptError(err, l.Timeout)
	}
	if goja.IsUndefined(res) {
		return "", nil
	}
	if _, ok := goja.AssertFunction(res); ok {
		return "", errors.New("script result is a function, not data: end the script with the value to return")
	}
	js, err := stringify(goja.Undefined(), res)
	if err != nil {
		return "", scriptError(err, l.Timeout)
	}
	if goja.IsUndefined(js) {
		return "", fmt.Errorf("script result (%s) cannot be written as JSON", res.ExportType())
	}
	text := js.String()
	if len(text) > l.MaxOutputBytes {
		return "", fmt.Errorf("script result is %d bytes of JSON, more than the limit of %d: %w", len(text), l.MaxOutputBytes, ErrTooLarge)
	}
	return text, nil
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
