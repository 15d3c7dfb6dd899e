package guard

import (
	"context"
	"fmt"
)

// Policy decides whether a conversation may pass. Implementations must be
// safe for concurrent use and must not panic on any input.
type Policy interface {
	Check(ctx context.Context, in Input) Decision
}

// Roles of the messages a Filter looks at. Other roles (system, tool) are
// not scanned: the system prompt is the operator's, and tool results are the
// caller's to vet.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one turn of the conversation.
type Message struct {
	Role string // RoleUser, RoleAssistant, ...; empty counts as RoleUser
	Text string
}

// Direction says which side of the model a check is for.
type Direction int

// Directions. The zero value is not a direction; in a [Rule] it means both.
const (
	DirectionInput  Direction = 1 << iota // the request, before the model sees it
	DirectionOutput                       // the model's answer, before the client sees it
)

func (d Direction) String() string {
	switch d {
	case DirectionInput:
		return "input"
	case DirectionOutput:
		return "output"
	case DirectionInput | DirectionOutput:
		return "both"
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}

// Input is what a Policy checks.
type Input struct {
	// Messages of the conversation, oldest first. On input every user
	// message is scanned; on output every assistant message is.
	Messages  []Message
	Direction Direction
}

// Action is what to do with a request. Actions are ordered by strength, so
// the strongest of several can be found with max.
type Action int

// Actions, weakest first.
const (
	Allow Action = iota // pass
	Log                 // pass and record silently
	Warn                // pass and flag to the operator
	Block               // refuse with the decision's message
)

var actionNames = [...]string{Allow: "allow", Log: "log", Warn: "warn", Block: "block"}

func (a Action) String() string {
	if a >= 0 && int(a) < len(actionNames) {
		return actionNames[a]
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// MarshalText encodes a as "allow", "log", "warn" or "block".
func (a Action) MarshalText() ([]byte, error) {
	if a < 0 || int(a) >= len(actionNames) {
		return nil, fmt.Errorf("guard: marshal action: unknown action %d", int(a))
	}
	return []byte(actionNames[a]), nil
}

// UnmarshalText decodes the names written by MarshalText, for configuration files.
func (a *Action) UnmarshalText(b []byte) error {
	for i, n := range actionNames {
		if string(b) == n {
			*a = Action(i)
			return nil
		}
	}
	return fmt.Errorf("guard: unknown action %q: want allow, log, warn or block", b)
}

// Kind says which check produced a match.
type Kind string

// Kinds of match.
const (
	KindKeyword   Kind = "keyword"
	KindRegex     Kind = "regex"
	KindInjection Kind = "injection"
	KindTopic     Kind = "topic"
)

// Match is one rule that fired.
type Match struct {
	Rule   string // rule name; "injection/<family>" or "topic" for the built-in checks
	Kind   Kind
	Match  string // the matched text from the original message, at most MaxMatchRunes runes
	Action Action
}

// MaxMatchRunes bounds Match.Match, so audit lines stay short and do not
// copy whole prompts into logs.
const MaxMatchRunes = 64

// Decision is a Policy's verdict.
type Decision struct {
	Action  Action
	Message string  // refusal text to send instead of the answer; set when Action is Block
	Matches []Match // every rule that fired, in the order found
}
