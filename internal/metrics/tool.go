package metrics

import "time"

// ToolCall records one server tool call of the named tool that ended with
// outcome (agent.ToolOutcome's values) after d. Its signature is
// agent.Agent.ToolCalls'. The caller names an unknown tool by a fixed
// value, never by what the model asked for.
func (m *Metrics) ToolCall(tool, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	tool = bounded(tool)
	m.toolCalls.WithLabelValues(tool, bounded(outcome)).Inc()
	m.toolDuration.WithLabelValues(tool).Observe(d.Seconds())
}
