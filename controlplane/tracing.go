package controlplane

import (
	"context"
	"encoding/json"

	"go.opentelemetry.io/otel/trace"

	"github.com/agentcraftlab/agentcraft/internal/tracing"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// traceRun opens the span of one execution of a run ("run_workflow
// {name}", with agentcraft.run.id, agentcraft.workflow.id and the
// workspace); the workflow engine's node spans are its children. Its
// parent is the span of the request that started the run: in a goroutine
// of that process it is ctx's own; a queue worker, whose ctx has none,
// continues the trace context Start stored with the run (store.Run's
// TraceParent), so the run is in the request's trace whichever process
// executes it, and sampled as the request was. A run started with tracing
// off, or by no traced request, gets a trace of its own. While tracing is
// off it returns ctx and a span that records nothing.
func traceRun(ctx context.Context, run store.Run) (context.Context, trace.Span) {
	if !tracing.Enabled() {
		return tracing.Start(ctx, "", trace.SpanKindInternal)
	}
	ctx = tracing.Continue(ctx, run.TraceParent, run.TraceState)
	var def struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(run.Definition, &def) // a bad definition fails the run below, named in its span
	name := "run_workflow"
	if def.Name != "" {
		name += " " + def.Name
	}
	ctx, span := tracing.Start(ctx, name, trace.SpanKindInternal,
		tracing.RunID.String(run.ID),
		tracing.WorkspaceID.String(run.WorkspaceID))
	if run.WorkflowID != "" {
		span.SetAttributes(tracing.WorkflowID.String(run.WorkflowID))
	}
	return context.WithValue(ctx, runSpanKey{}, span), span
}

// runSpanKey holds the run's own span, so that traceOutcome never marks
// another (the request's, should end be reached some other way).
type runSpanKey struct{}

// traceOutcome records a run's outcome on its span (the one traceRun put in
// ctx): agentcraft.run.status, and error.type with the error when it did
// not succeed or park.
func traceOutcome(ctx context.Context, out workflow.Outcome) {
	span, ok := ctx.Value(runSpanKey{}).(trace.Span)
	if !ok {
		return
	}
	span.SetAttributes(tracing.RunStatus.String(string(out.Status)))
	switch out.Status {
	case workflow.StatusSucceeded, workflow.StatusWaiting:
	default:
		tracing.Fail(span, string(out.Status), errorText(out.Error))
	}
}

type errorText string

func (e errorText) Error() string { return string(e) }
