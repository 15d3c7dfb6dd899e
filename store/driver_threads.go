package store

import (
	"context"
	"time"
)

// ConversationDriver holds the verbs of Conversations. Lists order newest
// first: created_at, then id (bytewise), both descending.
type ConversationDriver interface {
	// ConversationInsert inserts p.Conversation, complete (LastSeq 0).
	ConversationInsert(ctx context.Context, p *ConversationInsertParams) error
	ConversationGet(ctx context.Context, workspaceID, id string) (Conversation, error)
	ConversationGetByRef(ctx context.Context, workspaceID, owner, ref string) (Conversation, error)
	// ConversationList returns at most p.Limit conversations of p.Owner,
	// after the cursor position when p.After is set.
	ConversationList(ctx context.Context, p *ConversationListParams) ([]Conversation, error)
	// ConversationUpdate sets the title when p.Title is not nil, the
	// summary and summarized_through when p.Summary is not nil (only
	// while through <= last_seq), and updated_at; it returns the stored
	// row. No row matched is ErrNotFound.
	ConversationUpdate(ctx context.Context, p *ConversationUpdateParams) (Conversation, error)
	// ConversationDelete deletes the conversation with its messages and
	// memories; no row is ErrNotFound.
	ConversationDelete(ctx context.Context, workspaceID, id string) error
	// MessageAppend, in one transaction, moves the conversation's
	// last_seq on by len(p.Messages) and stamps its updated_at in one
	// statement (which serializes concurrent appends), then inserts the
	// messages numbered after the old last_seq, stamped p.Now. A
	// conversation that is not the workspace's is ErrNotFound.
	MessageAppend(ctx context.Context, p *MessageAppendParams) ([]Message, error)
	// MessageList returns the messages p.Query selects, in seq order (nil
	// for none, whether or not the conversation exists).
	MessageList(ctx context.Context, p *MessageListParams) ([]Message, error)
}

// ConversationInsertParams is the row ConversationInsert writes.
type ConversationInsertParams struct {
	Conversation Conversation
}

// ConversationListParams select a page of an owner's conversations.
type ConversationListParams struct {
	WorkspaceID, Owner string
	// After, when set, keeps the conversations strictly before
	// (AfterTime, AfterID) in the listing's order.
	After     bool
	AfterTime time.Time
	AfterID   string
	Limit     int
}

// ConversationUpdateParams are the arguments of ConversationUpdate.
type ConversationUpdateParams struct {
	WorkspaceID, ID string
	Title           *string
	Summary         *string
	Through         int64
	Now             time.Time
}

// MessageAppendParams are the messages MessageAppend writes (at least
// one, Seq unset).
type MessageAppendParams struct {
	WorkspaceID, ConversationID string
	Messages                    []Message
	Now                         time.Time
}

// MessageListParams select messages; see MessageQuery.
type MessageListParams struct {
	Query MessageQuery
}

// MemoryDriver holds the verbs of Memories. Lists order newest first:
// created_at, then id (bytewise), both descending.
type MemoryDriver interface {
	// MemoryInsert inserts p.Memory, complete. A conversation memory
	// whose conversation is not the workspace's is ErrNotFound and
	// stores nothing.
	MemoryInsert(ctx context.Context, p *MemoryInsertParams) error
	MemoryGet(ctx context.Context, workspaceID, id string) (Memory, error)
	// MemoryUpdate sets the text and updated_at and returns the stored
	// row; no row is ErrNotFound.
	MemoryUpdate(ctx context.Context, p *MemoryUpdateParams) (Memory, error)
	MemoryDelete(ctx context.Context, workspaceID, id string) error
	// MemoryList returns at most p.Limit memories of p.Filter, after the
	// cursor position when p.After is set. Filter.Limit and Cursor are
	// not to be read.
	MemoryList(ctx context.Context, p *MemoryListParams) ([]Memory, error)
	// MemoryCount counts the memories of p.Filter (the cursor and limit
	// ignored).
	MemoryCount(ctx context.Context, p *MemoryListParams) (int, error)
}

// MemoryInsertParams is the row MemoryInsert writes.
type MemoryInsertParams struct {
	Memory Memory
}

// MemoryUpdateParams are the arguments of MemoryUpdate.
type MemoryUpdateParams struct {
	WorkspaceID, ID, Text string
	Now                   time.Time
}

// MemoryListParams select memories; see MemoryDriver.MemoryList.
type MemoryListParams struct {
	Filter    MemoryFilter
	After     bool
	AfterTime time.Time
	AfterID   string
	Limit     int
}
