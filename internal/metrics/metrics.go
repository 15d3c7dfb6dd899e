// Package metrics is AgentCraft's Prometheus instrumentation: one registry
// per process (never the client library's global one, so tests build as
// many as they like in parallel) holding the Go and process collectors and
// AgentCraft's own families, and the seams that feed them:
//
//	m := metrics.New(nil)
//	handler = m.HTTP(mux)                                // HTTP requests by route pattern
//	model = m.Model(adapter, "openai", "gpt-4.1", "helper") // LLM requests, tokens, errors
//	agent.ToolCalls = m.ToolCall                         // tool calls by tool and outcome
//	m.WorkflowRun("succeeded", d); m.WorkflowNode("agent", "succeeded", d)
//	m.WatchDatabase(db, nil)                             // queue, approvals, database size at scrape time
//	http.Handle("GET /metrics", m.Handler())
//
// Every label set is bounded: route patterns (never paths), provider,
// model, agent and tool names from the configuration, node kinds, status
// strings and error kinds of closed sets. Ids (runs, workspaces, keys,
// users) never become labels, so a busy server's series count stays flat.
//
// A nil *Metrics is valid and records nothing, so the seams call it
// unconditionally.
package metrics

import (
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// namespace prefixes every AgentCraft metric name.
const namespace = "agentcraft"

// Options configure New.
type Options struct {
	// NoRuntime leaves out the Go runtime and process collectors
	// (go_*, process_*). Default false: they are registered.
	NoRuntime bool
}

// Metrics is one process's registry and AgentCraft's metric families. It
// is safe for concurrent use; the zero value is not, use New. A nil
// *Metrics records nothing.
type Metrics struct {
	reg *prometheus.Registry

	httpRequests *prometheus.CounterVec   // route, code
	httpDuration *prometheus.HistogramVec // route

	llmRequests *prometheus.CounterVec   // provider, model, agent
	llmErrors   *prometheus.CounterVec   // provider, model, agent, kind
	llmTokens   *prometheus.CounterVec   // provider, model, agent, type
	llmDuration *prometheus.HistogramVec // provider, model, agent

	toolCalls    *prometheus.CounterVec   // tool, outcome
	toolDuration *prometheus.HistogramVec // tool

	runs         *prometheus.CounterVec   // status
	runDuration  *prometheus.HistogramVec // status
	nodes        *prometheus.CounterVec   // kind, status
	nodeDuration *prometheus.HistogramVec // kind, status
}

// New returns a fresh registry with AgentCraft's families registered (and,
// unless opts.NoRuntime, the Go and process collectors).
func New(opts *Options) *Metrics {
	var o Options
	if opts != nil {
		o = *opts
	}
	m := &Metrics{reg: prometheus.NewRegistry()}
	if !o.NoRuntime {
		m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Subsystem: "http", Name: "requests_total",
		Help: "HTTP requests served, by route pattern (\"unmatched\" when no route matched) and status code."}, []string{"route", "code"})
	m.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Subsystem: "http", Name: "request_duration_seconds",
		Help:    "Time from a request's arrival to its handler's return (a stream's whole length), by route pattern.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}}, []string{"route"})

	llm := []string{"provider", "model", "agent"}
	m.llmRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Subsystem: "llm", Name: "requests_total",
		Help: "Model requests sent to providers (each attempt of a retried request counts), by provider, model and agent."}, llm)
	m.llmErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Subsystem: "llm", Name: "errors_total",
		Help: "Model requests that failed, by provider, model, agent and error kind (rate_limit, provider, timeout, auth, caller, ...)."},
		append(llm[:3:3], "kind"))
	m.llmTokens = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Subsystem: "llm", Name: "tokens_total",
		Help: "Tokens the providers reported, by provider, model, agent and type (input, output, cached; cached is part of input)."},
		append(llm[:3:3], "type"))
	m.llmDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Subsystem: "llm", Name: "request_duration_seconds",
		Help:    "Time from sending a model request to its last event or error, by provider, model and agent.",
		Buckets: []float64{.1, .25, .5, 1, 2.5, 5, 10, 20, 40, 80, 160, 320}}, llm)

	m.toolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Subsystem: "tool", Name: "calls_total",
		Help: "Server tool calls, by tool and outcome (ok, error, refused, timeout, invalid_arguments, unknown_tool, panic)."},
		[]string{"tool", "outcome"})
	m.toolDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Subsystem: "tool", Name: "call_duration_seconds",
		Help:    "Time one server tool call took, gate decision included, by tool.",
		Buckets: []float64{.005, .025, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}}, []string{"tool"})

	m.runs = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Subsystem: "workflow", Name: "runs_total",
		Help: "Workflow run executions that ended, by status (succeeded, failed, failed_contract, waiting when parked, blocked, canceled)."},
		[]string{"status"})
	m.runDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Subsystem: "workflow", Name: "run_duration_seconds",
		Help:    "Wall time of one execution of a workflow run (a parked run's next execution is observed again), by status.",
		Buckets: []float64{.1, .5, 1, 5, 10, 30, 60, 300, 900, 1800, 3600}}, []string{"status"})
	m.nodes = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Subsystem: "workflow", Name: "nodes_total",
		Help: "Workflow nodes executed, by node kind and status (succeeded, failed, waiting, skipped)."},
		[]string{"kind", "status"})
	m.nodeDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Subsystem: "workflow", Name: "node_duration_seconds",
		Help:    "Wall time of one workflow node that succeeded or failed, by node kind and status.",
		Buckets: []float64{.005, .025, .1, .5, 1, 2.5, 5, 10, 30, 60, 300}}, []string{"kind", "status"})

	m.reg.MustRegister(m.httpRequests, m.httpDuration, m.llmRequests, m.llmErrors, m.llmTokens, m.llmDuration,
		m.toolCalls, m.toolDuration, m.runs, m.runDuration, m.nodes, m.nodeDuration)
	return m
}

