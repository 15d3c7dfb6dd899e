package jsrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/sandbox"
)

// startGrace is how long after the script's time limit the parent kills
// the child: the child's start (a few milliseconds) and its own,
// cleaner, interruption of a script between instructions fit in it. A
// script stuck in one built-in call ends at Timeout plus startGrace.
const startGrace = 250 * time.Millisecond

// memoryOverhead is what the child holds besides the script's heap
// growth: the goja runtime and the globals parsed into it, per byte of
// their JSON.
const (
	memoryOverhead     = 16 << 20
	memoryPerInputByte = 8
)

// job is the sandbox kind that runs scripts; runJob is its child side.
var job = sandbox.Register("jsrun", runJob)

// request is what Run sends the child, as JSON.
type request struct {
	Script  string          `json:"script"`
	Globals json.RawMessage `json:"globals"`
	Limits  Limits          `json:"limits"`
}

// response is what the child sends back, as JSON: the result's JSON text
// ("" for undefined) or an error.
type response struct {
	Result  string `json:"result,omitempty"`
	Error   string `json:"error,omitempty"`
	ErrKind string `json:"err_kind,omitempty"`
}

// Error kinds in response.ErrKind; they rebuild the error types on the
// parent's side.
const (
	kindScript   = "script"
	kindTimeout  = "timeout"
	kindMemory   = "memory"
	kindTooLarge = "too_large"
	kindCanceled = "canceled"
	kindOther    = "other"
)

func runSandboxed(ctx context.Context, script string, gjson []byte, l Limits) (any, error) {
	in, err := json.Marshal(request{Script: script, Globals: gjson, Limits: l})
	if err != nil {
		return nil, fmt.Errorf("encode script job: %w", err)
	}
	out, err := sandbox.Run(ctx, job, in, &sandbox.Limits{
		Timeout:        l.Timeout + startGrace,
		MaxMemory:      l.MaxMemory + memoryOverhead + memoryPerInputByte*int64(len(gjson)),
		MaxOutputBytes: int64(l.MaxOutputBytes) + 64<<10,
	})
	switch {
	case err == nil:
	case errors.Is(err, sandbox.ErrTimeout):
		return nil, fmt.Errorf("script ran longer than %v: %w", l.Timeout, ErrTimeout)
	case errors.Is(err, sandbox.ErrMemory):
		return nil, fmt.Errorf("script used more memory than its cap of %d MiB: %w", l.MaxMemory>>20, ErrMemory)
	default:
		if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
			return nil, err
		}
		return nil, fmt.Errorf("run script: %w", err)
	}
	var resp response
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, fmt.Errorf("decode script job result: %w", err)
	}
	if resp.ErrKind != "" {
		return nil, rebuildError(resp.ErrKind, resp.Error)
	}
	return decodeResult(resp.Result)
}

// runJob is the child side: it runs the script in-process, under goja's
// own limits, inside the sandbox's.
func runJob(ctx context.Context, in []byte) ([]byte, error) {
	var req request
	if err := json.Unmarshal(in, &req); err != nil {
		return nil, fmt.Errorf("decode script job: %w", err)
	}
	text, err := runLocal(ctx, req.Script, req.Globals, req.Limits)
	resp := response{Result: text}
	if err != nil {
		resp = response{Error: err.Error(), ErrKind: errorKind(err)}
		var se *ScriptError
		if errors.As(err, &se) {
			resp.Error = se.Message
		}
	}
	return json.Marshal(resp)
}

func errorKind(err error) string {
	var se *ScriptError
	switch {
	case errors.As(err, &se):
		return kindScript
	case errors.Is(err, ErrTimeout):
		return kindTimeout
	case errors.Is(err, ErrMemory):
		return kindMemory
	case errors.Is(err, ErrTooLarge):
		return kindTooLarge
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return kindCanceled
	}
	return kindOther
}

func rebuildError(kind, msg string) error {
	switch kind {
	case kindScript:
		return &ScriptError{Message: msg}
	case kindTimeout:
		return sandbox.Carried(msg, ErrTimeout)
	case kindMemory:
		return sandbox.Carried(msg, ErrMemory)
	case kindTooLarge:
		return sandbox.Carried(msg, ErrTooLarge)
	case kindCanceled:
		// The child's own deadline, which is the script's time limit
		// plus startGrace: a time-out as far as the caller is concerned.
		return sandbox.Carried(msg, ErrTimeout)
	}
	return errors.New(msg)
}
