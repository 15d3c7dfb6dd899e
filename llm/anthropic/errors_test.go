package anthropic_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/anthropic"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
)

const (
	millisecond = time.Millisecond
	// timeoutStall outlasts every deadline of these tests; Close of the
	// fake interrupts it.
	timeoutStall = time.Minute
)

func asLLMError(t *testing.T, err error) *llm.Error {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *llm.Error", err, err)
	}
	return e
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func TestErrors(t *testing.T) {
	tests := []struct {
		name       string
		fault      llmtest.Fault
		kind       llm.Kind
		status     int
		retryAfter time.Duration
		deltas     int  // events yielded by Stream before the error
		incomplete bool // the error wraps llm.ErrIncompleteStream
	}{
		{name: "rate limited", fault: llmtest.Fault{Status: 429, RetryAfter: "3"},
			kind: llm.KindRateLimit, status: 429, retryAfter: 3 * time.Second},
		{name: "retry-after-ms wins", fault: llmtest.Fault{Status: 429, RetryAfter: "9", RetryAfterMs: "1500"},
			kind: llm.KindRateLimit, status: 429, retryAfter: 1500 * time.Millisecond},
		{name: "overloaded", fault: llmtest.Fault{Status: 529, RetryAfter: "1"},
			kind: llm.KindProvider, status: 529, retryAfter: time.Second},
		{name: "server error", fault: llmtest.Fault{Status: 500},
			kind: llm.KindProvider, status: 500},
		{name: "bad key", fault: llmtest.Fault{Status: 401},
			kind: llm.KindAuth, status: 401},
		{name: "no such model", fault: llmtest.Fault{Status: 404},
			kind: llm.KindNotFound, status: 404},
		{name: "bad request", fault: llmtest.Fault{Status: 400, Message: "max_tokens: too large"},
			kind: llm.KindCaller, status: 400},
		{name: "overloaded mid-stream", fault: llmtest.Fault{AfterChunks: 2, Status: 529},
			kind: llm.KindProvider, status: 529, deltas: 2},
		{name: "rate limited mid-stream", fault: llmtest.Fault{AfterChunks: 1, Status: 429},
			kind: llm.KindRateLimit, status: 429, deltas: 1},
		{name: "truncated", fault: llmtest.Fault{AfterChunks: 2, Truncate: true},
			kind: llm.KindProvider, deltas: 2, incomplete: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.fault
			srv := llmtest.NewAnthropic(t, llmtest.Turn{Text: "abcdefghijklmnop", Fault: &f})
			c := newClient(t, srv, &anthropic.Options{Name: "claude-eu"})
			events, err := drain(c.Stream(t.Context(), userRequest("hi")))
			if len(events) != tt.deltas {
				t.Errorf("%d events before the error, want %d", len(events), tt.deltas)
			}
			e := asLLMError(t, err)
			if e.Kind != tt.kind || e.Status != tt.status || e.RetryAfter != tt.retryAfter || e.Provider != "claude-eu" {
				t.Errorf("got kind %q status %d retry-after %v provider %q, want %q %d %v claude-eu: %v",
					e.Kind, e.Status, e.RetryAfter, e.Provider, tt.kind, tt.status, tt.retryAfter, err)
			}
			if got := errors.Is(err, llm.ErrIncompleteStream); got != tt.incomplete {
				t.Errorf("errors.Is(err, ErrIncompleteStream) = %v, want %v: %v", got, tt.incomplete, err)
			}
			if tt.fault.Message != "" && e.Message != tt.fault.Message {
				t.Errorf("message %q, want the provider's %q", e.Message, tt.fault.Message)
			}
			if strings.Contains(err.Error(), "test-key") {
				t.Errorf("error text holds the API key: %v", err)
			}
		})
	}
}

func TestGenerateErrors(t *testing.T) {
	srv := llmtest.NewAnthropic(t,
		llmtest.Turn{Fault: &llmtest.Fault{Status: 529, RetryAfterMs: "250"}},
		llmtest.Turn{Fault: &llmtest.Fault{Status: 429, RetryAfter: "2"}},
		llmtest.Turn{Fault: &llmtest.Fault{Status: 403}},
		llmtest.Turn{Text: "abcdefghijkl", Fault: &llmtest.Fault{AfterChunks: 1, Truncate: true}},
	)
	c := newClient(t, srv, nil)
	want := []struct {
		kind       llm.Kind
		status     int
		retryAfter time.Duration
	}{
		{llm.KindProvider, 529, 250 * time.Millisecond},
		{llm.KindRateLimit, 429, 2 * time.Second},
		{llm.KindAuth, 403, 0},
		{llm.KindProvider, 0, 0}, // the body broke off
	}
	for i, w := range want {
		_, err := c.Generate(t.Context(), userRequest("hi"))
		e := asLLMError(t, err)
		if e.Kind != w.kind || e.Status != w.status || e.RetryAfter != w.retryAfter {
			t.Errorf("call %d: kind %q status %d retry-after %v, want %q %d %v: %v",
				i, e.Kind, e.Status, e.RetryAfter, w.kind, w.status, w.retryAfter, err)
		}
	}
}

