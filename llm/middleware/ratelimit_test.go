package middleware

import (
	"context"
	"errors"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/google/go-cmp/cmp"
)

// limited returns a model behind a fresh RateLimit and its limiter.
func limited(t *testing.T, opts *RateLimitOptions) (llm.Model, *limiter) {
	t.Helper()
	m := RateLimit(opts)(okModel{}).(*rateLimited)
	return m, m.l
}

// okModel answers every request at once.
type okModel struct{}

func (okModel) Generate(context.Context, llm.Request) (llm.Response, error) {
	return llm.Response{FinishReason: llm.FinishStop}, nil
}

func (okModel) Stream(context.Context, llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) { yield(llm.Event{Type: llm.EventFinish}, nil) }
}

// waitQueued waits until n callers are queued.
func waitQueued(t *testing.T, l *limiter, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for l.queued() != n {
		if time.Now().After(deadline) {
			t.Fatalf("queued = %d, want %d", l.queued(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestRateLimitBurstThenQueue(t *testing.T) {
	m, l := limited(t, &RateLimitOptions{RPS: 1000, Burst: 3})
	for i := range 3 {
		if _, err := m.Generate(context.Background(), llm.Request{}); err != nil {
			t.Fatalf("request %d within the burst: %v", i, err)
		}
	}
	if l.queued() != 0 {
		t.Errorf("queued = %d after burst", l.queued())
	}
	// The fourth waits about 1ms for a token, then passes.
	if _, err := m.Generate(context.Background(), llm.Request{}); err != nil {
		t.Fatal(err)
	}
}

func TestRateLimitFIFO(t *testing.T) {
	// One token per 100ms; the burst is spent by the first call, so each
	// waiter below gets its own later slot.
	m, l := limited(t, &RateLimitOptions{RPS: 10, Burst: 1})
	if _, err := m.Generate(context.Background(), llm.Request{}); err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		order []int
		wg    sync.WaitGroup
	)
	ctxs := make([]context.CancelFunc, 5)
	for i := range 5 {
		ctx, cancel := context.WithCancel(context.Background())
		ctxs[i] = cancel
		wg.Go(func() {
			if _, err := m.Generate(ctx, llm.Request{}); err != nil {
				if i == 2 && errors.Is(err, context.Canceled) {
					return
				}
				t.Errorf("waiter %d: %v", i, err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
		})
		waitQueued(t, l, i+1) // arrival order is the loop order
	}
	// Waiter 2 gives up; a newcomer must still queue behind 3 and 4.
	ctxs[2]()
	waitQueued(t, l, 4)
	wg.Go(func() {
		if _, err := m.Generate(context.Background(), llm.Request{}); err != nil {
			t.Errorf("waiter 5: %v", err)
			return
		}
		mu.Lock()
		order = append(order, 5)
		mu.Unlock()
	})
	wg.Wait()
	for _, cancel := range ctxs {
		cancel()
	}
	if diff := cmp.Diff([]int{0, 1, 3, 4, 5}, order); diff != "" {
		t.Errorf("service order (-want +got):\n%s", diff)
	}
}

func TestRateLimitQueueFull(t *testing.T) {
	m, l := limited(t, &RateLimitOptions{RPS: 0.001, Burst: 1, Queue: 2, Timeout: time.Hour})
	if _, err := m.Generate(context.Background(), llm.Request{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if _, err := m.Generate(ctx, llm.Request{}); !errors.Is(err, context.Canceled) {
				t.Errorf("queued waiter: %v, want context.Canceled", err)
			}
		})
	}
	waitQueued(t, l, 2)

	start := time.Now()
	_, err := drain(m.Stream(context.Background(), llm.Request{}))
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.KindRateLimit || le.Status != 0 || le.RetryAfter <= 0 ||
		!strings.Contains(le.Message, "local rate limit") || !strings.Contains(le.Message, "2 requests already waiting") {
		t.Errorf("third caller: %#v, want a local rate_limit error with RetryAfter", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("refusal took %v, want immediate", took)
	}
	cancel()
	wg.Wait()
	if l.queued() != 0 {
		t.Errorf("queued = %d after the waiters left", l.queued())
	}
}

func TestRateLimitNoQueue(t *testing.T) {
	m, _ := limited(t, &RateLimitOptions{RPS: 0.001, Burst: 1, Queue: -1})
	if _, err := m.Generate(context.Background(), llm.Request{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(context.Background(), llm.Request{}); llm.KindOf(err) != llm.KindRateLimit {
		t.Errorf("second call: %v, want rate_limit at once", err)
	}
}

func TestRateLimitTimeout(t *testing.T) {
	t.Run("slot too far away", func(t *testing.T) {
		m, l := limited(t, &RateLimitOptions{RPS: 0.01, Burst: 1, Timeout: 200 * time.Millisecond})
		m.Generate(context.Background(), llm.Request{})
		start := time.Now()
		_, err := m.Generate(context.Background(), llm.Request{})
		var le *llm.Error
		if !errors.As(err, &le) || le.Kind != llm.KindRateLimit || !strings.Contains(le.Message, "within 200ms") ||
			!strings.Contains(le.Message, "0.01 requests/s") {
			t.Errorf("error = %v, want a local rate_limit timeout naming the wait and the limit", err)
		}
		// The next token is 100s away: waiting out the 200ms is pointless.
		if took := time.Since(start); took > 150*time.Millisecond {
			t.Logf("refusal took %v (expected at once; loaded machine?)", took)
		}
		if l.queued() != 0 {
			t.Errorf("queued = %d after timeout", l.queued())
		}
	})
	t.Run("slot in time", func(t *testing.T) {
		m, _ := limited(t, &RateLimitOptions{RPS: 10, Burst: 1, Timeout: 5 * time.Second})
		m.Generate(context.Background(), llm.Request{})
		start := time.Now()
		if _, err := m.Generate(context.Background(), llm.Request{}); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took < 50*time.Millisecond {
			t.Errorf("second call passed after %v, want it to wait for the next token (~100ms)", took)
		}
	})
	t.Run("queued behind a slow head", func(t *testing.T) {
		// The head's slot (1s away) fits its 1.5s timeout; the second
		// waiter's slot would be 2s away, beyond its own timeout, so it is
		// refused when its turn comes, without waiting any longer.
		m, l := limited(t, &RateLimitOptions{RPS: 1, Burst: 1, Timeout: 1500 * time.Millisecond})
		m.Generate(context.Background(), llm.Request{})
		// Each waiter has its own channel: the head's answer and the
		// second's refusal come at the same moment (the head's turn), in
		// either order.
		headErr, tailErr := make(chan error, 1), make(chan error, 1)
		go func() { _, err := m.Generate(context.Background(), llm.Request{}); headErr <- err }()
		waitQueued(t, l, 1)
		go func() { _, err := m.Generate(context.Background(), llm.Request{}); tailErr <- err }()
		got := []llm.Kind{llm.KindOf(<-headErr), llm.KindOf(<-tailErr)}
		if diff := cmp.Diff([]llm.Kind{"", llm.KindRateLimit}, got); diff != "" {
			t.Errorf("outcomes of head and second waiter (-want +got):\n%s", diff)
		}
	})
}

func TestRateLimitCancelWhileQueued(t *testing.T) {
	m, l := limited(t, &RateLimitOptions{RPS: 0.001, Burst: 1, Timeout: time.Hour})
	m.Generate(context.Background(), llm.Request{})
	headCtx, cancelHead := context.WithCancel(context.Background())
	tailCtx, cancelTail := context.WithCancel(context.Background())
	headErr := make(chan error, 1)
	tailErr := make(chan error, 1)
	go func() { _, err := m.Generate(headCtx, llm.Request{}); headErr <- err }()
	waitQueued(t, l, 1)
	go func() { _, err := drain(m.Stream(tailCtx, llm.Request{})); tailErr <- err }()
	waitQueued(t, l, 2)

	cancelTail()
	if err := <-tailErr; !errors.Is(err, context.Canceled) || llm.KindOf(err) != llm.KindCanceled {
		t.Errorf("cancelled tail: %v, want context.Canceled", err)
	}
	waitQueued(t, l, 1)
	cancelHead()
	if err := <-headErr; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled head: %v, want context.Canceled", err)
	}
	waitQueued(t, l, 0)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Generate(ctx, llm.Request{}); !errors.Is(err, context.Canceled) {
		t.Errorf("already cancelled caller: %v", err)
	}
}
