package guard

import (
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A prefilter holds literals that every match of a regular expression must
// contain, so a regex whose literals are absent is skipped without running
// it. RE2 passes over a 1 KB message cost 10–20 µs each; a few
// strings.Contains calls cost well under one.
//
// The prefilter is conservative: it is built only from what the parsed
// expression proves (a literal in every branch of a concatenation), and a
// piece it cannot prove is dropped, which only makes it pass more often.
type prefilter struct {
	// clauses are all required: each holds literals of which at least one
	// must occur.
	clauses [][]prefilterLit
}

type prefilterLit struct {
	s string
	// folded means s is lower-case ASCII to look for in the folded text; a
	// case-insensitive literal matched in the original text leaves its
	// lower-cased form in the folded text (see requiredLiteral). Otherwise s
	// is looked for, exactly, in the original text.
	folded bool
}

// maxClassLits bounds how many single-rune literals a character class
// expands to.
const maxClassLits = 8

// newPrefilter analyses pattern; a pattern without provable literals gets an
// empty prefilter, which passes everything.
func newPrefilter(pattern string) prefilter {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return prefilter{}
	}
	return prefilter{clauses: requiredClauses(re.Simplify())}
}

// mayMatch reports whether the regex might match orig, whose folded form is
// folded. False is certain; true means run the regex.
func (p prefilter) mayMatch(orig, folded string) bool {
	for _, c := range p.clauses {
		ok := false
		for _, l := range c {
			t := orig
			if l.folded {
				t = folded
			}
			if strings.Contains(t, l.s) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// requiredClauses returns clauses that every match of re satisfies.
func requiredClauses(re *syntax.Regexp) [][]prefilterLit {
	switch re.Op {
	case syntax.OpLiteral:
		if l, ok := requiredLiteral(re); ok {
			return [][]prefilterLit{{l}}
		}
	case syntax.OpCharClass:
		return classClause(re)
	case syntax.OpCapture:
		return requiredClauses(re.Sub[0])
	case syntax.OpPlus:
		return requiredClauses(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredClauses(re.Sub[0])
		}
	case syntax.OpConcat:
		var out [][]prefilterLit
		for _, sub := range re.Sub {
			out = append(out, requiredClauses(sub)...)
		}
		return out
	case syntax.OpAlternate:
		// One clause: the union of each branch's most selective clause. A
		// branch without a clause could match without any literal.
		var union []prefilterLit
		for _, sub := range re.Sub {
			best := bestClause(requiredClauses(sub))
			if best == nil {
				return nil
			}
			union = append(union, best...)
		}
		return [][]prefilterLit{union}
	}
	return nil
}

// bestClause picks the clause least likely to pass by chance: the one whose
// shortest literal is longest, then the one with fewest literals.
func bestClause(cs [][]prefilterLit) []prefilterLit {
	var best []prefilterLit
	bestMin := 0
	for _, c := range cs {
		m := len(c[0].s)
		for _, l := range c {
			m = min(m, len(l.s))
		}
		if best == nil || m > bestMin || m == bestMin && len(c) < len(best) {
			best, bestMin = c, m
		}
	}
	return best
}

// requiredLiteral turns a literal node into something to look for.
//
// A case-sensitive literal is looked for as is in the original text. A
// case-insensitive one is reduced to its longest run of runes whose whole
// case-folding orbit is ASCII and not white space (so not k, which also
// matches the Kelvin sign, nor s, which matches ſ): such a run matches only
// ASCII bytes, which fold copies, lower-cased and still adjacent, into the
// folded text. The replacement character is never used: the regexp package
// matches it against any invalid byte.
func requiredLiteral(re *syntax.Regexp) (prefilterLit, bool) {
	if re.Flags&syntax.FoldCase == 0 {
		for _, r := range re.Rune {
			if r == utf8.RuneError {
				return prefilterLit{}, false
			}
		}
		return prefilterLit{s: string(re.Rune)}, true
	}
	var best, cur []byte
	for _, r := range append(re.Rune, -1) {
		if r >= 0 && asciiOrbit(r) && !unicode.IsSpace(r) {
			cur = append(cur, byte(unicode.ToLower(r)))
			continue
		}
		if len(cur) > len(best) {
			best = cur
		}
		cur = nil
	}
	if len(best) == 0 {
		return prefilterLit{}, false
	}
	return prefilterLit{s: string(best), folded: true}, true
}

// asciiOrbit reports whether r and every rune it case-folds to are ASCII.
func asciiOrbit(r rune) bool {
	if r >= utf8.RuneSelf {
		return false
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// classClause expands a small character class into one-rune literals,
// looked for exactly in the original text.
func classClause(re *syntax.Regexp) [][]prefilterLit {
	var c []prefilterLit
	for i := 0; i+1 < len(re.Rune); i += 2 {
		lo, hi := re.Rune[i], re.Rune[i+1]
		if hi-lo+1 > maxClassLits || len(c)+int(hi-lo+1) > maxClassLits {
			return nil
		}
		for r := lo; r <= hi; r++ {
			if r == utf8.RuneError || r > unicode.MaxRune || !utf8.ValidRune(r) {
				return nil
			}
			c = append(c, prefilterLit{s: string(r)})
		}
	}
	if len(c) == 0 {
		return nil
	}
	return [][]prefilterLit{c}
}
