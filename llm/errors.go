package llm

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Kind classifies an error so that callers decide without parsing text:
// the HTTP layer maps kinds to status codes, the retry middleware retries
// only transient kinds.
type Kind string

// Error kinds. The set is closed.
const (
	// KindCaller: the request is invalid (400); retrying will not help.
	KindCaller Kind = "caller"
	// KindAuth: the provider refused the credentials (401, 403).
	KindAuth Kind = "auth"
	// KindNotFound: the model or resource does not exist (404).
	KindNotFound Kind = "not_found"
	// KindRateLimit: the provider or our own limiter throttled (429).
	KindRateLimit Kind = "rate_limit"
	// KindQuota: a budget of the caller's workspace is spent (429);
	// retrying will not help until it resets (RetryAfter says when).
	KindQuota Kind = "quota"
	// KindPolicy: a guardrail or policy refused the request.
	KindPolicy Kind = "policy"
	// KindProvider: the provider failed (5xx, 529, broken or truncated stream).
	KindProvider Kind = "provider"
	// KindTimeout: the provider did not answer in time.
	KindTimeout Kind = "timeout"
	// KindCanceled: the caller went away.
	KindCanceled Kind = "canceled"
	// KindInternal: a bug or unexpected state in AgentCraft.
	KindInternal Kind = "internal"
)

// ErrIncompleteStream reports a stream that ended before its finish event.
var ErrIncompleteStream = errors.New("incomplete stream")

// Error is an error from a model or a middleware.
type Error struct {
	Kind Kind
	// Provider names the provider configuration, when known.
	Provider string
	// Status is the upstream HTTP status, 0 when none was received.
	Status int
	// RetryAfter is the delay the provider asked for, 0 when none.
	RetryAfter time.Duration
	// Message is meant for API clients. It may quote the upstream's error
	// text, which may quote a credential: Error passes its whole text
	// through RedactSecrets, and clients see only Error's text.
	Message string
	// Err is the underlying cause, if any.
	Err error
}

func (e *Error) Error() string {
	s := string(e.Kind)
	if e.Provider != "" {
		s = e.Provider + ": " + s
	}
	if e.Status != 0 {
		s += fmt.Sprintf(" (status %d)", e.Status)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Err != nil && (e.Message == "" || e.Err.Error() != e.Message) {
		s += ": " + e.Err.Error()
	}
	return RedactSecrets(s)
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of err: the Kind of the first *Error in its
// chain, KindCanceled or KindTimeout for context errors, else KindInternal.
func KindOf(err error) Kind {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Kind
	case errors.Is(err, context.Canceled):
		return KindCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return KindTimeout
	}
	return KindInternal
}

// KindForStatus maps an upstream HTTP status to a Kind.
func KindForStatus(status int) Kind {
	switch {
	case status == 401 || status == 403:
		return KindAuth
	case status == 404:
		return KindNotFound
	case status == 408:
		return KindTimeout
	case status == 429:
		return KindRateLimit
	case status >= 500:
		return KindProvider
	case status >= 400:
		return KindCaller
	}
	return KindProvider
}
