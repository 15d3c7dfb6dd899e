package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/run"
	"github.com/agentcraftlab/agentcraft/store"
)

// DefaultHistoryTokens is the history budget when neither the agent
// (store.AgentMemory.HistoryTokens) nor ConversationOptions sets one.
const DefaultHistoryTokens = 8000

// ConversationOptions configure Conversations.
type ConversationOptions struct {
	// HistoryTokens is the default history budget, in estimated tokens.
	// Default DefaultHistoryTokens.
	HistoryTokens int
	// Memories, when set, loses a conversation's memories from the search
	// index when the conversation is deleted. Default nil.
	Memories *Memories
	// Logger receives compaction failures (the run then goes on with the
	// recent turns only). Default: discard.
	Logger *slog.Logger
}

// Conversations keeps the caller's threads: CRUD for the API, and Begin
// and Finish for the run seam (it implements run.Conversations). Every
// method takes the principal and sees only that owner's conversations:
// another owner's is ErrNotFound, as an unknown id is. It is safe for
// concurrent use.
type Conversations struct {
	st       store.Store
	budget   int
	memories *Memories
	logger   *slog.Logger
}

var _ run.Conversations = (*Conversations)(nil)

// NewConversations returns the conversations of st.
func NewConversations(st store.Store, opts *ConversationOptions) *Conversations {
	c := &Conversations{st: st, budget: DefaultHistoryTokens, logger: slog.New(slog.DiscardHandler)}
	if opts != nil {
		if opts.HistoryTokens > 0 {
			c.budget = opts.HistoryTokens
		}
		if opts.Logger != nil {
			c.logger = opts.Logger
		}
		c.memories = opts.Memories
	}
	return c
}

// NewConversation is what Create takes.
type NewConversation struct {
	Title string
	// Agent is the agent the thread talks to; optional.
	Agent string
	// ExternalRef is the client's own id of the thread, such as
	// "openwebui:<chat id>"; optional, unique in the workspace.
	ExternalRef string
}

// Create starts a conversation owned by p.
func (c *Conversations) Create(ctx context.Context, p run.Principal, in NewConversation) (store.Conversation, error) {
	return c.st.Conversations().Create(ctx, store.Conversation{WorkspaceID: p.WorkspaceID, Owner: Owner(p),
		Title: in.Title, Agent: in.Agent, ExternalRef: in.ExternalRef})
}

// ErrUnknownConversation reports a conversation that does not exist for
// the caller: an unknown id, or another owner's conversation (which is
// not there for the caller). It comes wrapped with store.ErrNotFound too.
var ErrUnknownConversation = errors.New("unknown conversation")

func unknownConversation(id string) error {
	return fmt.Errorf("memory: %w %q: %w", ErrUnknownConversation, id, store.ErrNotFound)
}

