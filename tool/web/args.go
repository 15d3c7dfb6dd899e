package web

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/agentcraftlab/agentcraft/tool"
)

// decodeArgs validates args against schema (tool.CheckArguments: bounded,
// repaired, every field checked) and decodes them into dst; ok == false
// comes with the error Result for the model, ending with example.
func decodeArgs(schema, example string, args json.RawMessage, dst any) (tool.Result, bool) {
	text, res, ok := tool.CheckArguments(json.RawMessage(schema), args)
	if !ok {
		res.Content += " Example: " + example
		return res, false
	}
	if err := json.Unmarshal(text, dst); err != nil {
		return tool.ErrorResult("invalid arguments: %v. Example: %s", err, example), false
	}
	return tool.Result{}, true
}

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
