package agent

// ToolOutcome is how a server tool call ended, as Agent.ToolCalls learns
// it. The set is closed.
type ToolOutcome = string

// Tool call outcomes.
const (
	ToolOK               ToolOutcome = "ok"                // the tool answered
	ToolError            ToolOutcome = "error"             // the tool answered with an error result, or failed
	ToolRefused          ToolOutcome = "refused"           // the Gate did not let it run
	ToolTimeout          ToolOutcome = "timeout"           // it ran past its time limit
	ToolInvalidArguments ToolOutcome = "invalid_arguments" // its arguments did not match the tool's schema
	ToolUnknown          ToolOutcome = "unknown_tool"      // the model named a tool the agent does not have
	ToolPanic            ToolOutcome = "panic"             // the tool panicked
)

// ToolUnknownName is the tool name Agent.ToolCalls is given for a call of
// a tool the agent does not have.
const ToolUnknownName = "unknown"

// toolCalled tells Agent.ToolCalls of a finished call.
func (r *run) toolCalled(name string, how ToolOutcome, out outcome) {
	if r.a.ToolCalls == nil {
		return
	}
	if how == ToolUnknown {
		name = ToolUnknownName
	}
	r.a.ToolCalls(name, how, out.duration)
}
