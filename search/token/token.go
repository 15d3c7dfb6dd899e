// Package token turns text into index terms for full-text search, choosing
// the method per text by script:
//
//   - Japanese (the text contains Hiragana or Katakana): runs of Han and kana
//     are segmented by kagome with the IPA dictionary in search mode and
//     also split into character bigrams (JapaneseMode selects either or
//     both). The dictionary is loaded once, on the first Japanese text.
//   - Chinese (Han without kana) and Korean (Hangul): overlapping character
//     bigrams; a run of one character is kept as a unigram.
//   - Everything else: runs of letters and digits (an apostrophe between
//     letters and a '.' or ',' between digits stay inside the word),
//     lower-cased, English stopwords removed and Snowball English (Porter2)
//     stemming applied unless disabled.
//
// Text that contains non-ASCII characters is NFKC-normalised first, so
// full-width Latin letters and half-width katakana match their usual forms.
// Queries must go through the same Tokenizer as the documents.
package token

import (
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/ikawaha/kagome-dict/ipa"
	kagome "github.com/ikawaha/kagome/v2/tokenizer"
	"github.com/kljensen/snowball/english"
	"golang.org/x/text/unicode/norm"
)

// JapaneseMode selects how Japanese runs are split.
type JapaneseMode int

const (
	// JapaneseDefault is the mode chosen by evaluation on JSQuAD:
	// JapaneseKagomeBigram: nDCG@10 0.9457 against 0.9367 for bigrams and
	// 0.9360 for kagome alone with the default BM25 (k1=1.5 b=0.75), and
	// best under every BM25 setting tried (see search/eval).
	JapaneseDefault JapaneseMode = iota
	// JapaneseBigram splits Japanese runs into character bigrams only.
	JapaneseBigram
	// JapaneseKagome uses kagome's morphological segmentation only.
	JapaneseKagome
	// JapaneseKagomeBigram emits kagome tokens and character bigrams.
	JapaneseKagomeBigram
)

// String names the mode as used in reports.
func (m JapaneseMode) String() string {
	switch m {
	case JapaneseDefault:
		return "default(" + defaultJapanese.String() + ")"
	case JapaneseBigram:
		return "bigram"
	case JapaneseKagome:
		return "kagome"
	case JapaneseKagomeBigram:
		return "kagome+bigram"
	}
	return "unknown"
}

const defaultJapanese = JapaneseKagomeBigram

// Options configures a Tokenizer. The zero value (or nil) is the evaluated
// default: stemming on, stopwords removed, JapaneseDefault.
type Options struct {
	// DisableStemming turns Snowball English stemming off. Default false.
	DisableStemming bool
	// KeepStopwords keeps English stopwords. Default false: the 33 words of
	// Lucene's English stop set are dropped.
	KeepStopwords bool
	// Japanese selects the Japanese segmentation. Default JapaneseDefault.
	Japanese JapaneseMode
}

// Tokenizer is safe for concurrent use.
type Tokenizer struct {
	stem      bool
	stopwords bool
	japanese  JapaneseMode
	// stems caches word → stem: without it Snowball takes 60% of indexing
	// time (SciFact indexes at 3.8k docs/s instead of 10k), and words repeat.
	stems     sync.Map
	stemCount atomic.Int64
}

// maxCachedStems bounds the stem cache so an adversarial stream of unique
// words cannot grow memory without limit.
const maxCachedStems = 1 << 18

func (t *Tokenizer) stemWord(w string) string {
	if s, ok := t.stems.Load(w); ok {
		return s.(string)
	}
	s := english.Stem(w, true)
	if t.stemCount.Load() < maxCachedStems {
		// Clone: w and s may point into a large document's text.
		if _, loaded := t.stems.LoadOrStore(strings.Clone(w), strings.Clone(s)); !loaded {
			t.stemCount.Add(1)
		}
	}
	return s
}

// New returns a Tokenizer; nil options mean defaults.
func New(opts *Options) *Tokenizer {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Japanese == JapaneseDefault {
		o.Japanese = defaultJapanese
	}
	return &Tokenizer{stem: !o.DisableStemming, stopwords: !o.KeepStopwords, japanese: o.Japanese}
}

// stopwords is Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, the list
// Anserini's published BM25 baselines use.
var stopwords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true,
	"but": true, "by": true, "for": true, "if": true, "in": true, "into": true, "is": true,
	"it": true, "no": true, "not": true, "of": true, "on": true, "or": true, "such": true,
	"that": true, "the": true, "their": true, "then": true, "there": true, "these": true,
	"they": true, "this": true, "to": true, "was": true, "will": true, "with": true,
}

type class uint8

const (
	classSep class = iota
	classWord
	classJapanese // Han, Hiragana, Katakana, prolonged sound mark
	classHangul
)

