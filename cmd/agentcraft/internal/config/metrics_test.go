package config

import (
	"strings"
	"testing"
)

// TestMetricsConfig: metrics are on by default on a loopback listener of
// their own; listen, token and enabled are read from the file and the
// environment; a bad address or a short token is refused with its path.
func TestMetricsConfig(t *testing.T) {
	cfg, err := Load("", []string{})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Metrics.On() || cfg.Metrics.Addr() != DefaultMetricsListen || !cfg.Metrics.ListenDefault() || cfg.Metrics.Token != "" {
		t.Errorf("default metrics = %+v (addr %q)", cfg.Metrics, cfg.Metrics.Addr())
	}

	cfg, err = Load(write(t, "metrics:\n  listen: \":9500\"\n  token: ${METRICS_TOKEN}\n"), []string{"METRICS_TOKEN=0123456789abcdef0123"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Metrics.Addr() != ":9500" || cfg.Metrics.ListenDefault() || cfg.Metrics.Token != "0123456789abcdef0123" {
		t.Errorf("metrics = %+v", cfg.Metrics)
	}

	cfg, err = Load("", []string{"AGENTCRAFT_METRICS_LISTEN=none", "AGENTCRAFT_METRICS_ENABLED=false"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Metrics.On() || cfg.Metrics.Addr() != "" {
		t.Errorf("metrics from the environment = %+v", cfg.Metrics)
	}

	for _, tc := range []struct{ body, want string }{
		{"metrics:\n  listen: \"9464\"\n", "metrics.listen"},
		{"metrics:\n  listen: \"localhost\"\n", "metrics.listen"},
		{"metrics:\n  token: short\n", "metrics.token"},
		{"metrics:\n  tokn: x\n", "metrics.tokn"},
	} {
		_, err := Load(write(t, tc.body), []string{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one naming %s", tc.body, err, tc.want)
		}
	}
	// Off: nothing about it is checked.
	if _, err := Load(write(t, "metrics:\n  enabled: false\n  token: short\n"), []string{}); err != nil {
		t.Errorf("disabled metrics with a short token: %v", err)
	}
}
