// Package starlarkrun runs untrusted Starlark (go.starlark.net, a small
// dialect of Python) inside limits, as internal/jsrun does JavaScript: a
// fresh interpreter per call holding only Starlark's built-ins, the json
// and math modules and the globals the caller passes as JSON data, a time
// limit, a step budget, a cap on heap growth and size limits on what goes
// in and comes out. Each call runs in a child process (internal/sandbox)
// killed at the limits, so they hold even for one long built-in call; the
// program calls sandbox.Main first.
//
// A script returns its value by assigning it to the global result:
//
//	v, err := starlarkrun.Run(ctx, "result = len(input['items'])", map[string]any{"input": in}, nil)
//	if errors.Is(err, starlarkrun.ErrTimeout) { ... }
//
// It is the engine below the workflow code node's starlark mode
// (workflow/transform) and the run_starlark tool (package tool). Its
// errors are internal/scriptrun's, the same as jsrun's.
package starlarkrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"go.starlark.net/lib/json"
	"go.starlark.net/lib/math"
	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/agentcraftlab/agentcraft/internal/scriptrun"
)

// Defaults of Limits.
const (
	DefaultTimeout        = 5 * time.Second
	DefaultMaxInputBytes  = 4 << 20
	DefaultMaxOutputBytes = 4 << 20
	DefaultMaxMemory      = 256 << 20
	// DefaultStepsPerSecond sets the default step budget: this many steps
	// per second of Timeout. A current core runs 20 to 60 million steps a
	// second, so the budget, which gives the same verdict on every run,
	// usually ends a runaway script well before the clock, which depends
	// on the machine's load.
	DefaultStepsPerSecond = 10_000_000
)

// ResultName is the global a script assigns its value to.
const ResultName = "result"

// filename names the script in positions: "script.star:3:9".
const filename = "script.star"

// Sentinel errors; test for them with errors.Is. They are
// internal/scriptrun's, shared with the JavaScript engine.
var (
	// ErrTimeout: a script ran past its time limit or its step budget.
	ErrTimeout = scriptrun.ErrTimeout
	// ErrMemory: a run grew the heap past its memory cap.
	ErrMemory = scriptrun.ErrMemory
	// ErrTooLarge: the globals or the result exceed their size limit.
	ErrTooLarge = scriptrun.ErrTooLarge
)

// ScriptError is what a script did wrong, with its position when it has
// one: a syntax error ("script.star:2:7: got '=', want ')'"), a name that
// is not defined, an error raised while it ran ("script.star:3:9: in f:
// key \"x\" not in dict", "fail: boom"), a missing or non-JSON result. It
// is scriptrun.Error, jsrun's ScriptError too.
type ScriptError = scriptrun.Error

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
	// MaxSteps bounds the interpreter's steps (roughly, bytecode
	// instructions): a time limit that does not depend on the machine's
	// load, so a script that fits once fits every time. Default
	// DefaultStepsPerSecond for each second of Timeout.
	MaxSteps int64
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

// Run runs script and returns the value it assigned to the global result
// as JSON data.
//
// Isolation: the script runs in a child process (package
// internal/sandbox) that re-executes this program with an empty
// environment, no network, no file writes and OS limits on address space,
// resident memory and CPU time, and that is killed at the deadline; see
// jsrun.Run. The program must call sandbox.Main first in main (and in
// TestMain).
//
// The language: Starlark as go.starlark.net defines it, with while
// loops, if/for/while at the top level, reassignment of globals and
// set() allowed, so that a script reads like plain Python; recursion stays
// refused (a function that calls itself fails), and there is no load, no
// import, no class, no try/except. print writes nothing anywhere. The
// predeclared names are Starlark's built-ins, the json module
// (json.encode, json.decode, json.indent) and the math module, and the
// globals, each converted from JSON: objects become dicts (keys in sorted
// order), arrays lists, strings str, numbers without a fraction or
// exponent int, other numbers float, booleans bool, null None. A script
// may change them; it changes its own copy. lim nil means the defaults.
//
// The result: the script ends with result set to JSON data (None, bool,
// int, float, str, list, tuple, dict with str keys), which comes back as
// Go data (nil, bool, float64, string, []any, map[string]any); a script
// that never assigns result, or assigns anything else (a set, a function,
// a float that is not finite, a structure that contains itself), fails
// with a *ScriptError saying so.
//
// Limits:
//   - Time: inside the child the timeout and the step budget cancel the
//     thread (starlark.Thread.Cancel) between instructions; the parent
//     kills the child scriptrun.StartGrace after the timeout when one
//     built-in call did not return, and at once when ctx ends.
//   - Memory: inside the child the heap is sampled every 5 ms and the
//     thread cancelled once it grew by more than the cap
//     (scriptrun.WatchHeap); one call that allocates a huge value at once
//     ("x" * (1 << 29)) hits the child's address-space or resident-memory
//     limit and the child dies with ErrMemory.
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
	l.MaxSteps = orDefault(l.MaxSteps, max(int64(l.Timeout.Seconds()*DefaultStepsPerSecond), 1))
	l.MaxMemory = orDefault(l.MaxMemory, DefaultMaxMemory)
	gjson, err := scriptrun.EncodeGlobals(globals, l.MaxInputBytes, l.InputName)
	if err != nil {
		return l, nil, err
	}
	return l, gjson, nil
}

