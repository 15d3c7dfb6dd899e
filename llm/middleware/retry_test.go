package middleware

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/google/go-cmp/cmp"
)

// sleepRecorder replaces RetryOptions.Sleep: it records delays and returns
// at once.
type sleepRecorder struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.delays = append(s.delays, d)
	s.mu.Unlock()
	return ctx.Err()
}

func fastRetry(s *sleepRecorder, logger *slog.Logger) llm.Middleware {
	return Retry(&RetryOptions{Sleep: s.sleep, Logger: logger})
}

func TestRetryRetryableStatuses(t *testing.T) {
	for _, status := range []int{408, 429, 500, 502, 503, 504, 529} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			t.Run("generate", func(t *testing.T) {
				fake := newFake(t, failure(status), answer("ok"))
				var s sleepRecorder
				resp, err := fastRetry(&s, nil)(fake).Generate(context.Background(), llm.Request{})
				if err != nil || resp.Message.Text() != "ok" {
					t.Fatalf("Generate = %q, %v; want ok after a retry", resp.Message.Text(), err)
				}
				if fake.calls() != 2 || len(s.delays) != 1 {
					t.Errorf("calls = %d, sleeps = %d; want 2 and 1", fake.calls(), len(s.delays))
				}
			})
			t.Run("stream", func(t *testing.T) {
				fake := newFake(t, failure(status), answer("ok"))
				var s sleepRecorder
				text, err := drain(fastRetry(&s, nil)(fake).Stream(context.Background(), llm.Request{}))
				if err != nil || text != "ok" {
					t.Fatalf("Stream = %q, %v; want ok after a retry", text, err)
				}
				if fake.calls() != 2 {
					t.Errorf("calls = %d, want 2", fake.calls())
				}
			})
		})
	}
}

func TestRetryTimeoutKind(t *testing.T) {
	// An adapter's own timeout (stalled stream, per-attempt deadline)
	// while the caller still waits is retried.
	timeout := reply{err: &llm.Error{Kind: llm.KindTimeout, Message: "no data for 60s"}}
	fake := newFake(t, timeout, reply{err: fmt.Errorf("read: %w", context.DeadlineExceeded)}, answer("ok"))
	var s sleepRecorder
	if _, err := fastRetry(&s, nil)(fake).Generate(context.Background(), llm.Request{}); err != nil {
		t.Fatal(err)
	}
	if fake.calls() != 3 {
		t.Errorf("calls = %d, want 3", fake.calls())
	}
}

func TestRetryNotRetryable(t *testing.T) {
	tests := map[string]reply{
		"400":      failure(400),
		"401":      failure(401),
		"403":      failure(403),
		"404":      failure(404),
		"policy":   {err: &llm.Error{Kind: llm.KindPolicy, Message: "blocked"}},
		"canceled": {err: &llm.Error{Kind: llm.KindCanceled, Err: context.Canceled}},
		"plain":    {err: errors.New("decode: bad json")},
	}
	for name, r := range tests {
		t.Run(name, func(t *testing.T) {
			fake := newFake(t, r)
			var s sleepRecorder
			_, err := fastRetry(&s, nil)(fake).Generate(context.Background(), llm.Request{})
			if err != r.err {
				t.Errorf("error = %v, want the upstream error unchanged", err)
			}
			if fake.calls() != 1 || len(s.delays) != 0 {
				t.Errorf("calls = %d, sleeps = %d; want 1 and 0", fake.calls(), len(s.delays))
			}
		})
	}
}

func TestRetryCallerContextNotRetried(t *testing.T) {
	for name, cause := range map[string]func(context.Context) (context.Context, context.CancelFunc){
		"cancelled": context.WithCancel,
		"deadline": func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithDeadline(ctx, time.Now().Add(-time.Second))
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := cause(context.Background())
			defer cancel()
			// The upstream fails with a retryable error because the
			// caller's ctx ended: that is not worth a retry.
			r := reply{err: &llm.Error{Kind: llm.KindTimeout, Status: 504, Err: context.DeadlineExceeded}, before: cancel}
			fake := newFake(t, r)
			var s sleepRecorder
			_, err := fastRetry(&s, nil)(fake).Generate(ctx, llm.Request{})
			if err != r.err || fake.calls() != 1 {
				t.Errorf("error = %v after %d calls; want the upstream error after 1", err, fake.calls())
			}
		})
	}
}

func TestRetryBackoffAndExhaustion(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	fake := newFake(t, failure(500), failure(502), failure(503), failure(529))
	var s sleepRecorder
	_, err := fastRetry(&s, logger)(fake).Generate(context.Background(), llm.Request{Model: "gpt-x"})
	var le *llm.Error
	if !errors.As(err, &le) || le.Status != 529 {
		t.Fatalf("error = %v, want the last upstream error (529)", err)
	}
	if fake.calls() != 4 {
		t.Errorf("calls = %d, want 1 + 3 retries", fake.calls())
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}
	if len(s.delays) != len(want) {
		t.Fatalf("delays = %v, want about %v", s.delays, want)
	}
	for i, d := range s.delays {
		if lo, hi := want[i]*8/10, want[i]*12/10; d < lo || d > hi {
			t.Errorf("delay %d = %v, want %v ±20%%", i, d, want[i])
		}
	}
	recs := records(t, &buf)
	last := recs[len(recs)-1]
	if last["level"] != "ERROR" || last["msg"] != "llm retries exhausted" || last["status"] != 529.0 ||
		!strings.Contains(fmt.Sprint(last["error"]), "upstream said no") || last["attempts"] != 4.0 || last["model"] != "gpt-x" {
		t.Errorf("last record = %v, want an Error record of the exhausted retries with the last error", last)
	}
	if n := countMsg(recs, "llm request retrying"); n != 3 {
		t.Errorf("%d retry records, want 3", n)
	}
}

