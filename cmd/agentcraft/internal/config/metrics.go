package config

import (
	"net"
	"strings"
)

// MetricsListenNone as metrics.listen serves no metrics listener of its
// own (then only metrics.token's /metrics on the main port, if set).
const MetricsListenNone = "none"

// DefaultMetricsListen is metrics.listen's default: loopback only, the
// port OpenTelemetry's Prometheus exporter registered.
const DefaultMetricsListen = "127.0.0.1:9464"

// minMetricsToken is the shortest metrics.token accepted: it is the only
// thing between the world and /metrics on the main port.
const minMetricsToken = 16

// Metrics serves Prometheus metrics (README "Metrics"). On by default, on
// a listener of its own bound to loopback; the main port serves /metrics
// only with a token.
type Metrics struct {
	// Enabled turns metrics on (counting and serving). Default true.
	Enabled *bool `yaml:"enabled"`
	// Listen is the address of a listener serving only GET /metrics, for
	// serve and worker alike (give each process on one host its own,
	// e.g. AGENTCRAFT_METRICS_LISTEN=127.0.0.1:9465 for a worker).
	// Default DefaultMetricsListen; "none": no listener of its own. When
	// the default port is taken the process logs a warning and runs
	// without it; an address set here that cannot be bound stops it.
	Listen string `yaml:"listen"`
	// Token, when set, is the bearer token /metrics needs: then serve
	// also serves GET /metrics on the main port (server.addr), and the
	// listener of Listen asks for it too. At least 16 characters; use
	// ${METRICS_TOKEN} to keep it out of the file. Default none: /metrics
	// only on Listen, without authentication.
	Token string `yaml:"token"`
}

// On reports whether metrics are enabled.
func (m Metrics) On() bool { return m.Enabled == nil || *m.Enabled }

// ListenDefault reports whether Listen is the default (not set in the
// file or the environment), so that a taken port is not fatal.
func (m Metrics) ListenDefault() bool { return m.Listen == "" }

// Addr is the address of the metrics listener, "" for none.
func (m Metrics) Addr() string {
	switch m.Listen {
	case "":
		return DefaultMetricsListen
	case MetricsListenNone:
		return ""
	}
	return m.Listen
}

// validate reports the first problem with metrics: through bad.
func (m Metrics) validate(bad func(path, format string, args ...any)) {
	if !m.On() {
		return
	}
	if m.Listen != "" && m.Listen != MetricsListenNone {
		if _, port, err := net.SplitHostPort(m.Listen); err != nil || port == "" {
			bad("metrics.listen", "%q is not HOST:PORT: use e.g. 127.0.0.1:9464, :9464 for every interface, or none", m.Listen)
		}
	}
	if m.Token != "" && len(strings.TrimSpace(m.Token)) < minMetricsToken {
		bad("metrics.token", "is %d characters: use at least %d (e.g. openssl rand -hex 24), or leave it out to serve /metrics only on metrics.listen", len(strings.TrimSpace(m.Token)), minMetricsToken)
	}
}
