package tool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/agentcraftlab/agentcraft/internal/scriptrun"
)

// callScript is the Call of the script tools (run_javascript,
// run_starlark): it parses {"code", "input"} against schema, runs code
// with the one global input through run, and returns the result's JSON.
// Script errors, time-outs and the memory cap are error Results; the
// caller's cancellation is returned as a Go error.
func callScript(ctx context.Context, args json.RawMessage, schema *argSchema, run func(ctx context.Context, code string, globals map[string]any) (any, error)) (Result, error) {
	var in struct {
		Code  string          `json:"code"`
		Input json.RawMessage `json:"input"`
	}
	if res, ok := schema.parse(args, &in); !ok {
		return res, nil
	}
	var input any
	if len(in.Input) > 0 {
		if err := json.Unmarshal(in.Input, &input); err != nil {
			return ErrorResult(`"input" is not valid JSON: %v`, err), nil
		}
	}
	out, err := run(ctx, in.Code, map[string]any{"input": input})
	if err != nil {
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, scriptrun.ErrTimeout) && !errors.Is(err, scriptrun.ErrMemory) {
			return Result{}, cerr
		}
		return ErrorResult("%v", err), nil
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the model reads "<b>", not "\u003cb\u003e"
	if err := enc.Encode(out); err != nil {
		return Result{}, err // cannot happen: out was decoded from JSON
	}
	return Result{Content: strings.TrimSuffix(b.String(), "\n")}, nil
}
