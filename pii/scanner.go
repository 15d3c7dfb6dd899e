package pii

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Locales lists the locales rules exist for.
var Locales = []string{"Global", "TW", "JP", "KR", "US", "UK"}

// DefaultThreshold is the minimum score an entity needs when
// Options.Threshold is zero.
const DefaultThreshold = 0.5

// contextBoost is added to a match's score when a context word is near it.
// Rules that are ambiguous on their own (nine bare digits, a date-like sort
// code) start below DefaultThreshold and pass it only with context.
const contextBoost = 0.4

// Options configures a Scanner. The zero value enables every rule.
type Options struct {
	// Locales restricts the rules to these locales ("Global", "TW", "JP",
	// "KR", "US", "UK"). Default: all.
	Locales []string
	// Threshold is the minimum score an entity must reach, in (0, 1].
	// Default: DefaultThreshold.
	Threshold float64
	// ContextWindow is how many bytes on each side of a match are searched
	// for context words. Default: 48 (sixteen CJK characters).
	ContextWindow int
}

// RuleInfo describes one rule of a Scanner.
type RuleInfo struct {
	Rule   string // "TW.NationalID"
	Locale string
	Type   string
}

// Scanner is the Detector for the built-in rules. It is safe for
// concurrent use.
type Scanner struct {
	digitRules []*rule // rules run over the regions around digits
	findRules  []*rule // rules with their own byte trigger
	order      map[*rule]int
	first      [256]bool // bytes some digit rule can start with
	threshold  float64
	window     int
}

// New returns a Scanner. nil options mean defaults.
func New(opts *Options) (*Scanner, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Threshold < 0 || o.Threshold > 1 {
		return nil, fmt.Errorf("pii: options: Threshold %v is outside [0, 1]", o.Threshold)
	}
	if o.Threshold == 0 {
		o.Threshold = DefaultThreshold
	}
	if o.ContextWindow < 0 {
		return nil, fmt.Errorf("pii: options: ContextWindow %d is negative; use 0 for the default", o.ContextWindow)
	}
	if o.ContextWindow == 0 {
		o.ContextWindow = 48
	}
	enabled := map[string]bool{}
	for _, l := range o.Locales {
		if !slices.Contains(Locales, l) {
			return nil, fmt.Errorf("pii: options: unknown locale %q in Locales; known: %v", l, Locales)
		}
		enabled[l] = true
	}
	s := &Scanner{order: map[*rule]int{}, threshold: o.Threshold, window: o.ContextWindow}
	for i, r := range allRules {
		if len(enabled) > 0 && !enabled[r.locale] {
			continue
		}
		s.order[r] = i
		if r.re != nil {
			s.digitRules = append(s.digitRules, r)
			for i, ok := range r.first {
				s.first[i] = s.first[i] || ok
			}
		} else {
			s.findRules = append(s.findRules, r)
		}
	}
	return s, nil
}

// Rules lists the enabled rules.
func (s *Scanner) Rules() []RuleInfo {
	var out []RuleInfo
	for _, r := range allRules {
		if _, ok := s.order[r]; ok {
			out = append(out, RuleInfo{Rule: r.id(), Locale: r.locale, Type: r.typ})
		}
	}
	return out
}

// candidate is a match before overlap resolution.
type candidate struct {
	r          *rule
	start, end int
	score      float64
}

// regionMargin is how far a digit rule's match may reach past the digits
// that triggered it ("〒 ", "GB82 WEST ", a MAC's hex letters).
const regionMargin = 24

// Scan implements Detector.
func (s *Scanner) Scan(text string) []Entity {
	var cands []candidate
	add := func(r *rule, start, end int, score float64) {
		if start >= end {
			return
		}
		// Context can only matter if it could lift the score over the threshold
		// or change which overlapping match wins; skip the search otherwise.
		if score+contextBoost >= s.threshold && s.hasContext(text, start, end, r.context) {
			score += contextBoost
		}
		score = min(score, 1)
		if score >= s.threshold {
			cands = append(cands, candidate{r, start, end, score})
		}
	}
	for _, r := range s.findRules {
		r.find(text, func(start, end int, score float64) { add(r, start, end, score) })
	}
	if len(s.digitRules) > 0 {
		forDigitRegions(text, func(lo, hi int) { s.scanRegion(text, lo, hi, add) })
	}
	return s.resolve(cands)
}

// maxValueLen bounds the bytes a digit rule's regular expression sees from a
// candidate start: longer than any value (a spaced IBAN is 42 bytes), short
// enough that a failed attempt is cheap.
const maxValueLen = 64

// scanRegion tries the digit rules at each candidate start in text[lo:hi].
// Trying anchored patterns at a few starts, instead of searching the region
// with every pattern, is what makes scanning fast: see BenchmarkScan and
// BenchmarkScanNoPrefilter.
func (s *Scanner) scanRegion(text string, lo, hi int, add func(*rule, int, int, float64)) {
	for i := lo; i < hi; i++ {
		c := text[i]
		if !s.first[c] || (i > 0 && isAlnum(text[i-1])) {
			continue
		}
		digits := runDigits(text, i)
		window := text[i:min(i+maxValueLen, len(text))]
		for _, r := range s.digitRules {
			if !r.first[c] || digits < r.minDigits || (r.pre != nil && !r.pre(window)) {
				continue
			}
			loc := r.re.FindStringSubmatchIndex(window)
			if loc == nil {
				continue
			}
			start, end := i, i+loc[3]
			if end < len(text) && isAlnum(text[end]) {
				continue // cut by the window, not a real boundary
			}
			if inLongerGroup(text, start, end) {
				continue
			}
			score := r.score
			if r.check != nil {
				var keep int
				keep, score = r.check(text[start:end])
				if keep == 0 {
					continue
				}
				end = start + keep
			}
			add(r, start, end, score)
		}
	}
}

