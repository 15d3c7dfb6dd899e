package store

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Conversations implements Store.
func (c Core) Conversations() Conversations { return conversations{c} }

// Memories implements Store.
func (c Core) Memories() Memories { return memories{c} }

// conversations is Conversations on a Driver.
type conversations struct{ c Core }

func (r conversations) Create(ctx context.Context, cv Conversation) (Conversation, error) {
	cv.LastSeq = 0
	if err := cv.Validate(); err != nil {
		return Conversation{}, r.c.errorf("create conversation: %w", err)
	}
	if cv.SummarizedThrough != 0 || cv.Summary != "" {
		return Conversation{}, r.c.errorf("create conversation: %w: a new conversation has no summary; Summarize sets it", ErrInvalid)
	}
	if cv.ID == "" {
		cv.ID = NewID()
	}
	t := now()
	cv.CreatedAt, cv.UpdatedAt = t, t
	if err := r.c.d.ConversationInsert(ctx, &ConversationInsertParams{Conversation: cv}); err != nil {
		return Conversation{}, r.c.errorf("create conversation: %w", err)
	}
	return cv, nil
}

func (r conversations) Get(ctx context.Context, workspaceID, id string) (Conversation, error) {
	cv, err := r.c.d.ConversationGet(ctx, workspaceID, id)
	if err != nil {
		return Conversation{}, r.c.errorf("get conversation %s: %w", id, err)
	}
	return cv, nil
}

func (r conversations) GetByExternalRef(ctx context.Context, workspaceID, owner, ref string) (Conversation, error) {
	if ref == "" || owner == "" {
		return Conversation{}, r.c.errorf("get conversation by external ref: %w: the ref or the owner is empty", ErrInvalid)
	}
	cv, err := r.c.d.ConversationGetByRef(ctx, workspaceID, owner, ref)
	if err != nil {
		return Conversation{}, r.c.errorf("get conversation %q: %w", ref, err)
	}
	return cv, nil
}

func (r conversations) List(ctx context.Context, f ConversationFilter) (ConversationPage, error) {
	if f.Owner == "" {
		return ConversationPage{}, r.c.errorf("list conversations: %w: owner is empty; a listing is one owner's", ErrInvalid)
	}
	p := &ConversationListParams{WorkspaceID: f.WorkspaceID, Owner: f.Owner, Limit: clampList(f.Limit) + 1}
	if f.Cursor != "" {
		t, id, err := decodeListCursor("conversation", f.Cursor)
		if err != nil {
			return ConversationPage{}, r.c.errorf("list conversations: %w", err)
		}
		p.After, p.AfterTime, p.AfterID = true, t, id
	}
	rows, err := r.c.d.ConversationList(ctx, p)
	if err != nil {
		return ConversationPage{}, r.c.errorf("list conversations: %w", err)
	}
	page := ConversationPage{Conversations: rows}
	if n := p.Limit - 1; len(rows) > n {
		page.Conversations = rows[:n]
		last := rows[n-1]
		page.Next = encodeListCursor(last.CreatedAt, last.ID)
	}
	return page, nil
}

func (r conversations) Rename(ctx context.Context, workspaceID, id, title string) (Conversation, error) {
	if err := validTitle(title); err != nil {
		return Conversation{}, r.c.errorf("rename conversation %s: %w", id, err)
	}
	cv, err := r.c.d.ConversationUpdate(ctx, &ConversationUpdateParams{WorkspaceID: workspaceID, ID: id, Title: &title, Now: now()})
	if err != nil {
		return Conversation{}, r.c.errorf("rename conversation %s: %w", id, err)
	}
	return cv, nil
}

func (r conversations) Summarize(ctx context.Context, workspaceID, id, summary string, through int64) (Conversation, error) {
	if through < 0 {
		return Conversation{}, r.c.errorf("summarize conversation %s: %w: through is %d; use a message seq", id, ErrInvalid, through)
	}
	cv, err := r.c.d.ConversationUpdate(ctx, &ConversationUpdateParams{WorkspaceID: workspaceID, ID: id, Summary: &summary, Through: through, Now: now()})
	if isNotFound(err) {
		if cur, gerr := r.c.d.ConversationGet(ctx, workspaceID, id); gerr == nil {
			return Conversation{}, r.c.errorf("summarize conversation %s: %w: through %d is past its last message %d", id, ErrInvalid, through, cur.LastSeq)
		}
	}
	if err != nil {
		return Conversation{}, r.c.errorf("summarize conversation %s: %w", id, err)
	}
	return cv, nil
}

func (r conversations) Delete(ctx context.Context, workspaceID, id string) error {
	if err := r.c.d.ConversationDelete(ctx, workspaceID, id); err != nil {
		return r.c.errorf("delete conversation %s: %w", id, err)
	}
	return nil
}

func (r conversations) Append(ctx context.Context, workspaceID, id string, msgs ...Message) ([]Message, error) {
	switch {
	case len(msgs) == 0:
		return nil, r.c.errorf("append to conversation %s: %w: no messages", id, ErrInvalid)
	case len(msgs) > MaxAppendMessages:
		return nil, r.c.errorf("append to conversation %s: %w: %d messages; append at most %d at once", id, ErrInvalid, len(msgs), MaxAppendMessages)
	}
	in := make([]Message, len(msgs))
	for i, m := range msgs {
		if err := m.Validate(); err != nil {
			return nil, r.c.errorf("append to conversation %s: message %d: %w", id, i, err)
		}
		m.ConversationID, m.Seq = id, 0
		m.ToolCalls = cloneJSON(m.ToolCalls)
		in[i] = m
	}
	out, err := r.c.d.MessageAppend(ctx, &MessageAppendParams{WorkspaceID: workspaceID, ConversationID: id, Messages: in, Now: now()})
	if isNotFound(err) {
		err = fmt.Errorf("%w: conversation %s does not exist in the workspace", ErrNotFound, id)
	}
	if err != nil {
		return nil, r.c.errorf("append to conversation %s: %w", id, err)
	}
	return out, nil
}

