// Package chunk splits extracted documents into overlapping chunks of
// bounded size for indexing, each with enough position information to cite:
// the document name, page, nearest heading and the byte range it came from.
//
//	docs, _ := extract.Extract(ctx, name, r, nil)
//	for _, d := range docs {
//		for _, c := range chunk.Split(d, chunk.Options{}) { // default size 800, overlap 100
//			_ = eng.Index(ctx, c.Document("kb"))
//		}
//	}
//
// # Size
//
// Sizes are measured in units (see Units) that treat Japanese, Chinese and
// Korean text, which has no spaces between words, and space-separated
// scripts alike:
//
//   - one CJK character (Han, Hiragana, Katakana, Hangul, CJK punctuation
//     and the half- and full-width forms) is one unit;
//   - every other word, a run of non-space characters, is one unit per
//     started three characters: "a" and "the" are 1, "chunk" and "end." are
//     2, "example" is 3;
//   - whitespace is free.
//
// Why these weights: a Japanese text carries about as much as an English
// text of half as many words as it has characters (translators reckon 2 to
// 2.5 Japanese characters per English word), and running English costs about
// 2 units a word (1.9 to 2.1 measured on READMEs and licence texts), so 800
// units is some 800 characters of Japanese or 400 English words: comparable
// content. It is also a comparable model budget: both come to roughly 500 to
// 800 tokens of common LLM and embedding tokenizers (Japanese runs 0.7 to 1
// token a character, English about 1.3 a word). Counting long words by their
// length, rather than as one unit each, keeps a URL, a base64 blob or a line
// of minified code from hiding thousands of characters inside "one word",
// and is what lets such a token be split once it alone exceeds Size. The
// measure is integer arithmetic over runes: deterministic, and needing no
// dictionary.
//
// # Boundaries
//
// A chunk ends at the best boundary before it would exceed Size: before a
// Markdown heading line, then at a blank line, then after a sentence (. ! ?
// 。！？ or a line break), then after a clause (, ; : 、), then between words or
// CJK characters. Among boundaries that leave the chunk at least a quarter
// full the strongest wins and, among equals, the latest. A chunk that ends
// before a heading is not overlapped: the next one starts at the heading. A
// word is split only when it alone exceeds Size, and then at rune
// boundaries. A chunk never spans two sections of an extract.Document with
// different pages or headings, so Chunk.Page and Chunk.Heading are exact.
//
// Chunks are trimmed: they start and end at non-space characters, and
// Chunk.Text is always exactly doc.Text[Chunk.Start:Chunk.End].
package chunk

import (
	"strconv"
	"unicode/utf8"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/extract"
)

// Defaults of Options.
const (
	DefaultSize    = 800
	DefaultOverlap = 100
)

// Options tune Split. The zero value means the defaults.
type Options struct {
	// Size is the largest chunk in units (see Units). Zero or negative means
	// DefaultSize (800).
	Size int
	// Overlap is how many units at the end of a chunk the next chunk of the
	// same section repeats, so that a passage cut by a boundary is still
	// found whole in one of them. The repeated part starts at a sentence
	// when one begins in the last Overlap units and repeats at least half
	// of them, else likewise at a clause, else at a word. Zero means
	// DefaultOverlap (100); negative means no overlap. Values above Size/2
	// are reduced to Size/2: more would index most text twice.
	Overlap int
}

func (o Options) withDefaults() Options {
	if o.Size <= 0 {
		o.Size = DefaultSize
	}
	switch {
	case o.Overlap == 0:
		o.Overlap = DefaultOverlap
	case o.Overlap < 0:
		o.Overlap = 0
	}
	if o.Overlap > o.Size/2 {
		o.Overlap = o.Size / 2
	}
	return o
}

// Chunk is one piece of a document.
type Chunk struct {
	// Text is the chunk's text, without leading or trailing whitespace.
	Text string
	// Source is the document's name (extract.Document.Name).
	Source string
	// Page is the 1-based page the chunk is on, 0 when unknown.
	Page int
	// Heading is the nearest heading above the chunk, when known.
	Heading string
	// Start and End are the byte offsets of Text in the document's text:
	// doc.Text[Start:End] == Text.
	Start, End int
	// Index is the chunk's ordinal within the document, from 0.
	Index int
	// Units is the chunk's size, Units(Text); at most Options.Size.
	Units int
}

// Document returns the chunk as a search document of the given index. Its
// ID is the source and the chunk's ordinal ("handbook.pdf#3"), its title the
// heading, and its metadata carries the source, page, heading and offsets
// for citations.
func (c Chunk) Document(index string) search.Document {
	md := map[string]string{
		"source": c.Source,
		"chunk":  strconv.Itoa(c.Index),
		"start":  strconv.Itoa(c.Start),
		"end":    strconv.Itoa(c.End),
	}
	if c.Page > 0 {
		md["page"] = strconv.Itoa(c.Page)
	}
	if c.Heading != "" {
		md["heading"] = c.Heading
	}
	return search.Document{
		ID:       c.Source + "#" + strconv.Itoa(c.Index),
		Index:    index,
		Title:    c.Heading,
		Text:     c.Text,
		Metadata: md,
	}
}

// SplitText splits plain text; the chunks have no source, page or heading.
func SplitText(text string, opt Options) []Chunk {
	return Split(extract.Document{Text: text}, opt)
}

