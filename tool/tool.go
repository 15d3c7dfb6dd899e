// Package tool defines what an agent can call besides the model: the Tool
// interface, the Registry that names tools for agents and workflows, and the
// built-in tools: calculator, current_time, json_query (jq), run_javascript
// (goja sandbox), run_starlark (Starlark sandbox), ocr_image (tesseract),
// file_read and file_list (inside a sandbox directory) and http_request
// (through the egress-policy client).
// OpenAPITools turns the operations of an OpenAPI 3 document into tools
// that call through the same HTTP core (internal/httpcall) as http_request
// and the http-request workflow node.
//
// A Tool describes itself (name, description, JSON Schema of its arguments,
// capability) and answers Call. A tool that fails in a way the model can act
// on — bad arguments, an unknown time zone, division by zero — returns a
// Result with IsError set, so the model reads the message and recovers. A Go
// error from Call is reserved for a broken protocol (a lost MCP session, a
// dead sandbox) that no rewording of the arguments can fix.
//
// Built-in tools parse their arguments with one helper that validates them
// against the tool's JSON Schema, so that malformed arguments (not JSON, a
// wrong type, a missing or unknown field) come back to the model as an
// error Result naming the field, never as a crash.
//
// Register tools explicitly:
//
//	var reg tool.Registry
//	if err := tool.RegisterBuiltinsWith(&reg, &tool.BuiltinOptions{
//		FilesDir:   "/srv/agentcraft/files",
//		HTTPClient: guard.Client(), // internal/egress
//	}); err != nil { ... }
//	tools, err := reg.Resolve("calculator", "json_query", "http_request")
package tool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentcraftlab/agentcraft/llm"
)

// Tool is something an agent can call.
type Tool interface {
	// Name is the identifier the model calls the tool by: 1 to 64 ASCII
	// letters, digits, '_' or '-' (the limit OpenAI and Anthropic share).
	Name() string
	// Description tells the model what the tool does and when to use it.
	Description() string
	// Schema is the JSON Schema object of the arguments; nil means none.
	Schema() json.RawMessage
	// Capability says how much harm a call can do; policy (approvals,
	// guardrails) reads it.
	Capability() Capability
	// Call runs the tool with args, the JSON object the model wrote. It
	// honours ctx. A failure the model can act on is a Result with IsError
	// set; a Go error means the tool itself is broken.
	Call(ctx context.Context, args json.RawMessage) (Result, error)
}

// Result is what a call returns to the model.
type Result struct {
	// Content is the text the model reads.
	Content string `json:"content"`
	// IsError marks a failed call; Content then says what went wrong and,
	// where possible, how to fix the arguments.
	IsError bool `json:"is_error,omitempty"`
}

// ErrorResult returns a Result marked as error, its content formatted as by
// fmt.Sprintf.
func ErrorResult(format string, args ...any) Result {
	return Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

// Def returns the definition of t that is sent to a model.
func Def(t Tool) llm.ToolDef {
	return llm.ToolDef{Name: t.Name(), Description: t.Description(), Parameters: t.Schema()}
}

// Capability grades how much harm a tool's calls can do. The zero value is
// invalid so that a tool cannot omit it by accident; Registry.Register
// rejects it.
type Capability int

// Capabilities, in increasing order of risk; compare them with < and >=.
const (
	// CapabilityLow: computes or reads harmless local facts, no side
	// effects (calculator, current_time).
	CapabilityLow Capability = iota + 1
	// CapabilityMedium: reads outside data or has reversible side effects
	// (web fetch, document search, drafting).
	CapabilityMedium
	// CapabilityHigh: has side effects that are hard to undo (sending
	// mail, writing files, payments); policy may require approval.
	CapabilityHigh
)

// String returns "low", "medium", "high", or "invalid(N)".
func (c Capability) String() string {
	switch c {
	case CapabilityLow:
		return "low"
	case CapabilityMedium:
		return "medium"
	case CapabilityHigh:
		return "high"
	}
	return fmt.Sprintf("invalid(%d)", int(c))
}

// Valid reports whether c is one of the defined capabilities.
func (c Capability) Valid() bool { return c >= CapabilityLow && c <= CapabilityHigh }

// MarshalText writes c as "low", "medium" or "high", so that configuration
// files and APIs use words.
func (c Capability) MarshalText() ([]byte, error) {
	if !c.Valid() {
		return nil, fmt.Errorf("tool: marshal capability: invalid value %d", int(c))
	}
	return []byte(c.String()), nil
}

// UnmarshalText reads "low", "medium" or "high".
func (c *Capability) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*c = CapabilityLow
	case "medium":
		*c = CapabilityMedium
	case "high":
		*c = CapabilityHigh
	default:
		return fmt.Errorf("tool: unknown capability %q: use low, medium or high", b)
	}
	return nil
}

// Undoable is a tool whose effects can be reversed: a compensation of a
// task runs Undo with the payload UndoOf gave when the call was made
// (delete the calendar event it created, remove the post, revoke the
// share). Tools of medium and high capability should implement it; a step
// of one that does not is reported by compensation as not undoable, never
// silently skipped.
type Undoable interface {
	Tool
	// UndoOf returns the payload that reverses the call made with args
	// that returned res; nil (and no error) when the call changed nothing.
	UndoOf(args json.RawMessage, res Result) (json.RawMessage, error)
	// Undo reverses the effect described by payload. Undoing an effect
	// already undone (the event is gone) succeeds: compensation may be
	// retried after a crash.
	Undo(ctx context.Context, payload json.RawMessage) error
}

// KeyedArgs is implemented by a tool that makes its side effect idempotent
// under a key the caller supplies (the step's idempotency key): the
// returned arguments carry it in the tool's own terms, such as a calendar
// event's UID, so a call repeated after a crash changes nothing twice.
type KeyedArgs interface {
	Tool
	WithIdempotencyKey(args json.RawMessage, key string) (json.RawMessage, error)
}

// WorkspaceBound is a tool whose calls act inside one workspace, such as
// generate_image, which stores what it makes as the workspace's uploads.
// The registry holds it unbound; whoever hands tools to a caller (package
// catalog, for agents and task steps alike) calls ForWorkspace with the
// caller's workspace and hands out the bound tool, so the workspace is an
// argument fixed before the model can call, never read from the context.
// The unbound tool's Call fails with a Go error: reaching it is a wiring
// mistake, not something the model can fix.
type WorkspaceBound interface {
	Tool
	// ForWorkspace returns the tool bound to workspaceID, with the same
	// name, schema and capability.
	ForWorkspace(workspaceID string) Tool
}
