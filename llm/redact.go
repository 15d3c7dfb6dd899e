package llm

import (
	"regexp"
	"strings"
)

// Redacted replaces what RedactSecrets removes.
const Redacted = "[redacted]"

// secretPatterns find key-like strings in text an upstream sent back. A
// provider's 401 often quotes the key it was given ("Incorrect API key
// provided: sk-proj-…abcd"), and a proxy's error page may echo the
// Authorization header; such text reaches chat users and logs through
// Error.Error. Each runs only when its marker is in the text (most error
// texts hold none), which keeps the cost on every Error call small.
var secretPatterns = []struct {
	marker string // lower case; the pattern can only match text holding it
	re     *regexp.Regexp
}{
	// OpenAI (sk-, sk-proj-), Anthropic (sk-ant-) and the many
	// OpenAI-compatible servers that copy the prefix; * covers the masked
	// echoes providers print (sk-proj-****abcd).
	{"sk-", regexp.MustCompile(`\bsk-[A-Za-z0-9_*\-]{4,}`)},
	// Google API keys.
	{"aiza", regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{20,}`)},
	// A bearer token after the scheme name.
	{"bearer", regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{4,}`)},
}

// Lengths from which a run of token characters is taken for a secret:
// hex (key ids, hashes, tokens) and base64 or base64url that mixes
// letters and digits, so long plain words stay.
const (
	minHexRun    = 32
	minBase64Run = 40
)

// RedactSecrets returns s with key-like strings replaced by [redacted]:
// sk-… and sk-ant-… keys, Google API keys, bearer tokens, hex runs of 32
// and more and base64-like runs of 40 and more that mix letters and
// digits. It is for text from outside (upstream error bodies), which may
// quote a credential; it does not know every format, so it is a second
// line of defence, not a reason to put keys in errors.
func RedactSecrets(s string) string {
	lower := strings.ToLower(s)
	for _, p := range secretPatterns {
		if !strings.Contains(lower, p.marker) {
			continue
		}
		s = p.re.ReplaceAllStringFunc(s, func(m string) string {
			if strings.HasPrefix(strings.ToLower(m), "bearer") {
				return m[:len("bearer")] + " " + Redacted
			}
			return Redacted
		})
	}
	return redactRuns(s)
}

// redactRuns replaces long runs of base64 characters that look like
// secrets (see minHexRun, minBase64Run).
func redactRuns(s string) string {
	var b strings.Builder
	last := 0 // s[last:] is not written yet
	for i := 0; i < len(s); {
		if !isTokenByte(s[i]) {
			i++
			continue
		}
		j := i
		hex, letter, digit := true, false, false
		for j < len(s) && isTokenByte(s[j]) {
			c := s[j]
			switch {
			case c >= '0' && c <= '9':
				digit = true
			case c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
				letter = true
			case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
				letter, hex = true, false
			default:
				hex = false
			}
			j++
		}
		end := j
		for end < len(s) && end-j < 2 && s[end] == '=' {
			end++
		}
		n := j - i
		if hex && n >= minHexRun || n >= minBase64Run && letter && digit {
			if b.Len() == 0 {
				b.Grow(len(s))
			}
			b.WriteString(s[last:i])
			b.WriteString(Redacted)
			last = end
		}
		i = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isTokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '_' || c == '-'
}
