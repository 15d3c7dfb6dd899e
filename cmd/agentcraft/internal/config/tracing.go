package config

import (
	"net/url"
	"strings"
)

// Tracing configures OpenTelemetry tracing: spans of HTTP requests,
// workflow runs and nodes, agent runs, model calls and tool calls, sent
// over OTLP/HTTP (protobuf) to a collector, Jaeger or Tempo. Off unless
// Endpoint is set (here, by AGENTCRAFT_TRACING_ENDPOINT or by the standard
// OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).
type Tracing struct {
	// Endpoint is the OTLP/HTTP receiver, such as http://127.0.0.1:4318
	// (/v1/traces is appended unless the path already ends in it).
	// Default: none, and tracing is off.
	Endpoint string `yaml:"endpoint"`
	// SampleRatio is the share of new traces recorded, 0 to 1; requests
	// arriving with a sampled traceparent are always recorded. Default 1.
	SampleRatio *float64 `yaml:"sample_ratio"`
	// CaptureContent records prompts, completions, tool arguments and
	// tool results on the spans. Default false: names, ids, token counts
	// and timings only.
	CaptureContent bool `yaml:"capture_content"`
	// ServiceName is the resource's service.name. Default
	// OTEL_SERVICE_NAME, else agentcraft.
	ServiceName string `yaml:"service_name"`
}

// Enabled reports whether spans are exported.
func (t Tracing) Enabled() bool { return t.Endpoint != "" }

// Ratio is SampleRatio with its default.
func (t Tracing) Ratio() float64 {
	if t.SampleRatio == nil {
		return 1
	}
	return *t.SampleRatio
}

// tracingFromEnv fills tracing.endpoint (and service_name, from
// OTEL_SERVICE_NAME) from the OpenTelemetry standard variables when the
// file and AGENTCRAFT_TRACING_* leave them empty,
// and turns tracing off with OTEL_SDK_DISABLED=true. The traces-specific
// variable is the signal's whole URL, as the specification says; the
// general one is a base to which /v1/traces is appended.
func (c *Config) tracingFromEnv(env map[string]string) {
	if strings.EqualFold(strings.TrimSpace(env["OTEL_SDK_DISABLED"]), "true") {
		c.Tracing.Endpoint = ""
		return
	}
	if c.Tracing.ServiceName == "" {
		c.Tracing.ServiceName = strings.TrimSpace(env["OTEL_SERVICE_NAME"])
	}
	if c.Tracing.Endpoint != "" {
		return
	}
	if u := strings.TrimSpace(env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]); u != "" {
		c.Tracing.Endpoint = u
		return
	}
	c.Tracing.Endpoint = strings.TrimSpace(env["OTEL_EXPORTER_OTLP_ENDPOINT"])
}

// validateTracing reports the problems of tracing.
func (c *Config) validateTracing(bad func(path, format string, args ...any)) {
	t := c.Tracing
	if t.Endpoint == "" {
		return
	}
	u, err := url.Parse(t.Endpoint)
	switch {
	case err != nil:
		bad("tracing.endpoint", "%q is not a URL (%v): give the OTLP/HTTP receiver, such as http://127.0.0.1:4318", t.Endpoint, err)
	case u.Scheme != "http" && u.Scheme != "https":
		bad("tracing.endpoint", "%q is not an http:// or https:// URL: traces are sent over OTLP/HTTP, such as http://127.0.0.1:4318 (port 4318, not gRPC's 4317)", t.Endpoint)
	case u.Host == "":
		bad("tracing.endpoint", "%q has no host: write it as http://HOST:4318", t.Endpoint)
	}
	if r := t.SampleRatio; r != nil && (*r < 0 || *r > 1) {
		bad("tracing.sample_ratio", "%v is outside 0..1: 1 records every trace, 0.1 one in ten", *r)
	}
	if t.ServiceName != "" && strings.TrimSpace(t.ServiceName) != t.ServiceName {
		bad("tracing.service_name", "%q has leading or trailing spaces: remove them", t.ServiceName)
	}
}
