package autonomous

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/tool"
)

// Defaults of Limits.
const (
	DefaultMaxSteps     = 20
	DefaultMaxDepth     = 2
	DefaultMaxSubAgents = 8
	DefaultMaxReviews   = 1
)

// Limits bound one autonomous run. Zero fields take the defaults; a
// negative MaxTokens or MaxTime means none.
type Limits struct {
	// MaxSteps bounds the model calls of each agent of the tree. Default
	// DefaultMaxSteps.
	MaxSteps int
	// MaxTokens bounds the tokens (input plus output) of the whole tree.
	// Default 0: none.
	MaxTokens int
	// MaxTime bounds the run's wall time, parked time excluded. Default 0:
	// none (the workflow's own timeout still applies).
	MaxTime time.Duration
	// MaxDepth bounds sub-agent nesting: the root is depth 0, its
	// sub-agents 1. Default DefaultMaxDepth.
	MaxDepth int
	// MaxSubAgents bounds the sub-agents started in the whole tree.
	// Default DefaultMaxSubAgents.
	MaxSubAgents int
	// MaxReviews bounds how often one agent's draft is sent back by
	// peer_review, challenge or a failed Check. Default DefaultMaxReviews.
	MaxReviews int
}

func (l Limits) withDefaults() Limits {
	if l.MaxSteps <= 0 {
		l.MaxSteps = DefaultMaxSteps
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxSubAgents <= 0 {
		l.MaxSubAgents = DefaultMaxSubAgents
	}
	if l.MaxReviews <= 0 {
		l.MaxReviews = DefaultMaxReviews
	}
	return l
}

// Spent is what an agent of the tree has used so far.
type Spent struct {
	Steps int
	// Tokens is the agent's and its descendants' tokens.
	Tokens  int
	Elapsed time.Duration
}

// Budget is the budget policy: it is asked before every model call of an
// agent and gives each sub-agent its share.
type Budget interface {
	// Exhausted returns why the agent must stop now ("" to go on).
	Exhausted(s Spent) string
	// Share returns the budget of a sub-agent started now.
	Share() Budget
	// Charge counts tokens toward this budget and every budget it was
	// shared from.
	Charge(tokens int)
	// Tokens is what was charged to this budget and its shares.
	Tokens() int
}

// LimitBudget is the default Budget: steps per agent, tokens over the tree,
// wall time. A share gets the parent's step limit, half the tokens the
// parent has left, and the parent's deadline.
type LimitBudget struct {
	steps    int
	tokens   int // 0: none
	deadline time.Time
	used     atomic.Int64
	parent   *LimitBudget
}

// NewBudget returns the LimitBudget of l, its clock starting now.
func NewBudget(l Limits) *LimitBudget {
	l = l.withDefaults()
	b := &LimitBudget{steps: l.MaxSteps, tokens: max(l.MaxTokens, 0)}
	if l.MaxTime > 0 {
		b.deadline = time.Now().Add(l.MaxTime)
	}
	return b
}

// Exhausted implements Budget.
func (b *LimitBudget) Exhausted(s Spent) string {
	switch {
	case s.Steps >= b.steps:
		return fmt.Sprintf("the step budget of %d model calls ran out", b.steps)
	case b.tokens > 0 && b.Tokens() >= b.tokens:
		return fmt.Sprintf("the token budget ran out (%d of %d tokens used)", b.Tokens(), b.tokens)
	case !b.deadline.IsZero() && time.Now().After(b.deadline):
		return fmt.Sprintf("the time budget ran out after %s", s.Elapsed.Round(time.Millisecond))
	}
	for p := b.parent; p != nil; p = p.parent {
		if p.tokens > 0 && p.Tokens() >= p.tokens {
			return fmt.Sprintf("the parent's token budget ran out (%d of %d tokens used)", p.Tokens(), p.tokens)
		}
	}
	return ""
}

// Share implements Budget.
func (b *LimitBudget) Share() Budget {
	s := &LimitBudget{steps: b.steps, deadline: b.deadline, parent: b}
	if b.tokens > 0 {
		s.tokens = max(1, (b.tokens-b.Tokens())/2)
	}
	return s
}

// Charge implements Budget.
func (b *LimitBudget) Charge(tokens int) {
	for p := b; p != nil; p = p.parent {
		p.used.Add(int64(tokens))
	}
}

// Tokens implements Budget.
func (b *LimitBudget) Tokens() int { return int(b.used.Load()) }

// Question is what a run parks on: a question for the user (ask_user) or
// the approval of a tool call.
type Question struct {
	// Kind is "ask" or "approval".
	Kind string `json:"kind"`
	// Agent is who asks: "root" or a sub-agent's path.
	Agent  string `json:"agent"`
	Prompt string `json:"prompt"`
	// Entry is the journal entry the answer is recorded as.
	Entry string `json:"entry"`
	// Tool and Arguments name the call an approval is for.
	Tool      string `json:"tool,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	// Capability is the tool's, for an approval.
	Capability string `json:"capability,omitempty"`
	// ApprovalID and Deadline name the approval a Human opened for it,
	// when a person decides it through the task service.
	ApprovalID string     `json:"approval_id,omitempty"`
	Deadline   *time.Time `json:"deadline,omitempty"`
}

// ApprovalForm is the JSON Schema of an approval's answer.
var ApprovalForm = map[string]any{
	"type":     "object",
	"required": []any{"approve"},
	"properties": map[string]any{
		"approve": map[string]any{"type": "boolean"},
		"reason":  map[string]any{"type": "string"},
	},
}

// Journal keeps what a run did, so that it can run again without repeating
// it. workflow.Exec implements it; NewMemoryJournal is the default.
type Journal interface {
	Recall(entry string) (any, bool)
	Record(ctx context.Context, entry string, v any) error
}

// memoryJournal is a Journal in memory: a run that parks cannot continue
// after the process ends, but nothing is repeated within it.
type memoryJournal struct {
	mu sync.Mutex // guards m
	m  map[string]any
}

// NewMemoryJournal returns an empty in-memory Journal.
func NewMemoryJournal() Journal { return &memoryJournal{m: make(map[string]any)} }

func (j *memoryJournal) Recall(entry string) (any, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	v, ok := j.m[entry]
	return v, ok
}

func (j *memoryJournal) Record(_ context.Context, entry string, v any) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, ok := j.m[entry]; ok {
		return fmt.Errorf("autonomous: journal entry %q exists", entry)
	}
	j.m[entry] = v
	return nil
}

// recall decodes a journal entry into out: entries read back from the
// store are decoded JSON, entries of this process the values recorded.
func recall(j Journal, entry string, out any) bool {
	v, ok := j.Recall(entry)
	if !ok {
		return false
	}
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	return json.Unmarshal(b, out) == nil
}

// Human is how a run reaches a person: Answer returns the answer to q, or
// false when there is none yet (the run then parks on q). It may fill in
// q's ApprovalID and Deadline when it opened an approval a person decides
// elsewhere (the task service's inbox, LINE).
type Human interface {
	Answer(ctx context.Context, q *Question) (answer any, ok bool, err error)
}

// journalHuman answers from the journal: a resumed run finds the answer
// the resume recorded under q.Entry.
type journalHuman struct{ j Journal }

func (h journalHuman) Answer(_ context.Context, q *Question) (any, bool, error) {
	ans, ok := h.j.Recall(q.Entry)
	return ans, ok, nil
}

// History is the history manager: Fit returns the messages to send, which
// may compact older ones (by summary) when they outgrow the budget.
type History interface {
	Fit(ctx context.Context, msgs []llm.Message, summarize func(ctx context.Context, text string) (string, error)) ([]llm.Message, bool, error)
}

// SummaryHistory compacts a transcript estimated above MaxTokens (four
// bytes a token) into: the system and first user messages, a summary of
// the older steps written by the planner, and the most recent steps from
// a step boundary on (a tool result never loses its call).
type SummaryHistory struct {
	// MaxTokens is the estimated size past which the transcript is
	// compacted. Default 24000.
	MaxTokens int
	// Keep is how many recent messages at least are kept verbatim.
	// Default 6.
	Keep int
}

// Fit implements History.
func (h SummaryHistory) Fit(ctx context.Context, msgs []llm.Message, summarize func(context.Context, string) (string, error)) ([]llm.Message, bool, error) {
	limit := h.MaxTokens
	if limit <= 0 {
		limit = 24000
	}
	keep := h.Keep
	if keep <= 0 {
		keep = 6
	}
	if estimate(msgs) <= limit || len(msgs) <= keep+2 {
		return msgs, false, nil
	}
	head := 0
	for head < len(msgs) && msgs[head].Role == llm.RoleSystem {
		head++
	}
	head++ // the goal
	cut := len(msgs) - keep
	for cut > head && msgs[cut].Role != llm.RoleAssistant {
		cut--
	}
	if cut <= head {
		return msgs, false, nil
	}
	var b strings.Builder
	for _, m := range msgs[head:cut] {
		fmt.Fprintf(&b, "%s: %s\n", m.Role, messageText(m))
	}
	sum, err := summarize(ctx, b.String())
	if err != nil {
		return nil, false, err
	}
	out := slices.Clone(msgs[:head])
	out = append(out, llm.Text(llm.RoleUser, "Summary of the earlier steps (compacted to stay within the context budget):\n"+sum))
	return append(out, msgs[cut:]...), true, nil
}

// estimate is the transcript's size in tokens, at four bytes a token. It
// runs before every model call, so it adds lengths instead of formatting
// each message as messageText does.
func estimate(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		for _, p := range m.Content {
			n += len(p.Text)
		}
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Arguments) + 8
		}
	}
	return n / 4
}

func messageText(m llm.Message) string {
	s := m.Text()
	for _, c := range m.ToolCalls {
		s += fmt.Sprintf(" [call %s %s]", c.Name, c.Arguments)
	}
	return s
}

// Reflector writes a short self-critique after a failed step or a
// rejected answer (Reflexion); it is added before the next attempt.
type Reflector interface {
	Reflect(ctx context.Context, transcript []llm.Message, failure string, ask func(ctx context.Context, prompt string) (string, error)) (string, error)
}

// ModelReflector asks the planner model for the critique.
type ModelReflector struct{}

// Reflect implements Reflector.
func (ModelReflector) Reflect(ctx context.Context, transcript []llm.Message, failure string, ask func(context.Context, string) (string, error)) (string, error) {
	var b strings.Builder
	from := max(0, len(transcript)-6)
	for _, m := range transcript[from:] {
		fmt.Fprintf(&b, "%s: %s\n", m.Role, truncate(messageText(m), 800))
	}
	return ask(ctx, "You are reviewing an agent's last attempt. What failed:\n"+failure+
		"\n\nRecent transcript:\n"+b.String()+
		"\nIn at most three sentences, say what went wrong and what the agent should do differently in its next attempt.")
}

// Delegation decides which of a parent's tools a sub-agent gets.
type Delegation interface {
	// Tools returns the tools of a sub-agent that asked for want, out of
	// the parent's, or an error naming a tool it may not have.
	Tools(parent []string, want []string) ([]string, error)
}

// InheritDelegation gives a sub-agent the tools it asks for among its
// parent's (all of them when it asks for none) and refuses any other.
type InheritDelegation struct{}

// Tools implements Delegation.
func (InheritDelegation) Tools(parent, want []string) ([]string, error) {
	if len(want) == 0 {
		return slices.Clone(parent), nil
	}
	for _, w := range want {
		if !slices.Contains(parent, w) {
			return nil, fmt.Errorf("tool %q is not one of the parent's tools (%s): a sub-agent gets at most its parent's tools", w, strings.Join(parent, ", "))
		}
	}
	return slices.Clone(want), nil
}

// needsApproval reports whether a call of t parks for a person: P0 puts
// every medium and high capability call behind a decision.
func needsApproval(t tool.Tool, from tool.Capability) bool {
	return from > 0 && t != nil && t.Capability() >= from
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
