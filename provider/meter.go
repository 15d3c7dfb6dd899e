package provider

import (
	"context"
	"iter"
	"sync/atomic"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
)

// Meter accumulates the time a request spent waiting on providers, so the
// server can report its own overhead (X-AgentCraft-Overhead-Ms) as the
// request's duration minus upstream time.
type Meter struct {
	upstream atomic.Int64 // nanoseconds
}

// Upstream is the time spent inside provider calls so far. With parallel
// tool loops it may count overlapping calls once each.
func (m *Meter) Upstream() time.Duration { return time.Duration(m.upstream.Load()) }

func (m *Meter) add(d time.Duration) { m.upstream.Add(int64(d)) }

type meterKey struct{}

// WithMeter returns ctx carrying a fresh Meter.
func WithMeter(ctx context.Context) (context.Context, *Meter) {
	m := &Meter{}
	return context.WithValue(ctx, meterKey{}, m), m
}

func meterFrom(ctx context.Context) *Meter {
	m, _ := ctx.Value(meterKey{}).(*Meter)
	return m
}

// metered is the innermost layer of every chain: it charges the time spent
// inside the provider adapter to the request's Meter. For a stream that is
// the time between asking for the next event and receiving it.
type metered struct{ next llm.Model }

func (m metered) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	meter := meterFrom(ctx)
	if meter == nil {
		return m.next.Generate(ctx, req)
	}
	start := time.Now()
	resp, err := m.next.Generate(ctx, req)
	meter.add(time.Since(start))
	return resp, err
}

func (m metered) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	meter := meterFrom(ctx)
	if meter == nil {
		return m.next.Stream(ctx, req)
	}
	return func(yield func(llm.Event, error) bool) {
		start := time.Now()
		for ev, err := range m.next.Stream(ctx, req) {
			meter.add(time.Since(start))
			if !yield(ev, err) {
				return
			}
			start = time.Now()
		}
		meter.add(time.Since(start))
	}
}

// ContextWithMeter returns ctx carrying m, for a caller that keeps one
// Meter across several calls (the run seam's bound agent).
func ContextWithMeter(ctx context.Context, m *Meter) context.Context {
	return context.WithValue(ctx, meterKey{}, m)
}
