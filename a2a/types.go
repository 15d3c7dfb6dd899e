package a2a

import (
	"errors"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Protocol versions this package speaks.
const (
	Version10 = "1.0"
	Version03 = "0.3"
)

// VersionHeader is the HTTP header naming the protocol version of a request;
// its absence means 0.3.
const VersionHeader = a2a.SvcParamVersion

// The protocol types are those of the a2a-go SDK
// (github.com/a2aproject/a2a-go/v2/a2a); they are aliased here so that
// callers import one package named a2a.
type (
	// Task is a unit of work an agent performs for a message.
	Task = a2a.Task
	// TaskState is where a task is in its life.
	TaskState = a2a.TaskState
	// TaskStatus is a task's state with an optional message from the agent.
	TaskStatus = a2a.TaskStatus
	// Message is one turn of a conversation with an agent.
	Message = a2a.Message
	// Role says who wrote a message.
	Role = a2a.MessageRole
	// Part is one piece of a message or artifact; make one with NewTextPart.
	Part = a2a.Part
	// Artifact is an output of a task.
	Artifact = a2a.Artifact
	// Event is a SendMessage result or one event of a stream: *Task,
	// *Message, *TaskStatusUpdateEvent or *TaskArtifactUpdateEvent.
	Event = a2a.Event
	// TaskStatusUpdateEvent reports a state change of a streamed task.
	TaskStatusUpdateEvent = a2a.TaskStatusUpdateEvent
	// TaskArtifactUpdateEvent delivers (a chunk of) an artifact.
	TaskArtifactUpdateEvent = a2a.TaskArtifactUpdateEvent
	// SendMessageRequest is the params of SendMessage and SendStreamingMessage.
	SendMessageRequest = a2a.SendMessageRequest
	// SendMessageConfig tunes a SendMessage call.
	SendMessageConfig = a2a.SendMessageConfig
	// AgentCard describes an agent: who it is, where and how to call it.
	AgentCard = a2a.AgentCard
	// AgentInterface is one way to reach an agent.
	AgentInterface = a2a.AgentInterface
)

// Roles.
const (
	RoleUser  = a2a.MessageRoleUser
	RoleAgent = a2a.MessageRoleAgent
)

// Task states.
const (
	StateSubmitted     = a2a.TaskStateSubmitted
	StateWorking       = a2a.TaskStateWorking
	StateCompleted     = a2a.TaskStateCompleted
	StateFailed        = a2a.TaskStateFailed
	StateCanceled      = a2a.TaskStateCanceled
	StateInputRequired = a2a.TaskStateInputRequired
	StateRejected      = a2a.TaskStateRejected
	StateAuthRequired  = a2a.TaskStateAuthRequired
)

// NewTextPart returns a text part.
func NewTextPart(text string) *Part { return a2a.NewTextPart(text) }

// NewMessage returns a message with a fresh id.
func NewMessage(role Role, parts ...*Part) *Message { return a2a.NewMessage(role, parts...) }

// JSON-RPC and A2A error codes.
const (
	CodeParseError            = -32700
	CodeInvalidRequest        = -32600
	CodeMethodNotFound        = -32601
	CodeInvalidParams         = -32602
	CodeInternal              = -32603
	CodeTaskNotFound          = -32001
	CodeTaskNotCancelable     = -32002
	CodePushNotSupported      = -32003
	CodeUnsupportedOperation  = -32004
	CodeContentTypeNotSupport = -32005
	CodeInvalidAgentResponse  = -32006
	CodeVersionNotSupported   = -32009
)

// codes maps the SDK's error sentinels to their JSON-RPC codes.
var codes = []struct {
	err  error
	code int
}{
	{a2a.ErrParseError, CodeParseError},
	{a2a.ErrInvalidRequest, CodeInvalidRequest},
	{a2a.ErrMethodNotFound, CodeMethodNotFound},
	{a2a.ErrInvalidParams, CodeInvalidParams},
	{a2a.ErrInternalError, CodeInternal},
	{a2a.ErrTaskNotFound, CodeTaskNotFound},
	{a2a.ErrTaskNotCancelable, CodeTaskNotCancelable},
	{a2a.ErrPushNotificationNotSupported, CodePushNotSupported},
	{a2a.ErrUnsupportedOperation, CodeUnsupportedOperation},
	{a2a.ErrUnsupportedContentType, CodeContentTypeNotSupport},
	{a2a.ErrInvalidAgentResponse, CodeInvalidAgentResponse},
	{a2a.ErrVersionNotSupported, CodeVersionNotSupported},
}

// ErrorCode returns the JSON-RPC code of an error a Client returned for a
// JSON-RPC error answer, or 0 when err is no such error.
func ErrorCode(err error) int {
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return 0
}

// Text joins the text parts of parts.
func Text(parts []*Part) string {
	var b strings.Builder
	for _, p := range parts {
		if p != nil {
			b.WriteString(p.Text())
		}
	}
	return b.String()
}

// TaskText is the answer a task gave: the text of its artifacts, or, when
// it has none, of its status message.
func TaskText(t *Task) string {
	if t == nil {
		return ""
	}
	var b strings.Builder
	for _, a := range t.Artifacts {
		b.WriteString(Text(a.Parts))
	}
	if b.Len() == 0 && t.Status.Message != nil {
		b.WriteString(Text(t.Status.Message.Parts))
	}
	return b.String()
}

// ResponseText is the text of a SendMessage answer: the task's (TaskText)
// or the message's.
func ResponseText(r Event) string {
	switch v := r.(type) {
	case *Task:
		return TaskText(v)
	case *Message:
		return Text(v.Parts)
	}
	return ""
}
