package metrics

import (
	"context"
	"iter"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentcraftlab/agentcraft/llm"
)

// Model wraps next, a provider's model as one agent uses it, so that each
// request it sends counts: requests, latency, the tokens the provider
// reported (input, output, cached) and errors by llm.Kind. Placed inside
// the retry layer, every attempt counts, and a throttled attempt shows as
// a rate_limit error. A nil m returns next.
func (m *Metrics) Model(next llm.Model, provider, model, agent string) llm.Model {
	if m == nil {
		return next
	}
	lv := prometheus.Labels{"provider": bounded(provider), "model": bounded(model), "agent": bounded(agent)}
	// The series are resolved once per agent's chain, not per request.
	return &measured{
		next:     next,
		m:        m,
		lv:       lv,
		requests: m.llmRequests.With(lv),
		duration: m.llmDuration.With(lv),
		input:    m.llmTokens.MustCurryWith(lv).WithLabelValues("input"),
		output:   m.llmTokens.MustCurryWith(lv).WithLabelValues("output"),
		cached:   m.llmTokens.MustCurryWith(lv).WithLabelValues("cached"),
	}
}

type measured struct {
	next                  llm.Model
	m                     *Metrics
	lv                    prometheus.Labels
	requests              prometheus.Counter
	duration              prometheus.Observer
	input, output, cached prometheus.Counter
}

func (x *measured) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	start := time.Now()
	resp, err := x.next.Generate(ctx, req)
	x.done(start, &resp.Usage, err)
	return resp, err
}

func (x *measured) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		start := time.Now()
		var usage *llm.Usage
		var failed error
		defer func() { x.done(start, usage, failed) }()
		for ev, err := range x.next.Stream(ctx, req) {
			if err != nil {
				failed = err
			} else if ev.Type == llm.EventFinish && ev.Usage != nil {
				usage = ev.Usage
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// done records one request that took since start and ended with usage (nil
// when the provider reported none) or err.
func (x *measured) done(start time.Time, usage *llm.Usage, err error) {
	x.requests.Inc()
	x.duration.Observe(time.Since(start).Seconds())
	if usage != nil {
		x.input.Add(float64(max(usage.InputTokens, 0)))
		x.output.Add(float64(max(usage.OutputTokens, 0)))
		x.cached.Add(float64(max(usage.CachedTokens, 0)))
	}
	if err != nil {
		x.m.llmErrors.MustCurryWith(x.lv).WithLabelValues(string(llm.KindOf(err))).Inc()
	}
}