// TestNoSDKRetries checks that a retryable failure reaches the caller
// after one attempt: retrying is the middleware's job.
func TestNoSDKRetries(t *testing.T) {
	for _, status := range []int{429, 500, 529} {
		srv := llmtest.NewAnthropic(t,
			llmtest.Turn{Fault: &llmtest.Fault{Status: status, RetryAfterMs: "1"}},
			llmtest.Turn{Fault: &llmtest.Fault{Status: status, RetryAfterMs: "1"}},
			llmtest.Turn{Text: "would be a retry"},
			llmtest.Turn{Text: "would be a retry"},
		)
		c := newClient(t, srv, nil)
		if _, err := c.Generate(t.Context(), userRequest("hi")); err == nil {
			t.Errorf("status %d: Generate succeeded, want the error", status)
		}
		if _, err := llm.Collect(c.Stream(t.Context(), userRequest("hi"))); err == nil {
			t.Errorf("status %d: Stream succeeded, want the error", status)
		}
		if n := len(srv.Requests()); n != 2 {
			t.Errorf("status %d: server got %d requests for 2 calls; the SDK retried", status, n)
		}
	}
}

func TestContextErrors(t *testing.T) {
	stalled := func(t *testing.T) *anthropic.Client {
		srv := llmtest.NewAnthropic(t, llmtest.Turn{Text: "abcdefgh", Fault: &llmtest.Fault{AfterChunks: 1, Stall: timeoutStall}})
		return newClient(t, srv, nil)
	}
	t.Run("stream deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
		defer cancel()
		events, err := drain(stalled(t).Stream(ctx, userRequest("hi")))
		if len(events) != 1 {
			t.Errorf("%d events before the stall, want 1", len(events))
		}
		if e := asLLMError(t, err); e.Kind != llm.KindTimeout || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("kind %q, want timeout wrapping DeadlineExceeded: %v", e.Kind, err)
		}
	})
	t.Run("stream canceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var err error
		for ev, e := range stalled(t).Stream(ctx, userRequest("hi")) {
			if e != nil {
				err = e
				break
			}
			if ev.Type == llm.EventTextDelta {
				cancel() // the caller goes away while the provider stalls
			}
		}
		if e := asLLMError(t, err); e.Kind != llm.KindCanceled || !errors.Is(err, context.Canceled) {
			t.Errorf("kind %q, want canceled wrapping context.Canceled: %v", e.Kind, err)
		}
	})
	t.Run("generate canceled", func(t *testing.T) {
		srv := llmtest.NewAnthropic(t, llmtest.Turn{Text: "x", Fault: &llmtest.Fault{AfterChunks: 1, Stall: timeoutStall}})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		time.AfterFunc(50*time.Millisecond, cancel) // the caller goes away while the provider stalls
		_, err := newClient(t, srv, nil).Generate(ctx, userRequest("hi"))
		if e := asLLMError(t, err); e.Kind != llm.KindCanceled {
			t.Errorf("kind %q, want canceled: %v", e.Kind, err)
		}
	})
	t.Run("generate Options.Timeout", func(t *testing.T) {
		srv := llmtest.NewAnthropic(t, llmtest.Turn{Text: "x", Fault: &llmtest.Fault{AfterChunks: 1, Stall: timeoutStall}})
		_, err := newClient(t, srv, &anthropic.Options{Timeout: 100 * time.Millisecond}).Generate(t.Context(), userRequest("hi"))
		if e := asLLMError(t, err); e.Kind != llm.KindTimeout {
			t.Errorf("kind %q, want timeout: %v", e.Kind, err)
		}
	})
}

func TestConnectionRefused(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	url := srv.URL
	srv.Close()
	c, err := anthropic.New(&anthropic.Options{BaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	_, genErr := c.Generate(t.Context(), userRequest("hi"))
	_, streamErr := llm.Collect(c.Stream(t.Context(), userRequest("hi")))
	for _, err := range []error{genErr, streamErr} {
		e := asLLMError(t, err)
		if e.Kind != llm.KindProvider || e.Status != 0 || errors.Is(err, llm.ErrIncompleteStream) {
			t.Errorf("kind %q status %d, want provider without status, not an incomplete stream: %v", e.Kind, e.Status, err)
		}
	}
}
