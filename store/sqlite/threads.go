package sqlite

import (
	"context"
	"database/sql"
	"strings"

	"github.com/agentcraftlab/agentcraft/store"
)

const conversationColumns = `id, workspace_id, title, owner, agent, external_ref, summary, summarized_through,
	last_seq, created_at, updated_at`

func scanConversation(sc scanner) (store.Conversation, error) {
	var (
		c                store.Conversation
		ref              sql.NullString
		created, updated int64
	)
	if err := sc.Scan(&c.ID, &c.WorkspaceID, &c.Title, &c.Owner, &c.Agent, &ref, &c.Summary, &c.SummarizedThrough,
		&c.LastSeq, &created, &updated); err != nil {
		return store.Conversation{}, err
	}
	c.ExternalRef = ref.String
	c.CreatedAt, c.UpdatedAt = fromMicros(created), fromMicros(updated)
	return c, nil
}

func (d driver) ConversationInsert(ctx context.Context, p *store.ConversationInsertParams) error {
	c := p.Conversation
	_, err := d.s.writer.ExecContext(ctx,
		`INSERT INTO conversations (`+conversationColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.WorkspaceID, c.Title, c.Owner, c.Agent, nullString(c.ExternalRef), c.Summary, c.SummarizedThrough,
		c.LastSeq, micros(c.CreatedAt), micros(c.UpdatedAt))
	return mapErr(err)
}

func (d driver) ConversationGet(ctx context.Context, workspaceID, id string) (store.Conversation, error) {
	c, err := scanConversation(d.s.reader.QueryRowContext(ctx,
		`SELECT `+conversationColumns+` FROM conversations WHERE workspace_id = ? AND id = ?`, workspaceID, id))
	return c, mapErr(err)
}

func (d driver) ConversationGetByRef(ctx context.Context, workspaceID, owner, ref string) (store.Conversation, error) {
	c, err := scanConversation(d.s.reader.QueryRowContext(ctx,
		`SELECT `+conversationColumns+` FROM conversations WHERE workspace_id = ? AND owner = ? AND external_ref = ?`, workspaceID, owner, ref))
	return c, mapErr(err)
}