func classify(r rune) class {
	switch {
	case r < utf8.RuneSelf:
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return classWord
		}
		return classSep
	case r == utf8.RuneError:
		return classSep
	case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) || r == 'ー':
		return classJapanese
	case unicode.Is(unicode.Hangul, r):
		return classHangul
	case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
		return classWord
	}
	return classSep
}

func hasKana(s string) bool {
	for _, r := range s {
		if r == 'ー' || unicode.In(r, unicode.Hiragana, unicode.Katakana) {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Tokens returns the index terms of text, in order, with repeats.
func (t *Tokenizer) Tokens(text string) []string {
	return t.AppendTokens(nil, text)
}

// AppendTokens appends the index terms of text to dst.
func (t *Tokenizer) AppendTokens(dst []string, text string) []string {
	japanese := false
	if !isASCII(text) {
		// NFKC keeps invalid bytes as they are, so the scan below still
		// sees them as separators.
		text = norm.NFKC.String(text)
		japanese = hasKana(text)
	}
	start, cur := 0, classSep
	for i, r := range text {
		c := classify(r)
		if c == classSep && cur == classWord && t.joins(text, i, r) {
			continue
		}
		if c == cur {
			continue
		}
		dst = t.appendRun(dst, text[start:i], cur, japanese)
		start, cur = i, c
	}
	return t.appendRun(dst, text[start:], cur, japanese)
}

// joins reports whether the separator r at text[i] stays inside a word: an
// apostrophe between letters ("don't") or '.'/',' between digits ("1,000").
func (t *Tokenizer) joins(text string, i int, r rune) bool {
	if r != '\'' && r != '’' && r != '.' && r != ',' {
		// Checked first: for an invalid byte r is RuneError, whose RuneLen
		// (3) is not the width in text, so slicing below would panic.
		return false
	}
	prev, _ := utf8.DecodeLastRuneInString(text[:i])
	next, _ := utf8.DecodeRuneInString(text[i+utf8.RuneLen(r):])
	switch r {
	case '\'', '’':
		return unicode.IsLetter(prev) && unicode.IsLetter(next) && classify(next) == classWord
	case '.', ',':
		return unicode.IsDigit(prev) && unicode.IsDigit(next) && classify(next) == classWord
	}
	return false
}

func (t *Tokenizer) appendRun(dst []string, run string, c class, japanese bool) []string {
	switch c {
	case classWord:
		return t.appendWord(dst, run)
	case classHangul:
		return appendBigrams(dst, run)
	case classJapanese:
		if !japanese {
			return appendBigrams(dst, run)
		}
		switch t.japanese {
		case JapaneseKagome:
			return appendKagome(dst, run)
		case JapaneseKagomeBigram:
			return appendBigrams(appendKagome(dst, run), run)
		default:
			return appendBigrams(dst, run)
		}
	}
	return dst
}

func (t *Tokenizer) appendWord(dst []string, w string) []string {
	w = strings.ToLower(w)
	if strings.ContainsRune(w, '’') {
		w = strings.ReplaceAll(w, "’", "'")
	}
	if t.stopwords && stopwords[w] {
		return dst
	}
	if t.stem && isASCII(w) {
		// Snowball's English rules only make sense for English words; it
		// also lower-cases and handles possessive "'s".
		w = t.stemWord(w)
		if w == "" {
			return dst
		}
	}
	return append(dst, w)
}

func appendBigrams(dst []string, run string) []string {
	first, n := utf8.DecodeRuneInString(run)
	if n == len(run) {
		if first == 'ー' {
			return dst
		}
		return append(dst, run)
	}
	prev := 0
	for i := n; i < len(run); {
		_, m := utf8.DecodeRuneInString(run[i:])
		dst = append(dst, run[prev:i+m])
		prev, i = i, i+m
	}
	return dst
}

var (
	kagomeOnce sync.Once
	kagomeTok  *kagome.Tokenizer
)

// japaneseTokenizer loads the IPA dictionary on first use (about a second of
// CPU on the development machines, and tens of MB of heap), so programs that
// never see Japanese don't pay.
func japaneseTokenizer() *kagome.Tokenizer {
	kagomeOnce.Do(func() {
		tok, err := kagome.New(ipa.Dict(), kagome.OmitBosEos())
		if err == nil {
			kagomeTok = tok
		}
	})
	return kagomeTok
}

func appendKagome(dst []string, run string) []string {
	tok := japaneseTokenizer()
	if tok == nil {
		// New fails only for a nil dictionary; bigrams keep search working.
		return appendBigrams(dst, run)
	}
	for _, m := range tok.Analyze(run, kagome.Search) {
		if m.Surface == "" || m.Surface == "ー" {
			continue
		}
		dst = append(dst, m.Surface)
	}
	return dst
}