// Split splits doc.Text into chunks. doc.Sections only attribute pages and
// headings: text outside every section (the separators between them) is
// chunked with the section before it, and a section whose Offset does not
// lie after the previous one's inside doc.Text is treated as part of the
// previous section.
func Split(doc extract.Document, opt Options) []Chunk {
	opt = opt.withDefaults()
	sp := splitter{doc: doc, opt: opt}
	for _, seg := range segments(doc) {
		sp.segment(seg)
	}
	return sp.out
}

// segment is a byte range of the document text with one page and heading.
type segment struct {
	start, end int
	page       int
	heading    string
}

// segments groups consecutive sections with the same page and heading.
func segments(doc extract.Document) []segment {
	if len(doc.Sections) == 0 {
		return []segment{{start: 0, end: len(doc.Text)}}
	}
	var segs []segment
	first := doc.Sections[0]
	cur := segment{page: first.Page, heading: first.Heading}
	last := 0
	for _, s := range doc.Sections[1:] {
		off := s.Offset
		if off <= last || off >= len(doc.Text) {
			continue
		}
		last = off
		if s.Page == cur.page && s.Heading == cur.heading {
			continue
		}
		// Never start a segment inside a rune, even for a hand-made
		// Document whose offsets are wrong.
		for off < len(doc.Text) && !utf8.RuneStart(doc.Text[off]) {
			off++
		}
		if off <= cur.start || off >= len(doc.Text) {
			continue
		}
		cur.end = off
		segs = append(segs, cur)
		cur = segment{start: off, page: s.Page, heading: s.Heading}
	}
	cur.end = len(doc.Text)
	return append(segs, cur)
}

// splitter holds the state of one Split call.
type splitter struct {
	doc extract.Document
	opt Options
	out []Chunk
	buf []atom // the current window of atoms; reused across segments
}

// segment appends the chunks of one segment. It keeps only the atoms of the
// chunk being built (its window plus one look-ahead atom) in memory.
func (sp *splitter) segment(seg segment) {
	sc := scanner{
		text:     sp.doc.Text,
		pos:      seg.start,
		end:      seg.end,
		maxRunes: sp.opt.Size * runesPerUnit,
		first:    true,
	}
	buf := sp.buf[:0]
	pull := func() bool {
		a, ok := sc.next()
		if ok {
			buf = append(buf, a)
		}
		return ok
	}
	// cost is the size of the atoms buf[i..j], inclusive.
	cost := func(i, j int) int { return buf[j].cum - buf[i].cum + buf[i].cost }

	// The chunk being built starts at buf[0]; buf[p] is its first atom that
	// the previous chunk did not contain (p > 0 only for an overlap).
	p := 0
	if !pull() {
		return
	}
	for {
		// Grow the window until atom j no longer fits. Atom p always fits:
		// no atom costs more than Size, and the overlap leaves room for it.
		j := p
		for {
			if j == len(buf) && !pull() {
				break
			}
			if cost(0, j) > sp.opt.Size {
				break
			}
			j++
		}
		if j == len(buf) {
			sp.emit(seg, buf[0], buf[len(buf)-1], cost(0, len(buf)-1))
			break
		}
		k := sp.breakBefore(buf, p, j, cost)
		sp.emit(seg, buf[0], buf[k-1], cost(0, k-1))
		s := sp.overlapStart(buf, k, cost)
		n := copy(buf, buf[s:])
		buf = buf[:n]
		p = k - s
	}
	sp.buf = buf
}

// breakBefore chooses where the chunk buf[0..] ends: before atom k, with
// p < k <= j, where atom j is the first that does not fit. It takes the
// strongest boundary that leaves the chunk at least a quarter full, the
// latest of equals; j when none does.
func (sp *splitter) breakBefore(buf []atom, p, j int, cost func(i, j int) int) int {
	minFill := sp.opt.Size / 4
	best, bestPrio := j, int8(-1)
	for k := p + 1; k <= j; k++ {
		if buf[k].prio >= bestPrio && cost(0, k-1) >= minFill {
			best, bestPrio = k, buf[k].prio
		}
	}
	return best
}

// overlapStart returns where the chunk after the one that ended before atom
// k starts: s < k when it repeats the end of buf[0..k-1], k for no overlap
// (also when atom k starts a heading, so the new chunk starts with it).
// The repeated part is at most Overlap units, leaves room for atom k within
// Size, never starts inside a word, and starts a sentence, or else a
// clause, when that keeps at least half of Overlap.
func (sp *splitter) overlapStart(buf []atom, k int, cost func(i, j int) int) int {
	if sp.opt.Overlap <= 0 || buf[k].prio == prioHeading {
		return k
	}
	next := buf[k].cost
	// earliest[p] is the earliest start at a boundary of priority p or
	// stronger; earlier means more overlap.
	var earliest [prioHeading + 1]int
	for p := range earliest {
		earliest[p] = k
	}
	for m := k - 1; m > 0; m-- {
		ov := cost(m, k-1)
		if ov > sp.opt.Overlap || ov+next > sp.opt.Size {
			break
		}
		for p := prioWord; p <= buf[m].prio; p++ {
			earliest[p] = m
		}
	}
	for _, p := range []int8{prioSentence, prioClause} {
		if s := earliest[p]; s < k && 2*cost(s, k-1) >= sp.opt.Overlap {
			return s
		}
	}
	return earliest[prioWord]
}

// emit appends the chunk from atom first to atom last, inclusive.
func (sp *splitter) emit(seg segment, first, last atom, units int) {
	sp.out = append(sp.out, Chunk{
		Text:    sp.doc.Text[first.start:last.end],
		Source:  sp.doc.Name,
		Page:    seg.page,
		Heading: seg.heading,
		Start:   first.start,
		End:     last.end,
		Index:   len(sp.out),
		Units:   units,
	})
}
