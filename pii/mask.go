package pii

import (
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
)

// Mode says whether masking can be undone.
type Mode int

const (
	// Reversible replaces values with typed tokens ("[EMAIL_1]") kept in the
	// vault, so Restore can put them back.
	Reversible Mode = iota
	// Irreversible replaces values with "***" and stores nothing.
	Irreversible
)

// Redacted replaces values in Irreversible mode.
const Redacted = "***"

// maxTokenLen bounds a token's length. Restore and StreamRestorer use the
// same bound, so a stream never holds back more than this many bytes.
const maxTokenLen = 64

// MaskerOptions configures a Masker.
type MaskerOptions struct {
	// Mode is Reversible (the default) or Irreversible.
	Mode Mode
	// Vault stores the tokens of one conversation. Default: a new Vault.
	Vault TokenVault
}

// Masker masks the personal data a Detector finds. Use one Masker per
// conversation: its vault numbers tokens per conversation. It is safe for
// concurrent use if its vault is.
type Masker struct {
	det   Detector
	vault TokenVault
	mode  Mode
}

// NewMasker returns a Masker using d. nil options mean defaults.
func NewMasker(d Detector, opts *MaskerOptions) (*Masker, error) {
	if d == nil {
		return nil, errors.New("pii: new masker: Detector is nil; pass a *Scanner from pii.New")
	}
	var o MaskerOptions
	if opts != nil {
		o = *opts
	}
	if o.Mode != Reversible && o.Mode != Irreversible {
		return nil, errors.New("pii: new masker: options: Mode must be Reversible or Irreversible")
	}
	if o.Vault == nil {
		o.Vault = NewVault()
	}
	return &Masker{det: d, vault: o.Vault, mode: o.Mode}, nil
}

// Vault returns the masker's vault, for a StreamRestorer.
func (m *Masker) Vault() TokenVault { return m.vault }

// Mask replaces every entity the detector finds and returns the masked text
// with the entities (offsets into text, not into the result).
func (m *Masker) Mask(text string) (string, []Entity) {
	ents := m.det.Scan(text)
	if len(ents) == 0 {
		return text, nil
	}
	var b strings.Builder
	b.Grow(len(text))
	last := 0
	for _, e := range ents {
		// A Detector from elsewhere may break its contract; never panic on it.
		if e.Start < last || e.End > len(text) || e.Start >= e.End {
			continue
		}
		b.WriteString(text[last:e.Start])
		if m.mode == Irreversible {
			b.WriteString(Redacted)
		} else {
			b.WriteString(m.vault.Token(tokenType(e.Type), text[e.Start:e.End]))
		}
		last = e.End
	}
	b.WriteString(text[last:])
	return b.String(), ents
}

// Restore puts the values of the masker's tokens back into text.
func (m *Masker) Restore(text string) string { return Restore(m.vault, text) }

// tokenType makes typ safe for the token grammar: upper-case letters,
// digits and '_', starting with a letter, short enough for maxTokenLen.
func tokenType(typ string) string {
	b := []byte(strings.ToUpper(typ))
	for i, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] < 'A' || b[0] > 'Z' {
		b = append([]byte("PII_"), b...)
	}
	if len(b) > 40 {
		b = b[:40]
	}
	return string(b)
}

// Restore replaces every token of v found in text by its value. Text that
// looks like a token but is not in v is left alone.
func Restore(v TokenVault, text string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], '[')
		if j < 0 {
			break
		}
		i += j
		n := tokenAt(text[i:])
		if n == 0 {
			i++
			continue
		}
		if val, ok := v.Value(text[i : i+n]); ok {
			if b.Len() == 0 {
				b.Grow(len(text))
			}
			b.WriteString(text[last:i])
			b.WriteString(val)
			last = i + n
		}
		i += n
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

func isTokenByte(c byte) bool { return c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' }

// tokenAt returns the length of the token-shaped text at the start of s
// ('[' upper-case letter, [A-Z0-9_]*, ']', at most maxTokenLen bytes), or 0.
func tokenAt(s string) int {
	if len(s) < 3 || s[0] != '[' || s[1] < 'A' || s[1] > 'Z' {
		return 0
	}
	for i := 2; i < len(s) && i < maxTokenLen; i++ {
		switch c := s[i]; {
		case c == ']':
			return i + 1
		case !isTokenByte(c):
			return 0
		}
	}
	return 0
}

// partialToken reports whether s could be the beginning of a token but is
// not a whole one: more bytes might complete it.
func partialToken(s string) bool {
	if len(s) == 0 || len(s) >= maxTokenLen || s[0] != '[' {
		return false
	}
	if len(s) > 1 && (s[1] < 'A' || s[1] > 'Z') {
		return false
	}
	for i := 2; i < len(s); i++ {
		if !isTokenByte(s[i]) {
			return false
		}
	}
	return true
}

// StreamRestorer restores tokens in a reply that arrives in chunks. A token
// split across chunks ("[EMA" + "IL_1]") is held back until it is complete;
// any other text is emitted at once. It is not safe for concurrent use.
type StreamRestorer struct {
	vault   TokenVault
	pending string // a possible token prefix held back from the last Write
}

// NewStreamRestorer returns a StreamRestorer reading tokens from v.
func NewStreamRestorer(v TokenVault) *StreamRestorer { return &StreamRestorer{vault: v} }

// Write takes the next chunk and returns the restored text that is now
// certain.
func (r *StreamRestorer) Write(chunk string) string {
	buf := r.pending + chunk
	r.pending = ""
	// Only the last '[' can open a partial token: a token holds one '['.
	if i := strings.LastIndexByte(buf, '['); i >= 0 && partialToken(buf[i:]) {
		r.pending = buf[i:]
		buf = buf[:i]
	}
	return Restore(r.vault, buf)
}

// Flush returns whatever is held back, restored where possible; call it when
// the stream ends.
func (r *StreamRestorer) Flush() string {
	out := Restore(r.vault, r.pending)
	r.pending = ""
	return out
}

// Vault is the in-memory TokenVault, for one conversation.
type Vault struct {
	mu      sync.Mutex
	byValue map[string]string // guarded by mu; value → token
	byToken map[string]string // guarded by mu; token → value
	next    map[string]int    // guarded by mu; type → last number used
}

// NewVault returns an empty Vault.
func NewVault() *Vault {
	return &Vault{byValue: map[string]string{}, byToken: map[string]string{}, next: map[string]int{}}
}

// Token implements TokenVault.
func (v *Vault) Token(typ, value string) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	if t, ok := v.byValue[value]; ok {
		return t
	}
	typ = tokenType(typ)
	v.next[typ]++
	t := "[" + typ + "_" + strconv.Itoa(v.next[typ]) + "]"
	v.byValue[value] = t
	v.byToken[t] = value
	return t
}

// Value implements TokenVault.
func (v *Vault) Value(token string) (string, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	val, ok := v.byToken[token]
	return val, ok
}

// LogValue keeps the values out of logs: a logged Vault shows only its size.
func (v *Vault) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("values", v.Len()))
}

// String keeps the values out of fmt output, for the same reason.
func (v *Vault) String() string { return "pii.Vault{values: " + strconv.Itoa(v.Len()) + "}" }

// GoString keeps the values out of %#v.
func (v *Vault) GoString() string { return v.String() }

// Len returns how many values the vault holds.
func (v *Vault) Len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.byValue)
}
