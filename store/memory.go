package store

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// MemoryScope says what a memory is about.
type MemoryScope string

// Memory scopes.
const (
	// MemoryUser is about the person (their preferences, their facts).
	MemoryUser MemoryScope = "user"
	// MemoryWorkspace is about the team: every member may recall it.
	MemoryWorkspace MemoryScope = "workspace"
	// MemoryConversation is about one conversation and lives as long as
	// it does.
	MemoryConversation MemoryScope = "conversation"
)

// MemoryVisibility says who may recall a memory.
type MemoryVisibility string

// Memory visibilities.
const (
	// MemoryGroup memories are visible to the whole workspace.
	MemoryGroup MemoryVisibility = "group"
	// MemoryPersonal memories are visible to their owner only.
	MemoryPersonal MemoryVisibility = "personal"
)

// Memory is one remembered item. Which combinations exist: workspace
// memories are group; conversation memories are personal (their owner is
// the conversation's); user memories are either.
type Memory struct {
	ID          string           `json:"id"`
	WorkspaceID string           `json:"workspace_id"`
	Scope       MemoryScope      `json:"scope"`
	Visibility  MemoryVisibility `json:"visibility"`
	// Owner is who wrote the memory, as Conversation.Owner names people.
	Owner string `json:"owner"`
	// ConversationID is set for, and only for, conversation memories.
	ConversationID string `json:"conversation_id,omitempty"`
	Text           string `json:"text"`
	// Source says where the memory came from: "message:<conversation>:<seq>",
	// "run:<id>", "api"; free text, optional.
	Source    string    `json:"source,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Limits of memory fields.
const (
	MaxMemoryText   = 8 << 10 // bytes
	MaxMemorySource = 300     // bytes
)

// Validate reports whether m can be written.
func (m Memory) Validate() error {
	switch {
	case m.WorkspaceID == "":
		return fmt.Errorf("%w: memory workspace id is empty; set Memory.WorkspaceID", ErrInvalid)
	case m.Owner == "":
		return fmt.Errorf("%w: memory has no owner; set Memory.Owner", ErrInvalid)
	case len(m.Owner) > MaxOwner:
		return fmt.Errorf("%w: memory owner is %d bytes; keep it to %d", ErrInvalid, len(m.Owner), MaxOwner)
	case len(m.Source) > MaxMemorySource:
		return fmt.Errorf("%w: memory source is %d bytes; keep it to %d", ErrInvalid, len(m.Source), MaxMemorySource)
	}
	switch m.Visibility {
	case MemoryGroup, MemoryPersonal:
	default:
		return fmt.Errorf("%w: memory visibility %q; use group or personal", ErrInvalid, m.Visibility)
	}
	switch m.Scope {
	case MemoryUser:
		if m.ConversationID != "" {
			return fmt.Errorf("%w: a user memory has no conversation_id; use scope conversation or leave it out", ErrInvalid)
		}
	case MemoryWorkspace:
		if m.Visibility != MemoryGroup {
			return fmt.Errorf("%w: a workspace memory is visible to the workspace; set visibility group, or use scope user for a personal one", ErrInvalid)
		}
		if m.ConversationID != "" {
			return fmt.Errorf("%w: a workspace memory has no conversation_id; use scope conversation or leave it out", ErrInvalid)
		}
	case MemoryConversation:
		if m.ConversationID == "" {
			return fmt.Errorf("%w: a conversation memory needs conversation_id", ErrInvalid)
		}
		if m.Visibility != MemoryPersonal {
			return fmt.Errorf("%w: a conversation memory is visible to the conversation's owner only; set visibility personal", ErrInvalid)
		}
	default:
		return fmt.Errorf("%w: memory scope %q; use user, workspace or conversation", ErrInvalid, m.Scope)
	}
	return validMemoryText(m.Text)
}

func validMemoryText(text string) error {
	switch {
	case strings.TrimSpace(text) == "":
		return fmt.Errorf("%w: memory text is empty; say what to remember", ErrInvalid)
	case len(text) > MaxMemoryText:
		return fmt.Errorf("%w: memory text is %d bytes; keep it to %d (remember one fact at a time)", ErrInvalid, len(text), MaxMemoryText)
	case !utf8.ValidString(text) || strings.IndexByte(text, 0) >= 0:
		return fmt.Errorf("%w: memory text must be UTF-8 text without NUL bytes", ErrInvalid)
	}
	return nil
}

// MemoryFilter selects memories of one workspace, newest first
// (created_at, then id, both descending). Empty fields do not filter.
type MemoryFilter struct {
	WorkspaceID    string
	Scope          MemoryScope
	Visibility     MemoryVisibility
	Owner          string
	ConversationID string
	// VisibleTo keeps what that owner may see: group memories and their
	// own.
	VisibleTo string
	// Limit is the page size: 0 is DefaultListLimit, at most MaxListLimit.
	Limit int
	// Cursor is the Next of the previous page; "" starts at the newest.
	Cursor string
}

// MemoryPage is a page of a listing.
type MemoryPage struct {
	Memories []Memory `json:"data"`
	// Next continues the listing; "" on the last page.
	Next string `json:"next,omitempty"`
}

// Memories stores memory items.
type Memories interface {
	// Create inserts m, assigning an ID when empty and stamping the
	// times. A conversation memory whose conversation is not the
	// workspace's gives ErrNotFound.
	Create(ctx context.Context, m Memory) (Memory, error)
	// Get returns the workspace's memory, or ErrNotFound.
	Get(ctx context.Context, workspaceID, id string) (Memory, error)
	// Update replaces the text and returns the stored row.
	Update(ctx context.Context, workspaceID, id, text string) (Memory, error)
	// Delete removes the memory, or gives ErrNotFound.
	Delete(ctx context.Context, workspaceID, id string) error
	// List returns a page of the memories f selects.
	List(ctx context.Context, f MemoryFilter) (MemoryPage, error)
	// Count is how many memories f selects (Limit and Cursor ignored).
	Count(ctx context.Context, f MemoryFilter) (int, error)
}
