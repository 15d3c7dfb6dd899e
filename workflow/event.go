package workflow

import (
	"encoding/json"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
)

// EventType names the kind of an [Event].
type EventType string

// The event types of a run's stream. Every surface (SSE, OpenAI chunks, the
// CLI) is a view of this one stream.
const (
	EventRunStarted   EventType = "run_started"
	EventRunFinished  EventType = "run_finished" // Status, Output or Error
	EventRunBlocked   EventType = "run_blocked"  // an input hook's block_pattern matched
	EventNodeStarted  EventType = "node_started"
	EventNodeFinished EventType = "node_finished" // Duration, Output, Handle
	EventNodeSkipped  EventType = "node_skipped"  // no active incoming edge
	EventNodeFailed   EventType = "node_failed"   // Error
	EventTextDelta    EventType = "text_delta"    // Text: a fragment of an agent's answer
	EventToolCall     EventType = "tool_call"     // Tool: a server tool is about to run
	EventToolResult   EventType = "tool_result"   // Tool: its outcome
	EventWaiting      EventType = "waiting_for_input"
	EventContract     EventType = "contract_result" // Data: the contract report
	EventUsage        EventType = "usage"           // Usage of one agent node
	EventHook         EventType = "hook"            // Data: a hook ran (or failed, Error)
	EventAgentStep    EventType = "agent_step"      // Data: one step of an autonomous agent (autonomous.Event), Text its text
	EventError        EventType = "error"
)

// Event is one item of a run's stream.
type Event struct {
	// Seq numbers the run's events from 1; it is assigned by the sink that
	// persists them (0 until then) and is the SSE event id.
	Seq   int64     `json:"seq,omitempty"`
	Type  EventType `json:"type"`
	RunID string    `json:"run_id,omitempty"`
	// NodeID and Key name the node and its execution (Key differs from the
	// id inside loops and iterations, such as "review#2/draft").
	NodeID   string    `json:"node_id,omitempty"`
	Key      string    `json:"key,omitempty"`
	NodeType string    `json:"node_type,omitempty"`
	Time     time.Time `json:"time"`
	// DurationMS is the node's or the run's wall time (finished events).
	DurationMS float64 `json:"duration_ms,omitempty"`
	Text       string  `json:"text,omitempty"`
	// Status is the run status (run_finished) or a contract status.
	Status string `json:"status,omitempty"`
	Handle string `json:"handle,omitempty"`
	Output any    `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
	// Tool describes a tool call (tool_call, tool_result).
	Tool *ToolEvent `json:"tool,omitempty"`
	// Usage is an agent node's token use (usage).
	Usage *llm.Usage `json:"usage,omitempty"`
	// Data carries kind-specific details: the contract report, the human
	// node's prompt and form, a hook's name.
	Data any `json:"data,omitempty"`
}

// ToolEvent describes one tool call of an agent node.
type ToolEvent struct {
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments,omitempty"`
	Result    string `json:"result,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
}

// Wait is what a human node asks for when it parks a run.
type Wait struct {
	Prompt     string         `json:"prompt"`
	FormSchema map[string]any `json:"form_schema,omitempty"`
	// Deadline, when set, is when the run fails unless answered.
	Deadline *time.Time `json:"deadline,omitempty"`
	// ApprovalID, on an approval node's wait, is the approval a person
	// decides (POST /api/tasks/{id}/approve); the run resumes then.
	ApprovalID string `json:"approval_id,omitempty"`
	// Journal, when set, names the journal entry of the waiting execution
	// that the answer is recorded as (Exec.Recall): the execution runs
	// again on resume and continues from it, instead of the answer
	// becoming its output (an autonomous agent's ask_user).
	Journal string `json:"journal,omitempty"`
	// From names who asks, when it is not the node itself (the
	// autonomous agent or sub-agent calling ask_user).
	From string `json:"from,omitempty"`
}

// WaitOf reads a human node's request from an event's Data: a *Wait (or
// Wait) when the event is live, decoded JSON when it was read back from
// the store. It returns nil when Data holds no request.
func WaitOf(data any) *Wait {
	switch v := data.(type) {
	case *Wait:
		return v
	case Wait:
		return &v
	case nil:
		return nil
	}
	b, err := json.Marshal(data)
	if err != nil {
		return nil
	}
	var w Wait
	if json.Unmarshal(b, &w) != nil {
		return nil
	}
	return &w
}
