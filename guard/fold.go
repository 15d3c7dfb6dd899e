package guard

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// folded is a message normalised for matching, with a map back to the
// original text so matches can be reported as the user wrote them.
type folded struct {
	orig string
	text string
	// off[i] is the byte offset in orig of the rune that produced byte i of
	// text; off[len(text)] is len(orig).
	off []int32
}

// fold normalises s for substring matching. It must never make two
// different scripts' text collide, so it only:
//   - lower-cases with unicode.ToLower (simple, one-rune folding; Latin,
//     Greek and Cyrillic letters fold, CJK is unchanged);
//   - narrows full-width ASCII (Ｉｇｎｏｒｅ) and the ideographic space, which
//     CJK keyboards produce and attackers use to dodge ASCII keywords;
//   - drops zero-width characters and the soft hyphen, which are invisible
//     and otherwise split a keyword in two;
//   - collapses each run of white space to one space, or to one newline when
//     the run holds a newline (line starts matter to some patterns).
//
// It does not apply Unicode normalisation (NFKC) or word segmentation: a
// keyword matches wherever its folded form occurs, inside words too.
func fold(s string) folded {
	out := make([]byte, 0, len(s))
	off := make([]int32, 0, len(s)+1)
	lastSpace := false
	for i := 0; i < len(s); {
		// ASCII fast path: most text, and most of the cost of a check.
		if c := s[i]; c < utf8.RuneSelf {
			switch {
			case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
				if lastSpace {
					if c == '\n' {
						out[len(out)-1] = '\n'
					}
					i++
					continue
				}
				if c != '\n' {
					c = ' '
				}
				lastSpace = true
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
				lastSpace = false
			default:
				lastSpace = false
			}
			out = append(out, c)
			off = append(off, int32(i))
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r >= 0x3040 && r < 0xa000 {
			// Kana and CJK ideographs: no case, no space, nothing to
			// drop; copied as they are (most of a Japanese or Chinese
			// message, and the cost of unicode.ToLower's table search).
			lastSpace = false
			out = append(out, s[i:i+size]...)
			for range size {
				off = append(off, int32(i))
			}
			i += size
			continue
		}
		switch {
		case r == '\u200b' || r == '\u200c' || r == '\u200d' || r == '\u2060' || r == '\ufeff' || r == '\u00ad':
			i += size
			continue
		case r >= 0xff01 && r <= 0xff5e:
			r -= 0xfee0
		case r == '\u3000':
			r = ' '
		}
		if unicode.IsSpace(r) {
			if lastSpace {
				// One separator per run; a newline anywhere in the run wins.
				if r == '\n' {
					out[len(out)-1] = '\n'
				}
				i += size
				continue
			}
			if r != '\n' {
				r = ' '
			}
			lastSpace = true
		} else {
			lastSpace = false
			r = unicode.ToLower(r)
		}
		n := len(out)
		out = utf8.AppendRune(out, r)
		for range len(out) - n {
			off = append(off, int32(i))
		}
		i += size
	}
	off = append(off, int32(len(s)))
	return folded{orig: s, text: string(out), off: off}
}

// original returns the original text of text[start:end], trimmed of the
// space that folding collapsed and cut to MaxMatchRunes runes.
func (f folded) original(start, end int) string {
	return truncate(strings.TrimSpace(f.orig[f.off[start]:f.off[end]]))
}

// foldString returns only the folded text of s.
func foldString(s string) string { return fold(s).text }

// truncate cuts s to MaxMatchRunes runes, marking the cut with an ellipsis.
func truncate(s string) string {
	n := 0
	for i := range s {
		if n == MaxMatchRunes {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
