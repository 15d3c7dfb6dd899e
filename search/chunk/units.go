package chunk

import (
	"unicode"
	"unicode/utf8"
)

// runesPerUnit is how many letters of a word make one unit. See the package
// comment for why three.
const runesPerUnit = 3

// Units reports the size of text in the unit that Options.Size and
// Options.Overlap are measured in: one per CJK character and one per started
// three characters of every other word. Whitespace is free.
func Units(text string) int {
	sc := scanner{text: text, end: len(text), maxRunes: len(text) + 1, first: true}
	for {
		if _, ok := sc.next(); !ok {
			return sc.cum
		}
	}
}

// Break priorities of the boundary before an atom: a chunk preferably ends
// before an atom with a higher priority.
const (
	prioInside    int8 = iota // inside a word longer than Size units
	prioWord                  // between words, or next to a CJK character
	prioClause                // after , ; : 、，；：
	prioSentence              // after . ! ? 。！？ or at a line break
	prioParagraph             // at a blank line
	prioHeading               // before a Markdown heading line ("# ...")
)

// atom is the smallest piece a chunk is made of: a CJK character, a word
// (a run of other non-space characters) or a piece of a word longer than
// Size units. Chunks start at an atom's start and end at an atom's end, so
// they never begin or end with whitespace and never split a rune.
type atom struct {
	start, end int  // byte offsets in the document text
	cost       int  // units
	cum        int  // units of the segment up to and including this atom
	prio       int8 // break priority of the boundary before the atom
}

// scanner cuts text[pos:end] into atoms, one call of next at a time, so
// that splitting a large document needs memory for one chunk window only.
type scanner struct {
	text     string
	pos, end int
	maxRunes int // longest word piece: Size units' worth of runes

	cum         int  // units so far
	first       bool // no atom returned yet
	prevCJK     bool // the previous atom was a CJK character
	sentenceEnd bool // the previous atoms ended a sentence
	clauseEnd   bool // the previous atoms ended a clause
}

// next returns the next atom, or false at the end of the text.
func (sc *scanner) next() (atom, bool) {
	// Skip whitespace, keeping the first rune after it decoded.
	var (
		newlines int
		space    bool
		r        rune
		w        int
	)
	for {
		if sc.pos >= sc.end {
			return atom{}, false
		}
		if c := sc.text[sc.pos]; c < utf8.RuneSelf {
			r, w = rune(c), 1
			if !isASCIISpace(c) {
				break
			}
		} else {
			r, w = utf8.DecodeRuneInString(sc.text[sc.pos:sc.end])
			if !unicode.IsSpace(r) {
				break
			}
		}
		if r == '\n' || r == '\u0085' || r == '\u2028' || r == '\u2029' {
			newlines++
		}
		space = true
		sc.pos += w
	}

	a := atom{start: sc.pos}
	// last is the atom's last rune that is not a closing quote or bracket,
	// for sentence and clause ends: `done."` and 「行く。」 both end one.
	last, hasLast := r, !isCloser(r)
	cjk := isCJK(r)
	if cjk {
		sc.pos += w
		a.cost = 1
	} else {
		n := 0
		for sc.pos < sc.end && n < sc.maxRunes {
			if c := sc.text[sc.pos]; c < utf8.RuneSelf {
				r, w = rune(c), 1
				if isASCIISpace(c) {
					break
				}
			} else {
				r, w = utf8.DecodeRuneInString(sc.text[sc.pos:sc.end])
				if unicode.IsSpace(r) || isCJK(r) {
					break
				}
			}
			if !isCloser(r) {
				last, hasLast = r, true
			}
			sc.pos += w
			n++
		}
		a.cost = (n + runesPerUnit - 1) / runesPerUnit
	}
	a.end = sc.pos

	switch {
	case sc.first:
		a.prio = prioHeading
	case newlines > 0 && isHeadingMark(sc.text[a.start:a.end], sc.text[a.end:sc.end]):
		a.prio = prioHeading
	case newlines > 1:
		a.prio = prioParagraph
	case newlines > 0 || sc.sentenceEnd:
		a.prio = prioSentence
	case !space && !cjk && !sc.prevCJK:
		a.prio = prioInside // the previous atom was a piece of this word
	case sc.clauseEnd:
		a.prio = prioClause
	default:
		a.prio = prioWord
	}

	// An atom of closers only (」 after 。) keeps the state it follows.
	if hasLast {
		sc.sentenceEnd = isTerminator(last)
		sc.clauseEnd = isClauseMark(last)
	}
	sc.prevCJK = cjk
	sc.first = false
	sc.cum += a.cost
	a.cum = sc.cum
	return a, true
}

func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// isCJK reports whether r is written without spaces between words and so
// counts one unit on its own: Han, Hiragana, Katakana, Hangul, Bopomofo, the
// CJK punctuation block (。「」) and the half- and full-width forms.
func isCJK(r rune) bool {
	switch {
	case r < 0x2E80:
		return false
	case r >= 0x4E00 && r <= 0x9FFF, // common Han, checked first for speed
		r >= 0xAC00 && r <= 0xD7A3: // Hangul syllables
		return true
	case r >= 0x3000 && r <= 0x30FF, // CJK symbols and punctuation, kana (with ー)
		r >= 0xFF00 && r <= 0xFFEF: // half-width and full-width forms
		return !unicode.IsSpace(r)
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Bopomofo)
}

// isHeadingMark reports whether word, at the start of a line and followed
// by rest, opens a Markdown ATX heading ("## Title").
func isHeadingMark(word, rest string) bool {
	if len(word) == 0 || len(word) > 6 {
		return false
	}
	for i := 0; i < len(word); i++ {
		if word[i] != '#' {
			return false
		}
	}
	return rest == "" || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\n' || rest[0] == '\r'
}

func isCloser(r rune) bool {
	switch r {
	case '"', '\'', ')', ']', '}', '”', '’', '»', '」', '』', '）', '］', '｝', '〕', '〉', '》', '】', '｣':
		return true
	}
	return false
}

func isClauseMark(r rune) bool {
	switch r {
	case ',', ';', ':', '、', '，', '；', '：', '､':
		return true
	}
	return false
}

func isTerminator(r rune) bool {
	switch r {
	case '.', '!', '?', '。', '！', '？', '｡', '．':
		return true
	}
	return false
}
