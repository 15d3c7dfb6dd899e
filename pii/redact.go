package pii

import (
	"regexp"
	"sync"
)

// redactThreshold is far below DefaultThreshold: a log line or an audit
// record would rather mask a harmless number than keep a value that lacked
// the context words which make the detector sure.
const redactThreshold = 0.01

var redactor = sync.OnceValue(func() *Masker {
	det, err := New(&Options{Threshold: redactThreshold})
	if err != nil {
		panic("pii: build redaction detector: " + err.Error()) // constant options; cannot fail
	}
	m, err := NewMasker(det, &MaskerOptions{Mode: Irreversible})
	if err != nil {
		panic("pii: build redaction masker: " + err.Error())
	}
	return m
})

// digitRun is seven or more digits, possibly split by spaces, dashes, dots
// or slashes: what is left of a number the detector no longer recognises,
// such as a card number cut short by a match excerpt, whose check digit is
// gone.
var digitRun = regexp.MustCompile(`[0-9](?:[ \-./]?[0-9]){6,}`)

// Redact returns s with personal data replaced by Redacted: every entity of
// every locale at a low threshold, then every remaining run of seven or
// more digits. It is for text headed to logs and audit records, such as
// the excerpt a guard rule matched, where no value may survive.
func Redact(s string) string {
	if s == "" {
		return s
	}
	masked, _ := redactor().Mask(s)
	return digitRun.ReplaceAllLiteralString(masked, Redacted)
}