// Get returns p's conversation id.
func (c *Conversations) Get(ctx context.Context, p run.Principal, id string) (store.Conversation, error) {
	cv, err := c.st.Conversations().Get(ctx, p.WorkspaceID, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && cv.Owner != Owner(p) {
		return store.Conversation{}, unknownConversation(id)
	}
	if err != nil {
		return store.Conversation{}, err
	}
	return cv, nil
}

// Attach returns p's conversation known to the client as ref, creating
// it (for agent) on first use. Refs are p's own: another owner's thread
// with the same ref is theirs, and p gets a conversation of its own.
func (c *Conversations) Attach(ctx context.Context, p run.Principal, ref, agent string) (store.Conversation, error) {
	owner := Owner(p)
	for range 2 {
		cv, err := c.st.Conversations().GetByExternalRef(ctx, p.WorkspaceID, owner, ref)
		if err == nil || !errors.Is(err, store.ErrNotFound) {
			return cv, err
		}
		cv, err = c.Create(ctx, p, NewConversation{Agent: agent, ExternalRef: ref})
		if !errors.Is(err, store.ErrConflict) {
			return cv, err
		}
		// A concurrent first request created it: read theirs.
	}
	return store.Conversation{}, fmt.Errorf("memory: attach conversation %q: %w", ref, store.ErrConflict)
}

// List returns a page of p's conversations, newest first.
func (c *Conversations) List(ctx context.Context, p run.Principal, limit int, cursor string) (store.ConversationPage, error) {
	return c.st.Conversations().List(ctx, store.ConversationFilter{WorkspaceID: p.WorkspaceID, Owner: Owner(p), Limit: limit, Cursor: cursor})
}

// Messages returns the messages of p's conversation after seq after, at
// most limit (0: all).
func (c *Conversations) Messages(ctx context.Context, p run.Principal, id string, after int64, limit int) ([]store.Message, error) {
	if _, err := c.Get(ctx, p, id); err != nil {
		return nil, err
	}
	return c.st.Conversations().Messages(ctx, store.MessageQuery{WorkspaceID: p.WorkspaceID, ConversationID: id, After: after, Limit: limit})
}

// Rename sets the title of p's conversation.
func (c *Conversations) Rename(ctx context.Context, p run.Principal, id, title string) (store.Conversation, error) {
	if _, err := c.Get(ctx, p, id); err != nil {
		return store.Conversation{}, err
	}
	return c.st.Conversations().Rename(ctx, p.WorkspaceID, id, title)
}

// Delete removes p's conversation with its messages and memories.
func (c *Conversations) Delete(ctx context.Context, p run.Principal, id string) error {
	if _, err := c.Get(ctx, p, id); err != nil {
		return err
	}
	if err := c.st.Conversations().Delete(ctx, p.WorkspaceID, id); err != nil {
		return err
	}
	if c.memories != nil {
		return c.memories.DropConversation(ctx, p.WorkspaceID, id)
	}
	return nil
}

// Begin implements run.Conversations; see the package documentation and
// History. With h.ClientHistory the input is the whole conversation as
// the client keeps it, and Begin tells three cases apart by comparing it
// with the thread's newest messages:
//   - the client's messages end where the thread ends (or the thread is
//     empty): the ones after that point are new; the model gets the
//     stored history (compacted as usual) and then them;
//   - the client's messages match the thread up to a point before its end
//     (the user edited or regenerated a turn): the model gets the
//     client's messages as given, since that is the branch the user sees,
//     and the ones after the match are stored as new;
//   - nothing matches (the thread began on another surface): every
//     client message is new, after the stored history.
//
// The client's own system messages go first in every case.
func (c *Conversations) Begin(ctx context.Context, p run.Principal, id string, input []llm.Message, h run.History) (send, fresh []llm.Message, err error) {
	cv, err := c.Get(ctx, p, id)
	if err != nil {
		return nil, nil, err
	}
	var sys, rest []llm.Message
	for _, m := range input {
		if m.Role == llm.RoleSystem {
			sys = append(sys, m)
		} else {
			rest = append(rest, m)
		}
	}
	fresh = rest
	if h.ClientHistory && len(rest) > 0 && cv.LastSeq > 0 {
		window := min(len(rest)+8, maxCompareWindow)
		tail, err := c.st.Conversations().Messages(ctx, store.MessageQuery{WorkspaceID: p.WorkspaceID, ConversationID: id, Limit: window, Tail: true})
		if err != nil {
			return nil, nil, err
		}
		k, atEnd := overlap(tail, rest)
		fresh = rest[k:]
		if k > 0 && !atEnd {
			// A regenerated answer has no new message: the turn it
			// answers is stored again, so the thread reads in order.
			if !hasUser(fresh) {
				fresh = rest[lastUser(rest):]
			}
			return slices.Concat(sys, rest), fresh, nil
		}
	}
	hist, err := c.history(ctx, cv, h)
	if err != nil {
		return nil, nil, err
	}
	return slices.Concat(sys, hist, fresh), fresh, nil
}

// maxCompareWindow bounds the stored messages Begin compares with a
// client's history.
const maxCompareWindow = 200

// Finish implements run.Conversations.
func (c *Conversations) Finish(ctx context.Context, p run.Principal, id string, msgs []llm.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	rows := make([]store.Message, 0, len(msgs))
	for _, m := range msgs {
		rows = append(rows, toStored(m))
	}
	_, err := c.st.Conversations().Append(ctx, p.WorkspaceID, id, rows...)
	return err
}

// History returns the messages of p's conversation to send to a model:
// the summary as a system message (when the thread was compacted), then
// the turns after it verbatim. When their estimated size (EstimateTokens)
// is over budgetTokens (0: the default), it first compacts: the older
// turns are summarised with sum (and its modelID) together with the
// previous summary, the new summary is stored with the seq it covers,
// and the newest turns that fit in half the budget stay verbatim, from a
// user message on. A failed summary is logged and the run goes on with
// the recent turns and the previous summary.
func (c *Conversations) History(ctx context.Context, p run.Principal, id string, budgetTokens int, sum llm.Model, modelID string) ([]llm.Message, error) {
	cv, err := c.Get(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return c.history(ctx, cv, run.History{BudgetTokens: budgetTokens, Summarizer: sum, ModelID: modelID})
}

func (c *Conversations) history(ctx context.Context, cv store.Conversation, h run.History) ([]llm.Message, error) {
	budget := h.BudgetTokens
	if budget <= 0 {
		budget = c.budget
	}
	rows, err := c.st.Conversations().Messages(ctx, store.MessageQuery{WorkspaceID: cv.WorkspaceID, ConversationID: cv.ID, After: cv.SummarizedThrough})
	if err != nil {
		return nil, err
	}
	total := EstimateTokens(cv.Summary)
	for _, r := range rows {
		total += estimateStored(r)
	}
	summary := cv.Summary
	if total > budget && h.Summarizer != nil {
		if cut := cutPoint(rows, budget/2); cut > 0 {
			s, err := summarize(ctx, h.Summarizer, h.ModelID, cv.Summary, rows[:cut])
			if err == nil {
				_, err = c.st.Conversations().Summarize(ctx, cv.WorkspaceID, cv.ID, s, rows[cut-1].Seq)
			}
			if err != nil {
				c.logger.Warn("conversation_compaction_failed", "workspace_id", cv.WorkspaceID, "conversation_id", cv.ID, "error", err)
			} else {
				summary = s
			}
			rows = rows[cut:]
		}
	}
	out := make([]llm.Message, 0, len(rows)+1)
	if summary != "" {
		out = append(out, llm.Text(llm.RoleSystem, summaryPrefix+summary))
	}
	for _, r := range rows {
		out = append(out, fromStored(r))
	}
	return out, nil
}

// summaryPrefix introduces the summary the model gets in place of the
// turns it covers.
const summaryPrefix = "Summary of the earlier part of this conversation:\n"

// cutPoint is the index of the first message kept verbatim: the newest
// messages whose estimated size fits in keep, starting at a user message
// so that no tool result loses its call. 0 means nothing can be cut.
func cutPoint(rows []store.Message, keep int) int {
	size, cut := 0, len(rows)
	for i := len(rows) - 1; i >= 0; i-- {
		size += estimateStored(rows[i])
		if size > keep && cut < len(rows) {
			break
		}
		cut = i
	}
	// Start at a user message, moving later; without one after the cut,
	// keep from the last user message before it.
	for i := cut; i < len(rows); i++ {
		if rows[i].Role == store.MessageUser {
			return i
		}
	}
	for i := cut - 1; i > 0; i-- {
		if rows[i].Role == store.MessageUser {
			return i
		}
	}
	return 0
}

// summarize asks model for a summary of prev (the previous summary) and
// turns.
func summarize(ctx context.Context, model llm.Model, modelID, prev string, turns []store.Message) (string, error) {
	var b strings.Builder
	if prev != "" {
		b.WriteString("Summary so far:\n")
		b.WriteString(prev)
		b.WriteString("\n\n")
	}
	b.WriteString("Conversation to add to it:\n")
	for _, t := range turns {
		text := t.Content
		if text == "" && len(t.ToolCalls) > 0 {
			text = "(called tools: " + string(t.ToolCalls) + ")"
		}
		fmt.Fprintf(&b, "%s: %s\n", t.Role, text)
	}
	resp, err := model.Generate(ctx, llm.Request{Model: modelID, Messages: []llm.Message{
		llm.Text(llm.RoleSystem, summaryInstructions),
		llm.Text(llm.RoleUser, b.String()),
	}})
	if err != nil {
		return "", fmt.Errorf("summarize: %w", err)
	}
	s := strings.TrimSpace(resp.Message.Text())
	if s == "" {
		return "", errors.New("summarize: the model answered with no text")
	}
	return sanitize(s), nil
}

// summaryInstructions is the system message of a compaction request.
const summaryInstructions = "You compact a conversation between a user and an assistant so that it can go on " +
	"within a limited context. Write a concise summary that keeps every fact, decision, name, number, open " +
	"question and preference the rest of the conversation may need, in the conversation's language. " +
	"Answer with the summary only."

// overlap compares a client's messages with the thread's newest stored
// messages (tail, oldest first). It returns how many of the client's
// first messages the thread already holds, and whether they end where the
// thread ends (the client continues it) or before (it branched off).
func overlap(tail []store.Message, client []llm.Message) (k int, atEnd bool) {
	// Continuing: client[:k] is the end of the thread.
	for k := min(len(client), len(tail)); k > 0; k-- {
		if equalRun(tail[len(tail)-k:], client[:k]) {
			return k, true
		}
	}
	// Branched: client[:k] matches the thread ending at j < len(tail).
	for k := min(len(client), len(tail)-1); k > 0; k-- {
		for j := len(tail) - 1; j >= k; j-- {
			if equalRun(tail[j-k:j], client[:k]) {
				return k, false
			}
		}
	}
	return 0, true
}

func equalRun(stored []store.Message, client []llm.Message) bool {
	for i := range stored {
		if !sameMessage(stored[i], client[i]) {
			return false
		}
	}
	return true
}

// detailsBlock is a <details>…</details> block, which Open WebUI puts into
// an assistant message it sends back (the reasoning and tool progress it
// showed).
var detailsBlock = regexp.MustCompile(`(?s)<details[^>]*>.*?</details>`)

// sameMessage reports whether a client's message is the stored one: the
// same role, tool call id and text, an assistant's text compared without
// the blocks a chat UI adds and surrounding space.
func sameMessage(s store.Message, m llm.Message) bool {
	if string(s.Role) != string(m.Role) || s.ToolCallID != m.ToolCallID {
		return false
	}
	a, b := s.Content, sanitize(m.Text())
	if m.Role == llm.RoleAssistant {
		a, b = detailsBlock.ReplaceAllString(a, ""), detailsBlock.ReplaceAllString(b, "")
	}
	return strings.TrimSpace(a) == strings.TrimSpace(b)
}

// toStored is m as a stored message: its text (images are not kept), its
// tool calls as JSON.
func toStored(m llm.Message) store.Message {
	s := store.Message{Role: store.MessageRole(m.Role), Content: sanitize(m.Text()), ToolCallID: m.ToolCallID}
	if len(m.ToolCalls) > 0 {
		s.ToolCalls, _ = json.Marshal(m.ToolCalls) // strings only: cannot fail
	}
	return s
}

func fromStored(s store.Message) llm.Message {
	m := llm.Message{Role: llm.Role(s.Role), ToolCallID: s.ToolCallID}
	if s.Content != "" {
		m.Content = []llm.Part{{Type: llm.PartText, Text: s.Content}}
	}
	if len(s.ToolCalls) > 0 {
		_ = json.Unmarshal(s.ToolCalls, &m.ToolCalls) // written by toStored
	}
	return m
}

// sanitize makes s storable on every driver: valid UTF-8, no NUL bytes.
func sanitize(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "")
}

// EstimateTokens estimates the tokens of s without a tokenizer: a token
// per four ASCII bytes (English runs at about that), a token per other
// character (CJK text runs at one to one and a half characters a token),
// which errs on the side of compacting early.
func EstimateTokens(s string) int {
	ascii, other := 0, 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			ascii++
			i++
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		other++
		i += n
	}
	return (ascii+3)/4 + other
}

// messageOverhead is the tokens a message costs beyond its text (role
// and framing).
const messageOverhead = 4

func estimateStored(m store.Message) int {
	return messageOverhead + EstimateTokens(m.Content) + EstimateTokens(string(m.ToolCalls))
}

func hasUser(msgs []llm.Message) bool {
	return slices.ContainsFunc(msgs, func(m llm.Message) bool { return m.Role == llm.RoleUser })
}

// lastUser is the index of the last user message of msgs, or 0.
func lastUser(msgs []llm.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser {
			return i
		}
	}
	return 0
}