// Handler serves the registry in the Prometheus exposition format
// (OpenMetrics when the scraper asks for it). A collector that fails is
// left out of that scrape and logged in promhttp_metric_handler_errors_total;
// the rest is still served.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.InstrumentMetricHandler(m.reg, promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorHandling:     promhttp.ContinueOnError,
		Registry:          m.reg,
		EnableOpenMetrics: true,
		Timeout:           10 * time.Second,
		// Uncompressed: a scrape is ~10 KB, and promhttp's pooled gzip
		// writer does not outlive a garbage collection, so an idle server
		// scraped every 15 s allocated a new ~800 KB compressor each time
		// (four fifths of its garbage).
		OfferedCompressions: []promhttp.Compression{promhttp.Identity},
	}))
}

// WorkflowRun records one execution of a workflow run that ended with
// status after d.
func (m *Metrics) WorkflowRun(status string, d time.Duration) {
	if m == nil {
		return
	}
	status = bounded(status)
	m.runs.WithLabelValues(status).Inc()
	m.runDuration.WithLabelValues(status).Observe(d.Seconds())
}

// WorkflowNode records one workflow node of kind that ended with status;
// d < 0 (a node that parked or was skipped) counts it without a duration.
func (m *Metrics) WorkflowNode(kind, status string, d time.Duration) {
	if m == nil {
		return
	}
	kind, status = bounded(kind), bounded(status)
	m.nodes.WithLabelValues(kind, status).Inc()
	if d >= 0 {
		m.nodeDuration.WithLabelValues(kind, status).Observe(d.Seconds())
	}
}

// maxLabel caps a label value: names come from the configuration and
// closed sets, and the cap keeps a freak value from bloating every scrape.
const maxLabel = 128

// bounded returns v as a label value: valid UTF-8 (the client library
// panics on anything else), cut to maxLabel bytes at a character
// boundary, "none" when empty (an empty value is the same series as a
// missing label, which confuses queries).
func bounded(v string) string {
	if v == "" {
		return "none"
	}
	if !utf8.ValidString(v) {
		v = strings.ToValidUTF8(v, "\uFFFD")
	}
	if len(v) > maxLabel {
		n := maxLabel
		for n > 0 && !utf8.RuneStart(v[n]) {
			n--
		}
		v = v[:n]
	}
	return v
}
