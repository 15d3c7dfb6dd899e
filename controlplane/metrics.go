package controlplane

import (
	"time"

	"github.com/agentcraftlab/agentcraft/workflow"
)

// observe feeds Options.Metrics from the engine's events as they are
// emitted: a node's end (with its kind and duration), a node that parked
// or was skipped, and the end of the run's execution. Replayed nodes emit
// nothing, so a resumed run counts only what it runs again.
func (s *Service) observe(ev workflow.Event) {
	m := s.opts.Metrics
	if m == nil {
		return
	}
	d := time.Duration(ev.DurationMS * float64(time.Millisecond))
	switch ev.Type {
	case workflow.EventNodeFinished:
		m.WorkflowNode(ev.NodeType, workflow.StatusSucceeded, d)
	case workflow.EventNodeFailed:
		m.WorkflowNode(ev.NodeType, workflow.StatusFailed, d)
	case workflow.EventWaiting:
		m.WorkflowNode(ev.NodeType, workflow.StatusWaiting, -1)
	case workflow.EventNodeSkipped:
		m.WorkflowNode(ev.NodeType, "skipped", -1)
	case workflow.EventRunFinished:
		m.WorkflowRun(ev.Status, d)
	}
}
