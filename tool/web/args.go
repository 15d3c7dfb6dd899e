package web

import (
	"strings"
	"unicode/utf8"
)

// cut returns s shortened to at most max bytes without splitting a rune,
// and whether it was shortened.
func cut(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], true
}

// oneLine collapses the white space of s (line breaks included) into
// single spaces, for snippets and titles.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
