package guard

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// AuditLine formats one match as an audit line:
//
//	[GUARD] direction=input action=block rule="no-weapons" match="build a bomb"
//
// The rule and the matched text are Go-quoted, so a newline or quote in the
// user's text cannot forge a second line; printable non-ASCII text (Chinese,
// Japanese) stays readable.
func AuditLine(dir Direction, m Match) string {
	var b strings.Builder
	b.WriteString("[GUARD] direction=")
	b.WriteString(dir.String())
	b.WriteString(" action=")
	b.WriteString(m.Action.String())
	b.WriteString(" rule=")
	b.WriteString(strconv.Quote(m.Rule))
	b.WriteString(" match=")
	b.WriteString(strconv.Quote(m.Match))
	return b.String()
}

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
