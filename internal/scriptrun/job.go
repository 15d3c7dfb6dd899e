package scriptrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/sandbox"
)

// StartGrace is how long after a script's time limit the parent kills
// the child: the child's start (a few milliseconds) and the engine's own,
// cleaner, interruption of a script between instructions fit in it. A
// script stuck in one built-in call ends at its time limit plus
// StartGrace.
const StartGrace = 250 * time.Millisecond

// Local runs source in this process, the sandbox child, under the
// engine's limits lim: globals is the JSON object of the globals
// (EncodeGlobals), the returned text is the result's JSON ("" for no
// value). Its errors are *Error for the script's faults, or wrap
// ErrTimeout, ErrMemory, ErrTooLarge or ctx's error; those kinds cross
// back to the parent.
type Local[L any] func(ctx context.Context, source string, globals []byte, lim L) (string, error)

// Job is an engine's sandbox job kind. L is the engine's limits type,
// sent to the child as JSON.
type Job[L any] struct {
	kind string
}

// NewJob registers local as the sandbox job kind and returns the job. It
// panics when kind is taken (sandbox.Register); call it from a package
// variable's initializer so that the child, which runs sandbox.Main after
// every init, finds the kind.
func NewJob[L any](kind string, local Local[L]) Job[L] {
	return Job[L]{kind: sandbox.Register(kind, func(ctx context.Context, in []byte) ([]byte, error) {
		var req request[L]
		if err := json.Unmarshal(in, &req); err != nil {
			return nil, fmt.Errorf("decode script job: %w", err)
		}
		text, err := local(ctx, req.Script, req.Globals, req.Limits)
		var resp response
		if err != nil {
			resp = response{Error: err.Error(), ErrKind: errorKind(err)}
			var se *Error
			if errors.As(err, &se) {
				resp.Error = se.Message
			}
		} else if text != "" {
			resp.Result = json.RawMessage(text)
		}
		// Unescaped: the result's text crosses as it is, so what fits
		// the engine's MaxOutputBytes fits the child's output cap (a
		// string would escape every quote of it, HTML escaping every <).
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(resp); err != nil {
			return nil, fmt.Errorf("encode script job result: %w", err)
		}
		return buf.Bytes(), nil
	})}
}

// Bounds size the child of one run.
type Bounds struct {
	// Timeout is the script's time limit; the child is killed StartGrace
	// after it.
	Timeout time.Duration
	// MaxMemory is the script's memory cap, named in the error when the
	// child dies of it.
	MaxMemory int64
	// Overhead is what the child's interpreter holds besides the
	// script's growth (its runtime, the globals converted into it); the
	// child may use MaxMemory plus Overhead.
	Overhead int64
	// MaxOutputBytes bounds the result's JSON text.
	MaxOutputBytes int
}

// request is what Run sends the child, as JSON.
type request[L any] struct {
	Script  string          `json:"script"`
	Globals json.RawMessage `json:"globals"`
	Limits  L               `json:"limits"`
}

// response is what the child sends back, as JSON: the result's JSON
// (absent for no value) or an error.
type response struct {
	Result  json.RawMessage `json:"result,omitempty"`
	Error   string          `json:"error,omitempty"`
	ErrKind string          `json:"err_kind,omitempty"`
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

// Run runs source with globals (EncodeGlobals' JSON) under lim in a
// child process bounded by b, and returns the result as Go data
// (DecodeResult). The errors are the child's, rebuilt (*Error, or
// wrapping ErrTimeout, ErrMemory or ErrTooLarge); ErrTimeout or ErrMemory
// when the child was killed at its deadline or died of its memory limit;
// ctx's error when ctx ended first.
func (j Job[L]) Run(ctx context.Context, source string, globals []byte, lim L, b Bounds) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	in, err := json.Marshal(request[L]{Script: source, Globals: globals, Limits: lim})
	if err != nil {
		return nil, fmt.Errorf("encode script job: %w", err)
	}
	out, err := sandbox.Run(ctx, j.kind, in, &sandbox.Limits{
		Timeout:        b.Timeout + StartGrace,
		MaxMemory:      b.MaxMemory + b.Overhead,
		MaxOutputBytes: int64(b.MaxOutputBytes) + 64<<10,
	})
	switch {
	case err == nil:
	case errors.Is(err, sandbox.ErrTimeout):
		return nil, fmt.Errorf("script ran longer than %v: %w", b.Timeout, ErrTimeout)
	case errors.Is(err, sandbox.ErrMemory):
		return nil, fmt.Errorf("script used more memory than its cap of %d MiB: %w", b.MaxMemory>>20, ErrMemory)
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
	return DecodeResult(string(resp.Result))
}

func errorKind(err error) string {
	var se *Error
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
		return &Error{Message: msg}
	case kindTimeout:
		return sandbox.Carried(msg, ErrTimeout)
	case kindMemory:
		return sandbox.Carried(msg, ErrMemory)
	case kindTooLarge:
		return sandbox.Carried(msg, ErrTooLarge)
	case kindCanceled:
		// The child's own deadline, which is the script's time limit
		// plus StartGrace: a time-out as far as the caller is concerned.
		return sandbox.Carried(msg, ErrTimeout)
	}
	return errors.New(msg)
}
