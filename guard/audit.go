package guard

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// AuditLine formats one match as an audit line:
//
//	[GUARD] direction=input action=block rule="no-weapons" kind=keyword match_len=12
//
// The matched text itself never appears: a rule may match a secret (an API
// key, a password) or personal data, and an audit trail must not become a
// copy of it. match_len is its length in runes (at most MaxMatchRunes).
// The rule is Go-quoted, so a newline or quote in its name cannot forge a
// second line.
func AuditLine(dir Direction, m Match) string {
	var b strings.Builder
	b.WriteString("[GUARD] direction=")
	b.WriteString(dir.String())
	b.WriteString(" action=")
	b.WriteString(m.Action.String())
	b.WriteString(" rule=")
	b.WriteString(strconv.Quote(m.Rule))
	if m.Kind != "" {
		b.WriteString(" kind=")
		b.WriteString(string(m.Kind))
	}
	b.WriteString(" match_len=")
	b.WriteString(strconv.Itoa(m.Len()))
	return b.String()
}

// Len is the length of the matched text in runes: what audit trails record
// instead of the text.
func (m Match) Len() int { return utf8.RuneCountInString(m.Match) }

// WriteAudit writes one audit line per match to w. A decision without
// matches writes nothing.
func (d Decision) WriteAudit(w io.Writer, dir Direction) error {
	for _, m := range d.Matches {
		if _, err := io.WriteString(w, AuditLine(dir, m)+"\n"); err != nil {
			return fmt.Errorf("guard: write audit: %w", err)
		}
	}
	return nil
}
