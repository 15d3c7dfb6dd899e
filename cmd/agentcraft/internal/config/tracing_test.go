package config

import (
	"strings"
	"testing"
)

func TestTracing(t *testing.T) {
	cfg, err := Load(write(t, ""), []string{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Tracing.Enabled() {
		t.Fatalf("tracing is on without configuration: %+v", cfg.Tracing)
	}

	cfg, err = Load(write(t, `
tracing: {endpoint: "http://127.0.0.1:4318", sample_ratio: 0.25, capture_content: true, service_name: agentcraft-eu}
`), []string{})
	if err != nil {
		t.Fatal(err)
	}
	tr := cfg.Tracing
	if !tr.Enabled() || tr.Endpoint != "http://127.0.0.1:4318" || tr.Ratio() != 0.25 || !tr.CaptureContent || tr.ServiceName != "agentcraft-eu" {
		t.Fatalf("tracing = %+v", tr)
	}
	cfg, err = Load(write(t, `tracing: {endpoint: "http://collector:4318"}`), []string{})
	if err != nil || cfg.Tracing.Ratio() != 1 || cfg.Tracing.CaptureContent {
		t.Fatalf("defaults: %+v, %v", cfg.Tracing, err)
	}
	// sample_ratio 0 is a choice (export nothing new), not "unset".
	cfg, err = Load(write(t, `tracing: {endpoint: "http://collector:4318", sample_ratio: 0}`), []string{})
	if err != nil || cfg.Tracing.Ratio() != 0 {
		t.Fatalf("sample_ratio 0: %+v, %v", cfg.Tracing, err)
	}

	// The standard OpenTelemetry variables, below the file and AGENTCRAFT_*.
	for _, tc := range []struct {
		body string
		env  []string
		want string
	}{
		{"", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://otel:4318"}, "http://otel:4318"},
		{"", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://otel:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://tempo:4318/v1/traces"}, "http://tempo:4318/v1/traces"},
		{`tracing: {endpoint: "http://file:4318"}`, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://otel:4318"}, "http://file:4318"},
		{"", []string{"AGENTCRAFT_TRACING_ENDPOINT=http://ac:4318", "OTEL_EXPORTER_OTLP_ENDPOINT=http://otel:4318"}, "http://ac:4318"},
		{`tracing: {endpoint: "http://file:4318"}`, []string{"OTEL_SDK_DISABLED=true"}, ""},
	} {
		cfg, err := Load(write(t, tc.body), tc.env)
		if err != nil || cfg.Tracing.Endpoint != tc.want {
			t.Errorf("%q with %v: endpoint = %q, %v; want %q", tc.body, tc.env, cfg.Tracing.Endpoint, err, tc.want)
		}
	}

	cfg, err = Load(write(t, ""), []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://otel:4318", "OTEL_SERVICE_NAME=ac-eu"})
	if err != nil || cfg.Tracing.ServiceName != "ac-eu" {
		t.Errorf("OTEL_SERVICE_NAME: %+v, %v", cfg.Tracing, err)
	}

	for _, tc := range []struct{ body, want string }{
		{`tracing: {endpoint: "127.0.0.1:4318"}`, "tracing.endpoint: \"127.0.0.1:4318\" is not a URL"},
		{`tracing: {endpoint: "localhost:4318"}`, "tracing.endpoint: \"localhost:4318\" is not an http:// or https:// URL"},
		{`tracing: {endpoint: "grpc://127.0.0.1:4317"}`, "tracing.endpoint"},
		{`tracing: {endpoint: "http://"}`, "tracing.endpoint: \"http://\" has no host"},
		{`tracing: {endpoint: "http://c:4318", sample_ratio: 1.5}`, "tracing.sample_ratio: 1.5 is outside 0..1"},
		{`tracing: {endpoint: "http://c:4318", sample_ratio: -0.1}`, "tracing.sample_ratio"},
		{`tracing: {endpoint: "http://c:4318", service_name: " x"}`, "tracing.service_name"},
		{`tracing: {endpont: "http://c:4318"}`, "tracing.endpont: unknown key"},
	} {
		_, err := Load(write(t, tc.body), []string{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want mention of %s", tc.body, err, tc.want)
		}
	}
	if _, err := Load(write(t, ""), []string{"OTEL_EXPORTER_OTLP_ENDPOINT=localhost:4318"}); err == nil || !strings.Contains(err.Error(), "tracing.endpoint") {
		t.Errorf("a bad OTEL_EXPORTER_OTLP_ENDPOINT: err = %v, want it named as tracing.endpoint", err)
	}
}
