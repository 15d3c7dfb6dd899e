package cli

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/internal/tracing"
)

// startTracing turns OpenTelemetry tracing on when tracing.endpoint is
// set; the returned function flushes the spans still buffered (bounded by
// server.shutdown_timeout) and turns it off. serve and worker defer it
// first, so it runs last: the spans of the shutdown itself are exported.
func startTracing(ctx context.Context, cfg config.Config, logger *slog.Logger) (func(), error) {
	t := cfg.Tracing
	if !t.Enabled() {
		return func() {}, nil
	}
	// Export failures (a collector that is down) are the SDK's to retry
	// and drop; they are logged, never a failed request.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		logger.Warn("tracing_export_failed", "endpoint", t.Endpoint, "error", err)
	}))
	p, err := tracing.Setup(ctx, tracing.Config{Endpoint: t.Endpoint, SampleRatio: t.Ratio(), CaptureContent: t.CaptureContent,
		ServiceName: t.ServiceName, ServiceVersion: version()})
	if err != nil {
		return nil, err
	}
	logger.Info("tracing_on", "endpoint", t.Endpoint, "sample_ratio", t.Ratio(), "capture_content", t.CaptureContent)
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.Server.ShutdownTimeout)
		defer cancel()
		if err := p.Shutdown(sctx); err != nil {
			logger.Warn("tracing_flush_failed", "error", err)
		}
	}, nil
}
