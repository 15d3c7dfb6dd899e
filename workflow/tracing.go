package workflow

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/agentcraftlab/agentcraft/internal/tracing"
)

// traceNode opens the span of one node execution ("node {id}", with
// agentcraft.node.id, agentcraft.node.kind and agentcraft.node.key, the
// execution's key inside loops and maps) and returns the function that
// ends it with the node's error. A node replayed from its checkpoint ran
// before and gets none, nor do start and end. While tracing is off it returns ctx and a function
// that does nothing.
func traceNode(ctx context.Context, n *Node, key string) (context.Context, func(Result, error)) {
	if !tracing.Enabled() || n.Type == "start" || n.Type == "end" {
		// start and end only pass their input on: a span each would be noise.
		return ctx, func(Result, error) {}
	}
	ctx, span := tracing.Start(ctx, "node "+n.ID, trace.SpanKindInternal,
		tracing.NodeID.String(n.ID),
		tracing.NodeKind.String(n.Type),
		tracing.NodeKey.String(key))
	return ctx, func(res Result, err error) {
		switch {
		case err != nil:
			tracing.Fail(span, "node_failed", err)
		case res.Wait != nil:
			span.SetAttributes(tracing.RunStatus.String(string(StatusWaiting)))
		}
		span.End()
	}
}
