// Package scriptrun is what the script engines share: internal/jsrun
// (JavaScript in goja) and internal/starlarkrun (Starlark, a Python
// dialect). Each engine runs untrusted code with JSON data as its globals
// and returns JSON data; this package holds the parts that do not depend
// on the language, so that the two engines fail alike and a caller (the
// workflow code node, the run_javascript and run_starlark tools) handles
// both with one set of checks:
//
//   - the sentinel errors ErrTimeout, ErrMemory and ErrTooLarge, and
//     *Error for what the script itself did wrong;
//   - EncodeGlobals, the size check of what goes in, and DecodeResult;
//   - Job, the sandbox job that carries one run to a child process
//     (internal/sandbox) and its result or typed error back;
//   - WatchHeap, the heap cap of an interpreter without an allocator hook.
//
// An engine registers its job once, from a variable's initializer, and
// runs every script through it:
//
//	var job = scriptrun.NewJob("jsrun", runLocal)
//	...
//	return job.Run(ctx, source, globals, limits, scriptrun.Bounds{...})
package scriptrun

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Sentinel errors of every engine; test for them with errors.Is.
var (
	// ErrTimeout: a script ran past its time limit (for Starlark also its
	// step budget, a time limit counted in interpreter steps).
	ErrTimeout = errors.New("script time limit exceeded")
	// ErrMemory: a run grew the heap past its memory cap.
	ErrMemory = errors.New("script memory cap exceeded")
	// ErrTooLarge: the globals or the result exceed their size limit.
	ErrTooLarge = errors.New("too large")
)

// Error is what a script did wrong: an exception it raised or a built-in
// raised for it, a syntax error, a result that is not JSON data. Message
// is the engine's own words, such as JavaScript's "TypeError: x is not a
// function" or Starlark's "script.star:3:9: undefined: x".
type Error struct {
	Message string
}

func (e *Error) Error() string { return "script: " + e.Message }

// EncodeGlobals returns the JSON object of globals (nil is {}), or an
// error wrapping ErrTooLarge when it is longer than maxBytes. inputName
// names the globals, as a plural, in that error ("input, vars and
// nodes"); empty, the error says "the script's input is".
func EncodeGlobals(globals map[string]any, maxBytes int, inputName string) ([]byte, error) {
	if globals == nil {
		globals = map[string]any{}
	}
	gjson, err := json.Marshal(globals)
	if err != nil {
		return nil, fmt.Errorf("input is not JSON data: %w", err)
	}
	if len(gjson) > maxBytes {
		subject := "the script's input is"
		if inputName != "" {
			subject = inputName + " are"
		}
		return nil, fmt.Errorf("%s %d bytes of JSON, more than the limit of %d: %w", subject, len(gjson), maxBytes, ErrTooLarge)
	}
	return gjson, nil
}

// DecodeResult turns a result's JSON text into Go data: objects, arrays,
// strings, float64, booleans and nil. The empty text (no value) is nil.
func DecodeResult(text string) (any, error) {
	if text == "" {
		return nil, nil
	}
	var out any
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return nil, fmt.Errorf("decode script result: %w", err)
	}
	return out, nil
}
