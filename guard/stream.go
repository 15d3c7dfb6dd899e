package guard

import (
	"context"
	"strings"
	"unicode/utf8"
)

// DefaultHoldBack is the hold-back NewStreamScanner uses for a value < 1. It
// covers keywords and regex matches up to 64 runes long.
const DefaultHoldBack = 64

// StreamScanner checks a model's streamed output before the client sees it.
// Feed it chunks with Next and finish with Close; send what they return.
//
// It holds back the last holdBack runes of the output. Each call scans the
// held-back text together with the holdBack runes sent just before it, so a
// phrase of at most holdBack runes is scanned whole before any of its runes
// is sent, however the chunks split it. Longer matches (a regex with .*, a
// keyword padded with zero-width characters) can be sent in part before
// they complete; choose holdBack at least as long as the longest match you
// need to stop.
//
// When the policy blocks, the scanner returns the refusal instead of the
// pending text and returns nothing after that. The text a client receives is
// therefore always a prefix of the model's output, possibly followed by the
// refusal.
//
// A StreamScanner is for one response and is not safe for concurrent use.
type StreamScanner struct {
	policy   Policy
	holdBack int

	sent     string // the last holdBack runes already returned, for context
	pending  string // output not yet returned
	blocked  bool
	closed   bool
	matches  []Match
	seen     map[Match]bool
	decision Decision
}

// NewStreamScanner returns a scanner that checks output with p in the
// output direction. holdBack < 1 means DefaultHoldBack.
func NewStreamScanner(p Policy, holdBack int) *StreamScanner {
	if holdBack < 1 {
		holdBack = DefaultHoldBack
	}
	return &StreamScanner{policy: p, holdBack: holdBack, seen: map[Match]bool{}}
}

// Next adds a chunk of output and returns the text now safe to send. It
// reports blocked once the policy has blocked; the text returned by that call
// is the refusal.
func (s *StreamScanner) Next(ctx context.Context, chunk string) (safe string, blocked bool) {
	if s.blocked || s.closed {
		return "", s.blocked
	}
	s.pending += chunk
	if s.scan(ctx) {
		return s.decision.Message, true
	}
	cut := cutBeforeLastRunes(s.pending, s.holdBack)
	safe = s.pending[:cut]
	s.pending = s.pending[cut:]
	s.sent = lastRunes(s.sent+safe, s.holdBack)
	return safe, false
}

// Close scans what is still held back and returns it, or the refusal. Later
// calls return "".
func (s *StreamScanner) Close(ctx context.Context) (safe string, blocked bool) {
	if s.blocked || s.closed {
		return "", s.blocked
	}
	s.closed = true
	if s.pending == "" {
		return "", false
	}
	if s.scan(ctx) {
		return s.decision.Message, true
	}
	safe, s.pending = s.pending, ""
	return safe, false
}

// Decision returns the strongest verdict so far, with each distinct match
// once (the overlapping scans see a match more than once).
func (s *StreamScanner) Decision() Decision {
	d := s.decision
	d.Matches = append([]Match(nil), s.matches...)
	return d
}

// scan checks the recently sent context plus the pending text and reports
// whether the policy blocked.
func (s *StreamScanner) scan(ctx context.Context) bool {
	d := s.policy.Check(ctx, Input{
		Direction: DirectionOutput,
		Messages:  []Message{{Role: RoleAssistant, Text: s.sent + s.pending}},
	})
	for _, m := range d.Matches {
		if !s.seen[m] {
			s.seen[m] = true
			s.matches = append(s.matches, m)
		}
	}
	if d.Action > s.decision.Action {
		s.decision.Action = d.Action
	}
	if d.Action == Block {
		s.blocked = true
		s.pending = ""
		s.decision.Message = d.Message
		if s.decision.Message == "" {
			s.decision.Message = DefaultBlockMessage
		}
		return true
	}
	return false
}

// cutBeforeLastRunes returns the byte offset in s before its last n runes,
// moved back to a rune start so a multi-byte rune split across chunks is
// never sent in part. An incomplete trailing sequence counts its bytes as
// runes, which only holds back more.
func cutBeforeLastRunes(s string, n int) int {
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// lastRunes returns the suffix of s holding its last n runes.
func lastRunes(s string, n int) string {
	return strings.Clone(s[cutBeforeLastRunes(s, n):])
}