// fileOptions make Starlark read like plain Python; Recursion stays
// false, so a function that calls itself fails at once instead of
// spending the whole budget.
var fileOptions = &syntax.FileOptions{
	Set:             true,
	While:           true,
	TopLevelControl: true,
	GlobalReassign:  true,
}

// modules are the predeclared modules besides the globals. time is left
// out: a code node's output must not depend on when it ran.
var modules = starlark.StringDict{
	"json": json.Module,
	"math": math.Module,
}

// runLocal runs script in this process's interpreter, under the limits it
// can enforce itself; gjson is the JSON object of the globals and l has
// its defaults filled in. The sandbox child calls it.
func runLocal(ctx context.Context, script string, gjson []byte, l Limits) (string, error) {
	predeclared, err := decodeGlobals(gjson)
	if err != nil {
		return "", err
	}
	for name, m := range modules {
		if _, ok := predeclared[name]; !ok {
			predeclared[name] = m
		}
	}

	thread := &starlark.Thread{
		Name:  "script",
		Print: func(*starlark.Thread, string) {},
		Load: func(*starlark.Thread, string) (starlark.StringDict, error) {
			return nil, errors.New("load is not available: a script is one file, with the json and math modules predeclared")
		},
	}
	// cause is why the thread was stopped, when the limits stopped it;
	// the first reason wins, as with Cancel's own.
	var cause atomic.Pointer[error]
	halt := func(err error) {
		cause.CompareAndSwap(nil, &err)
		thread.Cancel(err.Error())
	}
	thread.SetMaxExecutionSteps(uint64(l.MaxSteps))
	thread.OnMaxSteps = func(*starlark.Thread) {
		halt(fmt.Errorf("script ran more than %d steps: %w", l.MaxSteps, ErrTimeout))
	}
	timer := time.AfterFunc(l.Timeout, func() { halt(fmt.Errorf("script ran longer than %v: %w", l.Timeout, ErrTimeout)) })
	defer timer.Stop()
	stop := context.AfterFunc(ctx, func() { halt(ctx.Err()) })
	defer stop()
	unwatch := scriptrun.WatchHeap(uint64(l.MaxMemory), 5*time.Millisecond, halt)
	defer unwatch()

	out, err := starlark.ExecFileOptions(fileOptions, thread, filename, script, predeclared)
	if err != nil {
		if c := cause.Load(); c != nil {
			return "", *c
		}
		return "", scriptError(err)
	}
	res, ok := out[ResultName]
	if !ok {
		return "", &ScriptError{Message: "the script set no result: assign the value to return to the global result, as in result = len(input)"}
	}
	return encodeResult(res, l.MaxOutputBytes)
}

// scriptError turns Starlark's errors into a *ScriptError with the
// position of the fault.
func scriptError(err error) error {
	var se syntax.Error
	if errors.As(err, &se) {
		return &ScriptError{Message: se.Error()}
	}
	var rl resolve.ErrorList
	if errors.As(err, &rl) {
		msgs := make([]string, 0, min(len(rl), 3))
		for i, e := range rl {
			if i == 3 {
				msgs = append(msgs, fmt.Sprintf("and %d more", len(rl)-3))
				break
			}
			msgs = append(msgs, e.Error())
		}
		return &ScriptError{Message: strings.Join(msgs, "; ")}
	}
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		return &ScriptError{Message: evalMessage(ee)}
	}
	return &ScriptError{Message: err.Error()}
}

// evalMessage is a run-time error at the innermost position in the script
// (a built-in's own frame has none), with the function it happened in.
func evalMessage(e *starlark.EvalError) string {
	for i := len(e.CallStack) - 1; i >= 0; i-- {
		fr := e.CallStack[i]
		if fr.Pos.Filename() != filename {
			continue
		}
		if fr.Name == "<toplevel>" {
			return fmt.Sprintf("%s: %s", fr.Pos, e.Msg)
		}
		return fmt.Sprintf("%s: in %s: %s", fr.Pos, fr.Name, e.Msg)
	}
	return e.Msg
}