func (d driver) ConversationList(ctx context.Context, p *store.ConversationListParams) ([]store.Conversation, error) {
	q := `SELECT ` + conversationColumns + ` FROM conversations WHERE workspace_id = ? AND owner = ?`
	args := []any{p.WorkspaceID, p.Owner}
	if p.After {
		t := micros(p.AfterTime)
		q += ` AND (created_at < ? OR created_at = ? AND id < ?)`
		args = append(args, t, t, p.AfterID)
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	out, err := queryList(ctx, d.s.reader, scanConversation, q, append(args, p.Limit)...)
	return out, mapErr(err)
}

func (d driver) ConversationUpdate(ctx context.Context, p *store.ConversationUpdateParams) (store.Conversation, error) {
	var title, summary any
	if p.Title != nil {
		title = *p.Title
	}
	through := any(nil)
	if p.Summary != nil {
		summary, through = *p.Summary, p.Through
	}
	c, err := scanConversation(d.s.writer.QueryRowContext(ctx,
		`UPDATE conversations SET title = coalesce(?, title), summary = coalesce(?, summary),
			summarized_through = coalesce(?, summarized_through), updated_at = ?
		WHERE workspace_id = ? AND id = ? AND coalesce(?, 0) <= last_seq
		RETURNING `+conversationColumns,
		title, summary, through, micros(p.Now), p.WorkspaceID, p.ID, through))
	return c, mapErr(err)
}

func (d driver) ConversationDelete(ctx context.Context, workspaceID, id string) error {
	res, err := d.s.writer.ExecContext(ctx, `DELETE FROM conversations WHERE workspace_id = ? AND id = ?`, workspaceID, id)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}

const messageColumns = `conversation_id, seq, role, content, tool_calls, tool_call_id, created_at`

func scanMessage(sc scanner) (store.Message, error) {
	var (
		m       store.Message
		calls   sql.NullString
		created int64
	)
	if err := sc.Scan(&m.ConversationID, &m.Seq, &m.Role, &m.Content, &calls, &m.ToolCallID, &created); err != nil {
		return store.Message{}, err
	}
	if calls.Valid {
		m.ToolCalls = []byte(calls.String)
	}
	m.CreatedAt = fromMicros(created)
	return m, nil
}

// maxMessageRows caps the messages one insert statement carries.
const maxMessageRows = 64

// MessageAppend runs on the single writer connection, so appends are
// serialized anyway; moving last_seq in the same transaction keeps the
// numbering right for a second process on the same file too.
func (d driver) MessageAppend(ctx context.Context, p *store.MessageAppendParams) ([]store.Message, error) {
	out := make([]store.Message, len(p.Messages))
	t := micros(p.Now)
	err := d.s.writeTx(ctx, func(tx *sql.Tx) error {
		var last int64
		if err := tx.QueryRowContext(ctx,
			`UPDATE conversations SET last_seq = last_seq + ?, updated_at = ? WHERE workspace_id = ? AND id = ? RETURNING last_seq`,
			len(p.Messages), t, p.WorkspaceID, p.ConversationID).Scan(&last); err != nil {
			return err
		}
		first := last - int64(len(p.Messages)) + 1
		for lo := 0; lo < len(p.Messages); lo += maxMessageRows {
			hi := min(len(p.Messages), lo+maxMessageRows)
			args := make([]any, 0, 7*(hi-lo))
			for i := lo; i < hi; i++ {
				m := p.Messages[i]
				m.ConversationID, m.Seq, m.CreatedAt = p.ConversationID, first+int64(i), p.Now
				out[i] = m
				args = append(args, m.ConversationID, m.Seq, m.Role, m.Content, nullJSON(m.ToolCalls), m.ToolCallID, t)
			}
			q := `INSERT INTO messages (` + messageColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?)` +
				strings.Repeat(`, (?, ?, ?, ?, ?, ?, ?)`, hi-lo-1)
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, mapErr(err)
	}
	return out, nil
}

func (d driver) MessageList(ctx context.Context, p *store.MessageListParams) ([]store.Message, error) {
	q := p.Query
	// The join keeps another workspace's conversation out.
	sel := `SELECT m.conversation_id, m.seq, m.role, m.content, m.tool_calls, m.tool_call_id, m.created_at
		FROM messages m JOIN conversations c ON c.id = m.conversation_id
		WHERE c.workspace_id = ? AND m.conversation_id = ? AND m.seq > ?`
	args := []any{q.WorkspaceID, q.ConversationID, q.After}
	switch {
	case q.Limit > 0 && q.Tail:
		sel = `SELECT * FROM (` + sel + ` ORDER BY m.seq DESC LIMIT ?) ORDER BY seq`
		args = append(args, q.Limit)
	case q.Limit > 0:
		sel += ` ORDER BY m.seq LIMIT ?`
		args = append(args, q.Limit)
	default:
		sel += ` ORDER BY m.seq`
	}
	out, err := queryList(ctx, d.s.reader, scanMessage, sel, args...)
	return out, mapErr(err)
}

const memoryColumns = `id, workspace_id, scope, visibility, owner, conversation_id, text, source, created_at, updated_at`

func scanMemory(sc scanner) (store.Memory, error) {
	var (
		m                store.Memory
		conv             sql.NullString
		created, updated int64
	)
	if err := sc.Scan(&m.ID, &m.WorkspaceID, &m.Scope, &m.Visibility, &m.Owner, &conv, &m.Text, &m.Source,
		&created, &updated); err != nil {
		return store.Memory{}, err
	}
	m.ConversationID = conv.String
	m.CreatedAt, m.UpdatedAt = fromMicros(created), fromMicros(updated)
	return m, nil
}

// MemoryInsert selects the workspace (and, for a conversation memory,
// the conversation) it writes into: no row inserted means one of them is
// not there, which is ErrNotFound.
func (d driver) MemoryInsert(ctx context.Context, p *store.MemoryInsertParams) error {
	m := p.Memory
	args := []any{m.ID, m.Scope, m.Visibility, m.Owner, nullString(m.ConversationID), m.Text, m.Source,
		micros(m.CreatedAt), micros(m.UpdatedAt), m.WorkspaceID}
	q := `INSERT INTO memories (` + memoryColumns + `)
		SELECT ?, w.id, ?, ?, ?, ?, ?, ?, ?, ? FROM workspaces w WHERE w.id = ?`
	if m.ConversationID != "" {
		q = `INSERT INTO memories (` + memoryColumns + `)
		SELECT ?, c.workspace_id, ?, ?, ?, ?, ?, ?, ?, ? FROM conversations c WHERE c.workspace_id = ? AND c.id = ?`
		args = append(args, m.ConversationID)
	}
	res, err := d.s.writer.ExecContext(ctx, q, args...)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}

func (d driver) MemoryGet(ctx context.Context, workspaceID, id string) (store.Memory, error) {
	m, err := scanMemory(d.s.reader.QueryRowContext(ctx,
		`SELECT `+memoryColumns+` FROM memories WHERE workspace_id = ? AND id = ?`, workspaceID, id))
	return m, mapErr(err)
}

func (d driver) MemoryUpdate(ctx context.Context, p *store.MemoryUpdateParams) (store.Memory, error) {
	m, err := scanMemory(d.s.writer.QueryRowContext(ctx,
		`UPDATE memories SET text = ?, updated_at = ? WHERE workspace_id = ? AND id = ? RETURNING `+memoryColumns,
		p.Text, micros(p.Now), p.WorkspaceID, p.ID))
	return m, mapErr(err)
}

func (d driver) MemoryDelete(ctx context.Context, workspaceID, id string) error {
	res, err := d.s.writer.ExecContext(ctx, `DELETE FROM memories WHERE workspace_id = ? AND id = ?`, workspaceID, id)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}

// memoryWhere is the WHERE clause of f with its arguments.
func memoryWhere(f store.MemoryFilter) (string, []any) {
	w := `workspace_id = ?`
	args := []any{f.WorkspaceID}
	add := func(cond string, v any) {
		w += ` AND ` + cond
		args = append(args, v)
	}
	if f.Scope != "" {
		add(`scope = ?`, f.Scope)
	}
	if f.Visibility != "" {
		add(`visibility = ?`, f.Visibility)
	}
	if f.Owner != "" {
		add(`owner = ?`, f.Owner)
	}
	if f.ConversationID != "" {
		add(`conversation_id = ?`, f.ConversationID)
	}
	if f.VisibleTo != "" {
		add(`(visibility = 'group' OR owner = ?)`, f.VisibleTo)
	}
	return w, args
}

func (d driver) MemoryList(ctx context.Context, p *store.MemoryListParams) ([]store.Memory, error) {
	w, args := memoryWhere(p.Filter)
	if p.After {
		t := micros(p.AfterTime)
		w += ` AND (created_at < ? OR created_at = ? AND id < ?)`
		args = append(args, t, t, p.AfterID)
	}
	out, err := queryList(ctx, d.s.reader, scanMemory,
		`SELECT `+memoryColumns+` FROM memories WHERE `+w+` ORDER BY created_at DESC, id DESC LIMIT ?`, append(args, p.Limit)...)
	return out, mapErr(err)
}

func (d driver) MemoryCount(ctx context.Context, p *store.MemoryListParams) (int, error) {
	w, args := memoryWhere(p.Filter)
	var n int
	err := d.s.reader.QueryRowContext(ctx, `SELECT count(*) FROM memories WHERE `+w, args...).Scan(&n)
	return n, mapErr(err)
}