func TestRetryBackoffCap(t *testing.T) {
	script := make([]reply, 7)
	for i := range script {
		script[i] = failure(503)
	}
	fake := newFake(t, script...)
	var s sleepRecorder
	mw := Retry(&RetryOptions{MaxRetries: 6, Sleep: s.sleep})
	if _, err := mw(fake).Generate(context.Background(), llm.Request{}); err == nil {
		t.Fatal("no error after exhausted retries")
	}
	if len(s.delays) != 6 {
		t.Fatalf("delays = %v, want 6", s.delays)
	}
	for _, d := range s.delays {
		if d > 8*time.Second {
			t.Errorf("delay %v exceeds the 8s cap", d)
		}
	}
	if last := s.delays[5]; last < 6400*time.Millisecond {
		t.Errorf("sixth delay %v, want near the 8s cap", last)
	}
}

func TestRetryMaxRetries(t *testing.T) {
	for _, tt := range []struct{ max, calls int }{{1, 2}, {-1, 1}, {5, 6}} {
		script := make([]reply, tt.calls)
		for i := range script {
			script[i] = failure(503)
		}
		fake := newFake(t, script...)
		var s sleepRecorder
		Retry(&RetryOptions{MaxRetries: tt.max, Sleep: s.sleep})(fake).Generate(context.Background(), llm.Request{})
		if fake.calls() != tt.calls {
			t.Errorf("MaxRetries %d: %d calls, want %d", tt.max, fake.calls(), tt.calls)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	t.Run("honoured", func(t *testing.T) {
		r := failure(429)
		r.err.(*llm.Error).RetryAfter = 3 * time.Second
		fake := newFake(t, r, answer("ok"))
		var s sleepRecorder
		if _, err := fastRetry(&s, nil)(fake).Generate(context.Background(), llm.Request{}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]time.Duration{3 * time.Second}, s.delays); diff != "" {
			t.Errorf("delays (-want +got):\n%s", diff)
		}
	})
	t.Run("too long", func(t *testing.T) {
		r := failure(429)
		r.err.(*llm.Error).RetryAfter = 90 * time.Second
		fake := newFake(t, r)
		var s sleepRecorder
		_, err := fastRetry(&s, nil)(fake).Generate(context.Background(), llm.Request{})
		var le *llm.Error
		if !errors.As(err, &le) || le.RetryAfter != 90*time.Second {
			t.Errorf("error = %v, want the 429 with its RetryAfter", err)
		}
		if fake.calls() != 1 || len(s.delays) != 0 {
			t.Errorf("calls = %d, sleeps = %v; want no retry", fake.calls(), s.delays)
		}
	})
	t.Run("configurable max", func(t *testing.T) {
		r := failure(503)
		r.err.(*llm.Error).RetryAfter = 20 * time.Second
		fake := newFake(t, r, answer("ok"))
		var s sleepRecorder
		mw := Retry(&RetryOptions{MaxRetryAfter: 30 * time.Second, Sleep: s.sleep})
		if _, err := mw(fake).Generate(context.Background(), llm.Request{}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]time.Duration{20 * time.Second}, s.delays); diff != "" {
			t.Errorf("delays (-want +got):\n%s", diff)
		}
	})
}

func TestRetryStreamAfterFirstEvent(t *testing.T) {
	cut := reply{
		events: []llm.Event{{Type: llm.EventTextDelta, Text: "Hel"}},
		err:    &llm.Error{Kind: llm.KindProvider, Status: 529, Message: "overloaded"},
	}
	fake := newFake(t, cut)
	var s sleepRecorder
	text, err := drain(fastRetry(&s, nil)(fake).Stream(context.Background(), llm.Request{}))
	if text != "Hel" || err != cut.err {
		t.Errorf("Stream = %q, %v; want the first chunk, then the 529 unchanged", text, err)
	}
	if fake.calls() != 1 {
		t.Errorf("calls = %d: a stream that already yielded must not be replayed", fake.calls())
	}
}

func TestRetryStreamStopsWhenConsumerBreaks(t *testing.T) {
	fake := newFake(t, answer("ok"))
	var s sleepRecorder
	for range fastRetry(&s, nil)(fake).Stream(context.Background(), llm.Request{}) {
		break
	}
	if fake.calls() != 1 {
		t.Errorf("calls = %d, want 1", fake.calls())
	}
}

func TestRetryCancelDuringBackoff(t *testing.T) {
	fake := newFake(t, failure(503))
	mw := Retry(&RetryOptions{BaseDelay: time.Minute, MaxDelay: time.Minute}) // real sleep
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := drain(mw(fake).Stream(ctx, llm.Request{}))
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("returned after %v, want promptly after cancel", took)
	}
	if !errors.Is(err, context.Canceled) || llm.KindOf(err) != llm.KindCanceled {
		t.Errorf("error = %v (kind %s), want context.Canceled", err, llm.KindOf(err))
	}
	if fake.calls() != 1 {
		t.Errorf("calls = %d, want 1", fake.calls())
	}
}

// records parses JSON log lines.
func records(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func countMsg(recs []map[string]any, msg string) int {
	n := 0
	for _, r := range recs {
		if r["msg"] == msg {
			n++
		}
	}
	return n
}
