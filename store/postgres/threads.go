package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

const conversationColumns = `id, workspace_id, title, owner, agent, external_ref, summary, summarized_through,
	last_seq, created_at, updated_at`

func scanConversation(row pgx.Row) (store.Conversation, error) {
	var (
		c   store.Conversation
		ref *string
	)
	if err := row.Scan(&c.ID, &c.WorkspaceID, &c.Title, &c.Owner, &c.Agent, &ref, &c.Summary, &c.SummarizedThrough,
		&c.LastSeq, &c.CreatedAt, &c.UpdatedAt); err != nil {
		return store.Conversation{}, err
	}
	if ref != nil {
		c.ExternalRef = *ref
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return c, nil
}

func (d driver) ConversationInsert(ctx context.Context, p *store.ConversationInsertParams) error {
	c := p.Conversation
	_, err := d.s.pool.Exec(ctx,
		`INSERT INTO conversations (`+conversationColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		c.ID, c.WorkspaceID, c.Title, c.Owner, c.Agent, nullString(c.ExternalRef), c.Summary, c.SummarizedThrough,
		c.LastSeq, c.CreatedAt, c.UpdatedAt)
	return mapErr(err)
}

func (d driver) ConversationGet(ctx context.Context, workspaceID, id string) (store.Conversation, error) {
	c, err := scanConversation(d.s.pool.QueryRow(ctx,
		`SELECT `+conversationColumns+` FROM conversations WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	return c, mapErr(err)
}

func (d driver) ConversationGetByRef(ctx context.Context, workspaceID, owner, ref string) (store.Conversation, error) {
	c, err := scanConversation(d.s.pool.QueryRow(ctx,
		`SELECT `+conversationColumns+` FROM conversations WHERE workspace_id = $1 AND owner = $2 AND external_ref = $3`, workspaceID, owner, ref))
	return c, mapErr(err)
}

func (d driver) ConversationList(ctx context.Context, p *store.ConversationListParams) ([]store.Conversation, error) {
	out, err := queryList(ctx, d.s, scanConversation,
		`SELECT `+conversationColumns+` FROM conversations WHERE workspace_id = $1 AND owner = $2
			AND (NOT $3 OR (created_at, id COLLATE "C") < ($4, $5 COLLATE "C"))
		ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $6`,
		p.WorkspaceID, p.Owner, p.After, p.AfterTime, p.AfterID, p.Limit)
	return out, mapErr(err)
}

func (d driver) ConversationUpdate(ctx context.Context, p *store.ConversationUpdateParams) (store.Conversation, error) {
	var through *int64
	if p.Summary != nil {
		through = &p.Through
	}
	c, err := scanConversation(d.s.pool.QueryRow(ctx,
		`UPDATE conversations SET title = coalesce($1, title), summary = coalesce($2, summary),
			summarized_through = coalesce($3, summarized_through), updated_at = $4
		WHERE workspace_id = $5 AND id = $6 AND coalesce($3, 0) <= last_seq
		RETURNING `+conversationColumns,
		p.Title, p.Summary, through, p.Now, p.WorkspaceID, p.ID))
	return c, mapErr(err)
}

func (d driver) ConversationDelete(ctx context.Context, workspaceID, id string) error {
	tag, err := d.s.pool.Exec(ctx, `DELETE FROM conversations WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}

func scanMessage(row pgx.Row) (store.Message, error) {
	var m store.Message
	if err := row.Scan(&m.ConversationID, &m.Seq, &m.Role, &m.Content, (*[]byte)(&m.ToolCalls), &m.ToolCallID, &m.CreatedAt); err != nil {
		return store.Message{}, err
	}
	if len(m.ToolCalls) == 0 {
		m.ToolCalls = nil
	}
	m.CreatedAt = m.CreatedAt.UTC()
	return m, nil
}

// MessageAppend moves last_seq first: the UPDATE locks the conversation
// row until the transaction ends, so a concurrent append waits and then
// numbers after this one.
func (d driver) MessageAppend(ctx context.Context, p *store.MessageAppendParams) ([]store.Message, error) {
	out := make([]store.Message, len(p.Messages))
	n := len(p.Messages)
	seqs, roles, contents, calls, callIDs := make([]int64, n), make([]string, n), make([]string, n), make([]*string, n), make([]string, n)
	err := pgx.BeginFunc(ctx, d.s.pool, func(tx pgx.Tx) error {
		var last int64
		if err := tx.QueryRow(ctx,
			`UPDATE conversations SET last_seq = last_seq + $1, updated_at = $2 WHERE workspace_id = $3 AND id = $4 RETURNING last_seq`,
			n, p.Now, p.WorkspaceID, p.ConversationID).Scan(&last); err != nil {
			return err
		}
		first := last - int64(n) + 1
		for i, m := range p.Messages {
			m.ConversationID, m.Seq, m.CreatedAt = p.ConversationID, first+int64(i), p.Now
			out[i] = m
			seqs[i], roles[i], contents[i], callIDs[i] = m.Seq, string(m.Role), m.Content, m.ToolCallID
			if len(m.ToolCalls) > 0 {
				s := string(m.ToolCalls)
				calls[i] = &s
			}
		}
		_, err := tx.Exec(ctx,
			`INSERT INTO messages (conversation_id, seq, role, content, tool_calls, tool_call_id, created_at)
			SELECT $1, u.seq, u.role, u.content, u.calls::jsonb, u.call_id, $2
			FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[]) AS u (seq, role, content, calls, call_id)`,
			p.ConversationID, p.Now, seqs, roles, contents, calls, callIDs)
		return err
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
		WHERE c.workspace_id = $1 AND m.conversation_id = $2 AND m.seq > $3`
	args := []any{q.WorkspaceID, q.ConversationID, q.After}
	switch {
	case q.Limit > 0 && q.Tail:
		sel = `SELECT * FROM (` + sel + ` ORDER BY m.seq DESC LIMIT $4) t ORDER BY seq`
		args = append(args, q.Limit)
	case q.Limit > 0:
		sel += ` ORDER BY m.seq LIMIT $4`
		args = append(args, q.Limit)
	default:
		sel += ` ORDER BY m.seq`
	}
	out, err := queryList(ctx, d.s, scanMessage, sel, args...)
	return out, mapErr(err)
}

const memoryColumns = `id, workspace_id, scope, visibility, owner, conversation_id, text, source, created_at, updated_at`

func scanMemory(row pgx.Row) (store.Memory, error) {
	var (
		m    store.Memory
		conv *string
	)
	if err := row.Scan(&m.ID, &m.WorkspaceID, &m.Scope, &m.Visibility, &m.Owner, &conv, &m.Text, &m.Source,
		&m.CreatedAt, &m.UpdatedAt); err != nil {
		return store.Memory{}, err
	}
	if conv != nil {
		m.ConversationID = *conv
	}
	m.CreatedAt, m.UpdatedAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC()
	return m, nil
}

// MemoryInsert selects the workspace (and, for a conversation memory,
// the conversation) it writes into: no row inserted means one of them is
// not there, which is ErrNotFound.
func (d driver) MemoryInsert(ctx context.Context, p *store.MemoryInsertParams) error {
	m := p.Memory
	args := []any{m.ID, m.Scope, m.Visibility, m.Owner, nullString(m.ConversationID), m.Text, m.Source,
		m.CreatedAt, m.UpdatedAt, m.WorkspaceID}
	q := `INSERT INTO memories (` + memoryColumns + `)
		SELECT $1, w.id, $2, $3, $4, $5, $6, $7, $8, $9 FROM workspaces w WHERE w.id = $10`
	if m.ConversationID != "" {
		q = `INSERT INTO memories (` + memoryColumns + `)
		SELECT $1, c.workspace_id, $2, $3, $4, $5, $6, $7, $8, $9 FROM conversations c WHERE c.workspace_id = $10 AND c.id = $11`
		args = append(args, m.ConversationID)
	}
	tag, err := d.s.pool.Exec(ctx, q, args...)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}

func (d driver) MemoryGet(ctx context.Context, workspaceID, id string) (store.Memory, error) {
	m, err := scanMemory(d.s.pool.QueryRow(ctx,
		`SELECT `+memoryColumns+` FROM memories WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	return m, mapErr(err)
}

func (d driver) MemoryUpdate(ctx context.Context, p *store.MemoryUpdateParams) (store.Memory, error) {
	m, err := scanMemory(d.s.pool.QueryRow(ctx,
		`UPDATE memories SET text = $1, updated_at = $2 WHERE workspace_id = $3 AND id = $4 RETURNING `+memoryColumns,
		p.Text, p.Now, p.WorkspaceID, p.ID))
	return m, mapErr(err)
}

func (d driver) MemoryDelete(ctx context.Context, workspaceID, id string) error {
	tag, err := d.s.pool.Exec(ctx, `DELETE FROM memories WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}

// memoryWhere is the WHERE clause of f: every filter is a parameter, an
// empty one matching all.
const memoryWhere = `workspace_id = $1 AND ($2 = '' OR scope = $2) AND ($3 = '' OR visibility = $3)
	AND ($4 = '' OR owner = $4) AND ($5 = '' OR conversation_id = $5)
	AND ($6 = '' OR visibility = 'group' OR owner = $6)`

func memoryArgs(f store.MemoryFilter) []any {
	return []any{f.WorkspaceID, string(f.Scope), string(f.Visibility), f.Owner, f.ConversationID, f.VisibleTo}
}

func (d driver) MemoryList(ctx context.Context, p *store.MemoryListParams) ([]store.Memory, error) {
	out, err := queryList(ctx, d.s, scanMemory,
		`SELECT `+memoryColumns+` FROM memories WHERE `+memoryWhere+`
			AND (NOT $7 OR (created_at, id COLLATE "C") < ($8, $9 COLLATE "C"))
		ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $10`,
		append(memoryArgs(p.Filter), p.After, p.AfterTime, p.AfterID, p.Limit)...)
	return out, mapErr(err)
}

func (d driver) MemoryCount(ctx context.Context, p *store.MemoryListParams) (int, error) {
	var n int
	err := d.s.pool.QueryRow(ctx, `SELECT count(*) FROM memories WHERE `+memoryWhere, memoryArgs(p.Filter)...).Scan(&n)
	return n, mapErr(err)
}
