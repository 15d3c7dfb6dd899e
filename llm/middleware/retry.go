package middleware

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
)

// RetryOptions configure Retry. The zero value means defaults.
type RetryOptions struct {
	// MaxRetries is how many times one request is retried after its first
	// attempt failed. Default (zero): 3. Negative: never retry.
	MaxRetries int
	// BaseDelay is the backoff before the first retry; it doubles for each
	// further retry (0.5s, 1s, 2s, …) and gets ±20% jitter so that callers
	// throttled together do not return together. Default: 500ms.
	BaseDelay time.Duration
	// MaxDelay caps the backoff. Default: 8s.
	MaxDelay time.Duration
	// MaxRetryAfter is the longest wait a provider may ask for (Retry-After,
	// retry-after-ms). When it asks for more, Retry gives up and returns the
	// error, RetryAfter intact, at once: a chat user is better served by an
	// immediate 429 than by a request that hangs for minutes, and the
	// caller may still decide to wait. Default: MaxDelay.
	MaxRetryAfter time.Duration
	// Logger receives a Warn record per retry and an Error record when
	// retries are exhausted. Default: discard.
	Logger *slog.Logger
	// Sleep waits d, or until ctx is done and then returns ctx's error.
	// Default: a timer. Tests replace it to run without waiting.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Retry returns middleware that retries transient upstream failures:
// HTTP status 408, 429, 500, 502, 503, 504 and 529, and errors of kind
// llm.KindTimeout, as long as the caller's own ctx is still live — a
// caller that cancelled or ran out of time is never retried on.
//
// The wait before a retry is the provider's RetryAfter when it gave one
// (see RetryOptions.MaxRetryAfter), else exponential backoff. A stream is
// retried only while nothing has reached the consumer: once an event was
// yielded, a later error passes through unchanged, since replaying the
// answer would duplicate text the user already saw. Errors are returned
// as received, so callers still see the provider's *llm.Error.
func Retry(opts *RetryOptions) llm.Middleware {
	var o RetryOptions
	if opts != nil {
		o = *opts
	}
	switch {
	case o.MaxRetries == 0:
		o.MaxRetries = 3
	case o.MaxRetries < 0:
		o.MaxRetries = 0
	}
	if o.BaseDelay <= 0 {
		o.BaseDelay = 500 * time.Millisecond
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = 8 * time.Second
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = o.MaxDelay
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	return func(next llm.Model) llm.Model { return &retrying{next: next, o: o} }
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type retrying struct {
	next llm.Model
	o    RetryOptions
}

func (m *retrying) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := m.next.Generate(ctx, req)
		if err == nil {
			return resp, nil
		}
		if werr := m.wait(ctx, req, attempt, err); werr != nil {
			return resp, werr
		}
	}
}

func (m *retrying) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		for attempt := 0; ; attempt++ {
			yielded := false
			var failed error
			for ev, err := range m.next.Stream(ctx, req) {
				if err != nil {
					failed = err
					break
				}
				yielded = true
				if !yield(ev, nil) {
					return
				}
			}
			if failed == nil {
				return
			}
			if yielded {
				yield(llm.Event{}, failed)
				return
			}
			if werr := m.wait(ctx, req, attempt, failed); werr != nil {
				yield(llm.Event{}, werr)
				return
			}
		}
	}
}

// wait decides whether the attempt-th attempt's failure err is retried.
// It returns nil after sleeping when it is, else the error to return.
func (m *retrying) wait(ctx context.Context, req llm.Request, attempt int, err error) error {
	if !retryable(ctx, err) {
		return err
	}
	if attempt >= m.o.MaxRetries {
		if attempt > 0 {
			m.o.Logger.LogAttrs(ctx, slog.LevelError, "llm retries exhausted",
				append(errorAttrs(req, err), slog.Int("attempts", attempt+1))...)
		}
		return err
	}
	delay := m.backoff(attempt)
	var le *llm.Error
	if errors.As(err, &le) && le.RetryAfter > 0 {
		if le.RetryAfter > m.o.MaxRetryAfter {
			m.o.Logger.LogAttrs(ctx, slog.LevelWarn, "llm retry skipped: retry_after too long",
				append(errorAttrs(req, err),
					slog.Int64("retry_after_ms", le.RetryAfter.Milliseconds()),
					slog.Int64("max_retry_after_ms", m.o.MaxRetryAfter.Milliseconds()))...)
			return err
		}
		delay = le.RetryAfter
	}
	m.o.Logger.LogAttrs(ctx, slog.LevelWarn, "llm request retrying",
		append(errorAttrs(req, err), slog.Int("attempt", attempt+1), slog.Int64("delay_ms", delay.Milliseconds()))...)
	if serr := m.o.Sleep(ctx, delay); serr != nil {
		return fmt.Errorf("retry: wait before retry %d after %v: %w", attempt+1, err, serr)
	}
	return nil
}

// backoff returns the jittered delay before retry number attempt+1.
func (m *retrying) backoff(attempt int) time.Duration {
	d := m.o.BaseDelay
	for range attempt {
		d *= 2
		if d >= m.o.MaxDelay {
			break
		}
	}
	d = time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
	return min(d, m.o.MaxDelay)
}

// retryable reports whether err is transient and the caller still waits.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var le *llm.Error
	if errors.As(err, &le) {
		switch le.Status {
		case 408, 429, 500, 502, 503, 504, 529:
			return true
		}
	}
	return llm.KindOf(err) == llm.KindTimeout
}

// errorAttrs are the attributes that describe a failed request.
func errorAttrs(req llm.Request, err error) []slog.Attr {
	attrs := make([]slog.Attr, 0, 8)
	var le *llm.Error
	if errors.As(err, &le) {
		if le.Provider != "" {
			attrs = append(attrs, slog.String("provider", le.Provider))
		}
		if le.Status != 0 {
			attrs = append(attrs, slog.Int("status", le.Status))
		}
	}
	return append(attrs,
		slog.String("model", req.Model),
		slog.String("error", err.Error()),
		slog.String("error_kind", string(llm.KindOf(err))))
}
