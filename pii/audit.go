package pii

import (
	"slices"
	"strconv"
	"strings"
)

// AuditLine summarises entities for a log or audit trail without any value:
//
//	[PII] direction=input entities=[Global.Email:1, TW.Phone:1] count=2
//
// Rules are listed in lexical order with how often each matched. direction
// is normally "input" (prompt) or "output" (reply); bytes outside
// [a-z0-9_-] are replaced by '_' so the line cannot be forged.
func AuditLine(direction string, ents []Entity) string {
	counts := map[string]int{}
	for _, e := range ents {
		counts[e.Rule]++
	}
	rules := make([]string, 0, len(counts))
	for r := range counts {
		rules = append(rules, r)
	}
	slices.Sort(rules)
	var b strings.Builder
	b.WriteString("[PII] direction=")
	b.WriteString(sanitize(direction, "abcdefghijklmnopqrstuvwxyz0123456789_-"))
	b.WriteString(" entities=[")
	for i, r := range rules {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(sanitize(r, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."))
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(counts[r]))
	}
	b.WriteString("] count=")
	b.WriteString(strconv.Itoa(len(ents)))
	return b.String()
}

func sanitize(s, allowed string) string {
	b := []byte(s)
	for i, c := range b {
		if strings.IndexByte(allowed, c) < 0 {
			b[i] = '_'
		}
	}
	return string(b)
}