// runDigits counts the digits in the number-like run starting at text[i]
// (digits, upper-case letters and separators, after an optional '〒'), up
// to maxValueLen bytes. A rule needing more digits than that cannot match.
func runDigits(text string, i int) int {
	end := min(i+maxValueLen, len(text))
	if strings.HasPrefix(text[i:], "〒") {
		i += len("〒")
	}
	n := 0
	for ; i < end; i++ {
		switch c := text[i]; {
		case c >= '0' && c <= '9':
			n++
		case c >= 'A' && c <= 'Z', c == ' ', c == '-', c == '.', c == '(', c == ')', c == ':', c == '+':
		default:
			return n
		}
	}
	return n
}

// inLongerGroup reports whether text[start:end], written in groups with a
// space or hyphen, is only part of a longer number written the same way:
// "4111 1111 1111" inside "4111 1111 1111 1112" is not a My Number.
func inLongerGroup(text string, start, end int) bool {
	for _, sep := range []byte{' ', '-'} {
		if strings.IndexByte(text[start:end], sep) < 0 {
			continue
		}
		if end+1 < len(text) && text[end] == sep && isDigit(text[end+1]) {
			return true
		}
		if start >= 2 && text[start-1] == sep && isDigit(text[start-2]) {
			return true
		}
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// forDigitRegions calls fn for each maximal region of text that lies within
// regionMargin bytes of an ASCII digit. Prose without digits costs one pass
// and no regular expression at all.
func forDigitRegions(text string, fn func(lo, hi int)) {
	lo, hi := -1, -1
	for i := 0; i < len(text); i++ {
		if c := text[i]; c < '0' || c > '9' {
			continue
		}
		a, b := max(i-regionMargin, 0), min(i+1+regionMargin, len(text))
		if lo >= 0 && a <= hi {
			hi = b
			continue
		}
		if lo >= 0 {
			fn(lo, hi)
		}
		lo, hi = a, b
	}
	if lo >= 0 {
		fn(lo, hi)
	}
}

// hasContext reports whether one of words occurs within the context window
// around text[start:end]. ASCII words match case-insensitively and not
// inside a longer ASCII word ("tel" is not found in "hotel").
func (s *Scanner) hasContext(text string, start, end int, words []string) bool {
	if len(words) == 0 {
		return false
	}
	before := text[max(start-s.window, 0):start]
	after := text[end:min(end+s.window, len(text))]
	for _, w := range words {
		if containsWord(before, w) || containsWord(after, w) {
			return true
		}
	}
	return false
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// containsWord is an allocation-free ASCII case-insensitive search for the
// lower-case word w.
func containsWord(hay, w string) bool {
	if len(w) == 0 || len(hay) < len(w) {
		return false
	}
	if !isLetter(w[0]) {
		return strings.Contains(hay, w) // CJK words: exact, and fast
	}
	asciiWord := isLetter(w[0]) && isLetter(w[len(w)-1])
outer:
	for i := 0; i+len(w) <= len(hay); i++ {
		for j := 0; j < len(w); j++ {
			if lower(hay[i+j]) != w[j] {
				continue outer
			}
		}
		if asciiWord && ((i > 0 && isLetter(hay[i-1])) || (i+len(w) < len(hay) && isLetter(hay[i+len(w)]))) {
			continue
		}
		return true
	}
	return false
}

// resolve drops overlapping candidates, keeping in each overlapping cluster
// the highest score, then the longest match, then the earliest rule, and
// returns the survivors ordered by Start.
func (s *Scanner) resolve(cands []candidate) []Entity {
	if len(cands) == 0 {
		return nil
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end))
	})
	better := func(a, b candidate) int {
		return cmp.Or(
			cmp.Compare(b.score, a.score),
			cmp.Compare(b.end-b.start, a.end-a.start),
			cmp.Compare(s.order[a.r], s.order[b.r]),
			cmp.Compare(a.start, b.start),
		)
	}
	var out []Entity
	var kept []candidate
	for i := 0; i < len(cands); {
		// Cluster: candidates transitively overlapping cands[i].
		j, hi := i+1, cands[i].end
		for j < len(cands) && cands[j].start < hi {
			hi = max(hi, cands[j].end)
			j++
		}
		cluster := cands[i:j]
		slices.SortFunc(cluster, better)
		kept = kept[:0]
	pick:
		for _, c := range cluster {
			for _, k := range kept {
				if c.start < k.end && k.start < c.end {
					continue pick
				}
			}
			kept = append(kept, c)
		}
		slices.SortFunc(kept, func(a, b candidate) int { return cmp.Compare(a.start, b.start) })
		for _, c := range kept {
			out = append(out, Entity{Type: c.r.typ, Locale: c.r.locale, Rule: c.r.id(), Start: c.start, End: c.end, Score: c.score})
		}
		i = j
	}
	return out
}
