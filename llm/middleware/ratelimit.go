package middleware

import (
	"context"
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/agentcraftlab/agentcraft/llm"
)

// RateLimitOptions configure RateLimit. The zero value means defaults.
type RateLimitOptions struct {
	// RPS is the sustained number of requests per second.
	// Default (zero or negative): 5.
	RPS float64
	// Burst is how many requests may start at once after a quiet spell.
	// Default (zero or negative): RPS rounded up, so 5 with the default
	// RPS — one second's worth, which lets a short flurry (an agent's
	// parallel sub-tasks) through without queueing while still holding
	// the sustained rate.
	Burst int
	// Queue is how many callers may wait for a slot; when that many are
	// waiting, the next caller is refused at once. Default (zero): 10.
	// Negative: nobody waits, a caller that finds no free slot is refused.
	Queue int
	// Timeout bounds a caller's whole wait, queueing included; a caller
	// that cannot get a slot in time is refused. A caller whose slot
	// cannot arrive before its timeout is refused without waiting.
	// Default (zero or negative): 30s.
	Timeout time.Duration
}

// RateLimit returns middleware that admits requests at a steady rate
// (golang.org/x/time/rate token bucket) and queues callers fairly: waiters
// are served strictly in arrival order, unlike rate.Limiter.Wait, under
// which a later caller can overtake an earlier one.
//
// Refusals are *llm.Error with Kind llm.KindRateLimit and Status 0 (the
// limit is ours, not the provider's); a refusal because the queue is full
// carries an estimated RetryAfter. A caller whose ctx ends while waiting
// leaves the queue and gets ctx's error.
//
// The limiter is created here and shared by every Model the returned
// middleware wraps: wrap all models of one provider account with the same
// middleware value to share one limit. A stream takes one slot when it
// starts.
func RateLimit(opts *RateLimitOptions) llm.Middleware {
	var o RateLimitOptions
	if opts != nil {
		o = *opts
	}
	if o.RPS <= 0 {
		o.RPS = 5
	}
	if o.Burst <= 0 {
		o.Burst = max(1, int(math.Ceil(o.RPS)))
	}
	switch {
	case o.Queue == 0:
		o.Queue = 10
	case o.Queue < 0:
		o.Queue = 0
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	l := &limiter{lim: rate.NewLimiter(rate.Limit(o.RPS), o.Burst), opts: o}
	return func(next llm.Model) llm.Model { return &rateLimited{next: next, l: l} }
}

type rateLimited struct {
	next llm.Model
	l    *limiter
}

func (m *rateLimited) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := m.l.acquire(ctx); err != nil {
		return llm.Response{}, err
	}
	return m.next.Generate(ctx, req)
}

func (m *rateLimited) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if err := m.l.acquire(ctx); err != nil {
			yield(llm.Event{}, err)
			return
		}
		m.next.Stream(ctx, req)(yield)
	}
}

// limiter puts a FIFO queue in front of a token bucket. Only the waiter at
// the head of the queue reserves a token, so tokens are handed out in
// arrival order and a cancelled waiter never leaves a reservation behind
// that later callers would have to wait out.
type limiter struct {
	lim  *rate.Limiter
	opts RateLimitOptions

	mu      sync.Mutex
	waiters []*waiter // guarded by mu; arrival order, head first
}

// waiter is one queued caller.
type waiter struct {
	turn chan struct{} // closed when the waiter reaches the head
}

func (l *limiter) acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("ratelimit: wait for a request slot: %w", err)
	}
	deadline := time.Now().Add(l.opts.Timeout)

	l.mu.Lock()
	if len(l.waiters) == 0 && l.lim.Allow() {
		l.mu.Unlock()
		return nil
	}
	if n := len(l.waiters); n >= l.opts.Queue {
		l.mu.Unlock()
		return &llm.Error{
			Kind: llm.KindRateLimit,
			Message: fmt.Sprintf("local rate limit reached: %d requests already waiting (limit %s requests/s); try again later",
				n, formatRPS(l.opts.RPS)),
			RetryAfter: time.Duration(float64(n+1) / l.opts.RPS * float64(time.Second)),
		}
	}
	w := &waiter{turn: make(chan struct{})}
	l.waiters = append(l.waiters, w)
	if len(l.waiters) == 1 {
		close(w.turn)
	}
	l.mu.Unlock()
	defer l.leave(w)

	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-w.turn:
	case <-ctx.Done():
		return fmt.Errorf("ratelimit: wait for a request slot: %w", ctx.Err())
	case <-timer.C:
		return l.timeoutError()
	}

	r := l.lim.Reserve()
	delay := r.Delay()
	if delay == 0 {
		return nil
	}
	if delay > time.Until(deadline) {
		r.Cancel()
		return l.timeoutError()
	}
	timer.Reset(delay)
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		r.Cancel()
		return fmt.Errorf("ratelimit: wait for a request slot: %w", ctx.Err())
	}
}

// leave removes w from the queue and hands the turn to the next waiter.
func (l *limiter) leave(w *waiter) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := slices.Index(l.waiters, w)
	if i < 0 {
		return
	}
	l.waiters = slices.Delete(l.waiters, i, i+1)
	if i == 0 && len(l.waiters) > 0 {
		close(l.waiters[0].turn)
	}
}

func (l *limiter) timeoutError() error {
	return &llm.Error{
		Kind: llm.KindRateLimit,
		Message: fmt.Sprintf("local rate limit: no request slot became free within %s (limit %s requests/s); try again later",
			l.opts.Timeout, formatRPS(l.opts.RPS)),
	}
}

// queued returns the number of waiting callers.
func (l *limiter) queued() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.waiters)
}

func formatRPS(r float64) string { return strconv.FormatFloat(r, 'g', -1, 64) }