func (r conversations) Messages(ctx context.Context, q MessageQuery) ([]Message, error) {
	if q.After < 0 || q.Limit < 0 {
		return nil, r.c.errorf("list messages of conversation %s: %w: after and limit must not be negative", q.ConversationID, ErrInvalid)
	}
	out, err := r.c.d.MessageList(ctx, &MessageListParams{Query: q})
	if err == nil && len(out) == 0 {
		_, err = r.c.d.ConversationGet(ctx, q.WorkspaceID, q.ConversationID)
	}
	if err != nil {
		return nil, r.c.errorf("list messages of conversation %s: %w", q.ConversationID, err)
	}
	return out, nil
}

// memories is Memories on a Driver.
type memories struct{ c Core }

func (r memories) Create(ctx context.Context, m Memory) (Memory, error) {
	if err := m.Validate(); err != nil {
		return Memory{}, r.c.errorf("create memory: %w", err)
	}
	if m.ID == "" {
		m.ID = NewID()
	}
	t := now()
	m.CreatedAt, m.UpdatedAt = t, t
	err := r.c.d.MemoryInsert(ctx, &MemoryInsertParams{Memory: m})
	if isNotFound(err) && m.ConversationID != "" {
		err = fmt.Errorf("%w: conversation %s does not exist in the workspace", ErrNotFound, m.ConversationID)
	}
	if err != nil {
		return Memory{}, r.c.errorf("create memory: %w", err)
	}
	return m, nil
}

func (r memories) Get(ctx context.Context, workspaceID, id string) (Memory, error) {
	m, err := r.c.d.MemoryGet(ctx, workspaceID, id)
	if err != nil {
		return Memory{}, r.c.errorf("get memory %s: %w", id, err)
	}
	return m, nil
}

func (r memories) Update(ctx context.Context, workspaceID, id, text string) (Memory, error) {
	if err := validMemoryText(text); err != nil {
		return Memory{}, r.c.errorf("update memory %s: %w", id, err)
	}
	m, err := r.c.d.MemoryUpdate(ctx, &MemoryUpdateParams{WorkspaceID: workspaceID, ID: id, Text: text, Now: now()})
	if err != nil {
		return Memory{}, r.c.errorf("update memory %s: %w", id, err)
	}
	return m, nil
}

func (r memories) Delete(ctx context.Context, workspaceID, id string) error {
	if err := r.c.d.MemoryDelete(ctx, workspaceID, id); err != nil {
		return r.c.errorf("delete memory %s: %w", id, err)
	}
	return nil
}

func (r memories) List(ctx context.Context, f MemoryFilter) (MemoryPage, error) {
	p := &MemoryListParams{Filter: f, Limit: clampList(f.Limit) + 1}
	if f.Cursor != "" {
		t, id, err := decodeListCursor("memory", f.Cursor)
		if err != nil {
			return MemoryPage{}, r.c.errorf("list memories: %w", err)
		}
		p.After, p.AfterTime, p.AfterID = true, t, id
	}
	p.Filter.Limit, p.Filter.Cursor = 0, ""
	rows, err := r.c.d.MemoryList(ctx, p)
	if err != nil {
		return MemoryPage{}, r.c.errorf("list memories: %w", err)
	}
	page := MemoryPage{Memories: rows}
	if n := p.Limit - 1; len(rows) > n {
		page.Memories = rows[:n]
		last := rows[n-1]
		page.Next = encodeListCursor(last.CreatedAt, last.ID)
	}
	return page, nil
}

func (r memories) Count(ctx context.Context, f MemoryFilter) (int, error) {
	f.Limit, f.Cursor = 0, ""
	n, err := r.c.d.MemoryCount(ctx, &MemoryListParams{Filter: f})
	if err != nil {
		return 0, r.c.errorf("count memories: %w", err)
	}
	return n, nil
}

// clampList is the page size of a listing asked for limit.
func clampList(limit int) int {
	if limit <= 0 {
		return DefaultListLimit
	}
	return min(limit, MaxListLimit)
}

// encodeListCursor is the Next of a newest-first listing whose page ended
// at the row created at t with id: the position itself, so rows added
// while a client pages land before its first page and neither repeat nor
// skip a row of the pages still to come.
func encodeListCursor(t time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(Timestamp(t).UnixMicro(), 10) + ":" + id))
}

// decodeListCursor reverses encodeListCursor; a cursor it did not make
// gives ErrInvalid.
func decodeListCursor(what, cursor string) (time.Time, string, error) {
	bad := fmt.Errorf("%w: %s cursor %q is malformed; pass the next value of the previous page unchanged", ErrInvalid, what, cursor)
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return time.Time{}, "", bad
	}
	us, id, ok := strings.Cut(string(raw), ":")
	n, perr := strconv.ParseInt(us, 10, 64)
	if !ok || id == "" || perr != nil || n < 0 {
		return time.Time{}, "", bad
	}
	return time.UnixMicro(n).UTC(), id, nil
}
