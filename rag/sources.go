package rag

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentcraftlab/agentcraft/search"
)

// Citation is one passage given to a model, numbered as the model saw it.
type Citation struct {
	// N is the number the model cites, [N], from 1.
	N int `json:"n"`
	// KB is the knowledge base the passage came from.
	KB string `json:"kb,omitempty"`
	// Source is the document's name, such as "handbook.pdf".
	Source string `json:"source"`
	// Page is the 1-based page, 0 when unknown.
	Page int `json:"page,omitempty"`
	// Heading is the nearest heading above the passage, when known.
	Heading string `json:"heading,omitempty"`
	// Start and End are the passage's byte offsets in the document's text.
	Start int `json:"start"`
	End   int `json:"end"`
	// Score ranks the passage within its result (higher is better).
	Score float64 `json:"score"`
	// Text is the passage as retrieved.
	Text string `json:"text"`
}

// Cite numbers hits from 1 as citations. kbs are the bases searched: a
// hit without the "kb" metadata key of a multi-base search belongs to the
// only base searched, or else is named by its index.
func Cite(hits []search.Hit, kbs []string) []Citation {
	cites := make([]Citation, 0, len(hits))
	for i, h := range hits {
		md := h.Metadata
		c := Citation{N: i + 1, KB: md["kb"], Source: md["source"], Heading: md["heading"], Score: h.Score, Text: h.Text}
		if c.KB == "" {
			c.KB = h.Index
			if len(kbs) == 1 {
				c.KB = kbs[0]
			}
		}
		if c.Source == "" {
			c.Source = h.Title
		}
		if c.Source == "" {
			c.Source = h.ID
		}
		c.Page, _ = strconv.Atoi(md["page"])
		c.Start, _ = strconv.Atoi(md["start"])
		c.End, _ = strconv.Atoi(md["end"])
		cites = append(cites, c)
	}
	return cites
}

// Label names the citation's place for a reader: the source, then the
// page and heading when known, such as `handbook.pdf, p. 3, § Refunds`. It
// is one line with bracketed numbers neutralized (see Sources).
func (c Citation) Label() string {
	var b strings.Builder
	b.WriteString(oneLine(cut(c.Source, maxLabelChars)))
	if c.Page > 0 {
		b.WriteString(", p. ")
		b.WriteString(strconv.Itoa(c.Page))
	}
	if h := oneLine(cut(c.Heading, maxLabelChars)); h != "" {
		b.WriteString(", § ")
		b.WriteString(h)
	}
	return b.String()
}

// maxLabelChars bounds a source name or heading in a label.
const maxLabelChars = 120

// minPassageChars is the shortest cut-down passage worth sending: shorter
// tails are left out rather than given as a fragment.
const minPassageChars = 200

// Sources formats res as the numbered source list a prompt embeds, one line
// per passage, best first:
//
//	[1] handbook.pdf, p. 3 — Refunds are paid within 14 days …
//	[2] faq.md, § Returns — …
//
// The list is at most maxChars characters (no bound when maxChars <= 0):
// the passage that crosses the bound is cut short and marked with "…", or
// left out when less than 200 characters of it would fit, and the passages
// after it are left out. It returns the list and the citations it holds.
//
// Passage text is untrusted (anyone who can upload a file writes it), so
// it cannot forge a source: line breaks and other control characters
// become spaces, keeping each passage on its own numbered line, and
// bracketed numbers such as "[2]" become "(2)", so the model never
// mistakes them for citation markers.
func Sources(res search.Result, kbs []string, maxChars int) (string, []Citation) {
	cites := Cite(res.Hits, kbs)
	var b strings.Builder
	used := 0
	for i, c := range cites {
		head := "[" + strconv.Itoa(c.N) + "] " + c.Label() + " — "
		body := oneLine(c.Text)
		sep := 0
		if i > 0 {
			sep = 1
		}
		n := sep + runes(head) + runes(body)
		if maxChars <= 0 || used+n <= maxChars {
			if sep > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(head)
			b.WriteString(body)
			used += n
			continue
		}
		room := maxChars - used - sep - runes(head) - 1 // 1 for the ellipsis
		if room >= minPassageChars || (i == 0 && room > 0) {
			if sep > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(head)
			b.WriteString(strings.TrimRightFunc(cut(body, room), unicode.IsSpace))
			b.WriteString("…")
			i++
		}
		return b.String(), cites[:i]
	}
	return b.String(), cites
}

// oneLine returns s with every run of white space and control characters
// (line and paragraph separators included) as one space, bracketed numbers
// "[n]" (ASCII or full-width brackets and digits) as "(n)", invalid UTF-8
// as U+FFFD, and no leading or trailing space.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	var b strings.Builder
	b.Grow(len(s))
	// s[plain:i] is text to copy as is; it is written in one piece when a
	// character needs rewriting.
	plain := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf && c > ' ' && c != 0x7f && c != '[' {
			i++
			continue
		}
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		blank := r <= ' ' || r == 0x7f || unicode.IsSpace(r) || unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
		var digits string
		n := 0
		if r == '[' || r == '［' {
			digits, n = bracketNumber(s[i+size:])
		}
		valid := r != utf8.RuneError || size > 1
		if !blank && n == 0 && valid {
			i += size
			continue
		}
		b.WriteString(s[plain:i])
		switch {
		case blank:
			j := i + size
			for j < len(s) {
				r, sz := utf8.DecodeRuneInString(s[j:])
				if !(unicode.IsSpace(r) || unicode.IsControl(r) || r == '\u2028' || r == '\u2029') {
					break
				}
				j += sz
			}
			b.WriteByte(' ')
			i = j
		case n > 0:
			b.WriteByte('(')
			b.WriteString(digits)
			b.WriteByte(')')
			i += size + n
		default:
			b.WriteRune(utf8.RuneError)
			i += size
		}
		plain = i
	}
	b.WriteString(s[plain:])
	return b.String()
}

// bracketNumber reports whether s starts with digits and a closing bracket,
// returning the digits and the bytes they and the bracket take.
func bracketNumber(s string) (string, int) {
	j := 0
	for j < len(s) {
		r, size := utf8.DecodeRuneInString(s[j:])
		if !(r >= '0' && r <= '9' || r >= '０' && r <= '９') {
			break
		}
		j += size
	}
	if j == 0 || j == len(s) {
		return "", 0
	}
	r, size := utf8.DecodeRuneInString(s[j:])
	if r != ']' && r != '］' {
		return "", 0
	}
	return s[:j], j + size
}
