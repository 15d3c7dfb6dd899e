package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Conversation is a thread of messages kept for one owner in a workspace,
// so that a chat can continue across requests, surfaces and devices.
type Conversation struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	Title       string `json:"title"`
	// Owner is who the thread belongs to, as package memory names
	// principals: "user:<id>", or the actor ("apikey:<id>",
	// "oauth:<client>") when the run has no user. Required.
	Owner string `json:"owner"`
	// Agent is the agent the thread talks to; optional.
	Agent string `json:"agent,omitempty"`
	// ExternalRef names the thread in a client that keeps its own ids,
	// such as "openwebui:<chat id>"; unique in the workspace when set.
	ExternalRef string `json:"external_ref,omitempty"`
	// Summary stands for the messages up to SummarizedThrough (their
	// seq) when the thread was compacted; empty before that.
	Summary           string `json:"summary,omitempty"`
	SummarizedThrough int64  `json:"summarized_through"`
	// LastSeq is the seq of the newest message (0: none yet). Only
	// Append moves it.
	LastSeq   int64     `json:"last_seq"`
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt moves with every rename, summary and append.
	UpdatedAt time.Time `json:"updated_at"`
}

// Limits of conversation fields.
const (
	MaxConversationTitle = 200  // bytes
	MaxExternalRef       = 200  // bytes
	MaxOwner             = 300  // bytes
	MaxAppendMessages    = 1000 // messages in one Append
)

// Validate reports whether c can be created.
func (c Conversation) Validate() error {
	switch {
	case c.WorkspaceID == "":
		return fmt.Errorf("%w: conversation workspace id is empty; set Conversation.WorkspaceID", ErrInvalid)
	case c.Owner == "":
		return fmt.Errorf("%w: conversation has no owner; set Conversation.Owner (package memory derives it from the caller)", ErrInvalid)
	case len(c.Owner) > MaxOwner:
		return fmt.Errorf("%w: conversation owner is %d bytes; keep it to %d", ErrInvalid, len(c.Owner), MaxOwner)
	case len(c.ExternalRef) > MaxExternalRef:
		return fmt.Errorf("%w: conversation external_ref is %d bytes; keep it to %d", ErrInvalid, len(c.ExternalRef), MaxExternalRef)
	case c.SummarizedThrough < 0 || c.LastSeq < 0:
		return fmt.Errorf("%w: conversation summarized_through and last_seq must not be negative", ErrInvalid)
	}
	return validTitle(c.Title)
}

func validTitle(title string) error {
	switch {
	case len(title) > MaxConversationTitle:
		return fmt.Errorf("%w: conversation title is %d bytes; keep it to %d", ErrInvalid, len(title), MaxConversationTitle)
	case !utf8.ValidString(title) || strings.IndexByte(title, 0) >= 0:
		return fmt.Errorf("%w: conversation title must be UTF-8 text without NUL bytes", ErrInvalid)
	}
	return nil
}

// MessageRole is who wrote a message.
type MessageRole string

// Message roles, as llm.Role spells them.
const (
	MessageSystem    MessageRole = "system"
	MessageUser      MessageRole = "user"
	MessageAssistant MessageRole = "assistant"
	MessageTool      MessageRole = "tool"
)

func (r MessageRole) valid() bool {
	return r == MessageSystem || r == MessageUser || r == MessageAssistant || r == MessageTool
}

// Message is one turn of a conversation.
type Message struct {
	ConversationID string `json:"conversation_id"`
	// Seq numbers the conversation's messages 1, 2, … in the order
	// appended; Append assigns it.
	Seq     int64       `json:"seq"`
	Role    MessageRole `json:"role"`
	Content string      `json:"content"`
	// ToolCalls is the JSON array of calls an assistant message asks for
	// (llm.ToolCall); nil for none.
	ToolCalls json.RawMessage `json:"tool_calls,omitempty"`
	// ToolCallID links a tool message to the call it answers.
	ToolCallID string    `json:"tool_call_id,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
}

// Validate reports whether m can be appended.
func (m Message) Validate() error {
	switch {
	case !m.Role.valid():
		return fmt.Errorf("%w: message role %q; use system, user, assistant or tool", ErrInvalid, m.Role)
	case len(m.ToolCalls) > 0 && (!json.Valid(m.ToolCalls) || m.ToolCalls[0] != '['):
		return fmt.Errorf("%w: message tool_calls must be a JSON array", ErrInvalid)
	case !utf8.ValidString(m.Content) || strings.IndexByte(m.Content, 0) >= 0:
		return fmt.Errorf("%w: message content must be UTF-8 text without NUL bytes", ErrInvalid)
	case m.Role == MessageTool && m.ToolCallID == "":
		return fmt.Errorf("%w: tool message has no tool_call_id; name the call it answers", ErrInvalid)
	}
	return nil
}

// ConversationFilter selects conversations of one owner, newest first
// (created_at, then id, both descending).
type ConversationFilter struct {
	WorkspaceID string
	// Owner is required: a listing never mixes owners.
	Owner string
	// Limit is the page size: 0 is DefaultListLimit, at most MaxListLimit.
	Limit int
	// Cursor is the Next of the previous page; "" starts at the newest.
	Cursor string
}

// ConversationPage is a page of a listing.
type ConversationPage struct {
	Conversations []Conversation `json:"data"`
	// Next continues the listing; "" on the last page.
	Next string `json:"next,omitempty"`
}

// Page sizes of the conversation and memory listings.
const (
	DefaultListLimit = 50
	MaxListLimit     = 500
)

// MessageQuery selects messages of one conversation in seq order.
type MessageQuery struct {
	WorkspaceID, ConversationID string
	// After keeps the messages with Seq > After (0: from the first).
	After int64
	// Limit bounds the messages returned (0: all). With Tail they are the
	// last Limit messages after After, still in seq order.
	Limit int
	Tail  bool
}

// Conversations stores conversations and their messages.
type Conversations interface {
	// Create inserts c with no messages, assigning an ID when empty and
	// stamping the times. An ExternalRef the owner uses already in the
	// workspace gives ErrConflict (another owner may use the same ref);
	// an unknown workspace ErrNotFound.
	Create(ctx context.Context, c Conversation) (Conversation, error)
	// Get returns the workspace's conversation, or ErrNotFound.
	Get(ctx context.Context, workspaceID, id string) (Conversation, error)
	// GetByExternalRef finds the owner's conversation by ExternalRef, or
	// ErrNotFound.
	GetByExternalRef(ctx context.Context, workspaceID, owner, ref string) (Conversation, error)
	// List returns a page of an owner's conversations, newest first.
	List(ctx context.Context, f ConversationFilter) (ConversationPage, error)
	// Rename sets the title and returns the stored row.
	Rename(ctx context.Context, workspaceID, id, title string) (Conversation, error)
	// Summarize stores the summary standing for the messages up to seq
	// through (at most LastSeq), and returns the stored row.
	Summarize(ctx context.Context, workspaceID, id, summary string, through int64) (Conversation, error)
	// Delete removes the conversation with its messages and its
	// conversation-scoped memories, or gives ErrNotFound.
	Delete(ctx context.Context, workspaceID, id string) error
	// Append adds msgs in one transaction, numbering them after the
	// newest (concurrent appends never share a seq), and returns them as
	// stored. An unknown conversation gives ErrNotFound and stores
	// nothing.
	Append(ctx context.Context, workspaceID, id string, msgs ...Message) ([]Message, error)
	// Messages returns the messages q selects, in seq order; an unknown
	// conversation gives ErrNotFound.
	Messages(ctx context.Context, q MessageQuery) ([]Message, error)
}
