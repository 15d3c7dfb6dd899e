package guard

import (
	"regexp"
	"testing"
)

// prefilterPatterns are user-rule patterns that exercise the prefilter's
// corner cases: case folding with non-ASCII orbits (k, s), classes, white
// space and the replacement character.
var prefilterPatterns = []string{
	`(?i)api[_-]?key\s*[:=]`, `(?i)\bsk-[a-z0-9]{20,}`, `\b\d{3}-\d{2}-\d{4}\b`, `\b4\d{3}(?:[ -]?\d{4}){3}\b`,
	`[\w.+-]+@corp\.example\b`, `(?i)\bpass(word)?\b`, `(?i)kelvin|strasse`, `(?i)system prompt`, `(?i)ＡＢＣ`,
	`a\x{FFFD}b`, `[\x{FFFD}x]y`, `(?i)(?:秘密|secret)s?`, `password|(?:top )+secret`, `x{2,}yz`, `(?:ab|cd)?ef`,
}

// checkPrefilter fails if re matches text but its prefilter ruled it out.
func checkPrefilter(t *testing.T, re *regexp.Regexp, pre prefilter, text string) {
	t.Helper()
	if re.MatchString(text) && !pre.mayMatch(text, fold(text).text) {
		t.Fatalf("prefilter for %q skips %q, which matches", re, text)
	}
}

func TestPrefilter(t *testing.T) {
	for _, tt := range []struct {
		pattern, text string
		skip          bool
	}{
		{`(?i)api[_-]?key\s*[:=]`, "API_KEY = x", false},
		{`(?i)api[_-]?key\s*[:=]`, "no credentials here", true},
		{`(?i)api[_-]?key\s*[:=]`, "AP\u200bI-\u212Aey: x", false}, // folding joins "api": the regex runs (and fails)
		{`(?i)key`, "\u212Aey", false},                             // Kelvin sign folds to k
		{`(?i)\bsk-[a-z0-9]{20,}`, "\u017Fk-abcdefghijklmnopqrstu", false},
		{`[\w.+-]+@corp\.example\b`, "bob@corp.example", false},
		{`[\w.+-]+@corp\.example\b`, "bob@CORP.example", true},
		{`a\x{FFFD}b`, "a\xffb", false},
		{`\b\d{3}-\d{2}-\d{4}\b`, "call me maybe", true},
	} {
		re := regexp.MustCompile(tt.pattern)
		pre := newPrefilter(tt.pattern)
		if got := !pre.mayMatch(tt.text, fold(tt.text).text); got != tt.skip {
			t.Errorf("%q on %q: skip = %v, want %v", tt.pattern, tt.text, got, tt.skip)
		}
		checkPrefilter(t, re, pre, tt.text)
	}
}

// FuzzPrefilter checks that a prefilter never skips a regex that matches,
// for user patterns (original and folded text) and the injection patterns
// (one folded sentence).
func FuzzPrefilter(f *testing.F) {
	for _, c := range loadInjectionCases(f) {
		f.Add(c.Text)
	}
	f.Add("API_KEY: 1234 sk-ABCDEFGHIJKLMNOPQRSTUV 123-45-6789 4111 1111 1111 1111 x@corp.example")
	f.Add("\u212Aey \u017Fk- a\xffb ＰＡＳＳ")
	type compiled struct {
		re  *regexp.Regexp
		pre prefilter
	}
	var user []compiled
	for _, p := range prefilterPatterns {
		user = append(user, compiled{regexp.MustCompile(p), newPrefilter(p)})
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, c := range user {
			checkPrefilter(t, c.re, c.pre, text)
		}
		folded := fold(text).text
		for _, s := range sentences(folded) {
			sent := folded[s[0]:s[1]]
			for _, p := range injectionPatterns {
				if cp := p.compiled(); cp.re.MatchString(sent) && !cp.pre.mayMatch(sent, sent) {
					t.Fatalf("prefilter for %q skips %q, which matches", cp.re, sent)
				}
			}
		}
	})
}
