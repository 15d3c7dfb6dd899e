package chunk

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/extract"
	"github.com/google/go-cmp/cmp"
)

// checkChunks asserts what every caller relies on: each chunk's Text is
// exactly doc.Text[Start:End], trimmed, on rune boundaries and within Size;
// chunks are in order, numbered, and together cover every non-space
// character; and the attributed page and heading are those of the section
// the chunk lies in.
func checkChunks(t testing.TB, doc extract.Document, opt Options, chunks []Chunk) {
	t.Helper()
	opt = opt.withDefaults()
	text := doc.Text
	starts := runeStarts(text)
	reach := 0
	for i, c := range chunks {
		if c.Start < 0 || c.End > len(text) || c.Start >= c.End {
			t.Fatalf("chunk %d: range [%d,%d) invalid for text of %d bytes", i, c.Start, c.End, len(text))
		}
		if !starts[c.Start] || (c.End < len(text) && !starts[c.End]) {
			t.Fatalf("chunk %d: range [%d,%d) splits a rune", i, c.Start, c.End)
		}
		if text[c.Start:c.End] != c.Text {
			t.Fatalf("chunk %d: doc.Text[%d:%d] = %q, Text = %q", i, c.Start, c.End, text[c.Start:c.End], c.Text)
		}
		if strings.TrimSpace(c.Text) != c.Text {
			t.Errorf("chunk %d: %q is not trimmed", i, c.Text)
		}
		if c.Index != i {
			t.Errorf("chunk %d: Index = %d", i, c.Index)
		}
		if c.Source != doc.Name {
			t.Errorf("chunk %d: Source = %q, want %q", i, c.Source, doc.Name)
		}
		if u := Units(c.Text); u != c.Units {
			t.Errorf("chunk %d: Units = %d, Units(Text) = %d", i, c.Units, u)
		}
		// Words longer than Size are split into pieces of Size units, so
		// no chunk is ever larger than Size.
		if c.Units > opt.Size {
			t.Errorf("chunk %d: %d units > Size %d: %q", i, c.Units, opt.Size, c.Text)
		}
		if i > 0 {
			prev := chunks[i-1]
			if c.Start <= prev.Start || c.End <= prev.End {
				t.Fatalf("chunk %d [%d,%d) not after chunk %d [%d,%d)", i, c.Start, c.End, i-1, prev.Start, prev.End)
			}
			if c.Start < prev.End {
				if c.Page != prev.Page || c.Heading != prev.Heading {
					t.Errorf("chunk %d overlaps chunk %d across a page or heading", i, i-1)
				}
				if u := Units(text[c.Start:prev.End]); u > opt.Overlap {
					t.Errorf("chunk %d repeats %d units of chunk %d, more than Overlap %d", i, u, i-1, opt.Overlap)
				}
			}
		}
		if c.Start > reach && strings.TrimSpace(text[reach:c.Start]) != "" {
			t.Fatalf("text[%d:%d] = %q is in no chunk", reach, c.Start, text[reach:c.Start])
		}
		reach = max(reach, c.End)
		if s, ok := sectionAt(doc, c.Start); ok {
			if e, _ := sectionAt(doc, c.End-1); e.Page != s.Page || e.Heading != s.Heading {
				t.Errorf("chunk %d spans sections (page %d %q) and (page %d %q)", i, s.Page, s.Heading, e.Page, e.Heading)
			}
			if c.Page != s.Page || c.Heading != s.Heading {
				t.Errorf("chunk %d: page %d heading %q, its section has page %d heading %q", i, c.Page, c.Heading, s.Page, s.Heading)
			}
		}
	}
	if strings.TrimSpace(text[reach:]) != "" {
		t.Fatalf("text[%d:] = %q is in no chunk", reach, text[reach:])
	}
}

// runeStarts marks the offsets where decoding text from its start begins
// a rune (every byte of an invalid sequence begins one).
func runeStarts(text string) []bool {
	starts := make([]bool, len(text)+1)
	for i := 0; i < len(text); {
		starts[i] = true
		_, w := utf8.DecodeRuneInString(text[i:])
		i += w
	}
	starts[len(text)] = true
	return starts
}

// sectionAt returns the section containing byte offset off, if any; only
// meaningful for well-formed documents such as extract produces.
func sectionAt(doc extract.Document, off int) (extract.Section, bool) {
	for _, s := range doc.Sections {
		if off >= s.Offset && off < s.Offset+len(s.Text) {
			return s, true
		}
	}
	return extract.Section{}, false
}

// assemble builds a Document from sections the way extract does: texts
// joined with a blank line, offsets recorded.
func assemble(name string, secs ...extract.Section) extract.Document {
	doc := extract.Document{Name: name}
	for _, s := range secs {
		if doc.Text != "" {
			doc.Text += "\n\n"
		}
		s.Offset = len(doc.Text)
		doc.Text += s.Text
		doc.Sections = append(doc.Sections, s)
	}
	return doc
}

func texts(chunks []Chunk) []string {
	var out []string
	for _, c := range chunks {
		out = append(out, c.Text)
	}
	return out
}

func TestUnits(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{" \n\t\u3000 ", 0},
		{"a", 1},
		{"the cat sat.", 4},  // the=1 cat=1 sat.=2
		{"chunk example", 5}, // 2 + 3
		{"東京タワー", 5},         // one per character, ー included
		{"今日は。", 4},          // CJK punctuation counts
		{"ｶﾀｶﾅ ＡＢＣ", 7},      // half- and full-width forms
		{"안녕하세요", 5},         // Hangul
		{"Goの本", 3},          // Go=1 の=1 本=1
		{strings.Repeat("x", 3000), 1000},
		{"ab\xffcd", 2}, // an invalid byte is part of the word
	}
	for _, tt := range tests {
		if got := Units(tt.in); got != tt.want {
			t.Errorf("Units(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// TestUnitsComparable checks the claim the measure is chosen for: the same
// content in English and in Japanese measures about the same.
func TestUnitsComparable(t *testing.T) {
	en := "The committee met on Tuesday to review the budget for next year. " +
		"After a long discussion, members agreed to increase spending on public libraries " +
		"and to reduce the cost of maintaining old government buildings."
	ja := "委員会は火曜日に会合を開き、来年度の予算を審議した。" +
		"長い議論の末、委員らは公立図書館への支出を増やし、古い庁舎の維持費を削減することで合意した。"
	ue, uj := Units(en), Units(ja)
	if ratio := float64(ue) / float64(uj); ratio < 0.75 || ratio > 1.33 {
		t.Errorf("English %d units, Japanese %d units: ratio %.2f, want within 0.75..1.33", ue, uj, ratio)
	}
}

func TestOptionsDefaults(t *testing.T) {
	tests := []struct {
		in, want Options
	}{
		{Options{}, Options{Size: 800, Overlap: 100}},
		{Options{Size: -5, Overlap: -1}, Options{Size: 800, Overlap: 0}},
		{Options{Size: 50}, Options{Size: 50, Overlap: 25}},
		{Options{Size: 10, Overlap: 3}, Options{Size: 10, Overlap: 3}},
		{Options{Size: 1, Overlap: 5}, Options{Size: 1, Overlap: 0}},
	}
	for _, tt := range tests {
		if got := tt.in.withDefaults(); got != tt.want {
			t.Errorf("%+v.withDefaults() = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestEmpty(t *testing.T) {
	for _, in := range []string{"", " ", "\n\n\t \u3000\n"} {
		if got := SplitText(in, Options{}); len(got) != 0 {
			t.Errorf("SplitText(%q) = %+v, want no chunks", in, got)
		}
	}
	if got := Split(extract.Document{Name: "x", Sections: []extract.Section{{Text: "orphan", Page: 1}}}, Options{}); len(got) != 0 {
		t.Errorf("Split of a document without Text = %+v, want no chunks", got)
	}
}

func TestShortTextIsOneTrimmedChunk(t *testing.T) {
	in := "\n  Hello, world. This is short.  \n"
	got := SplitText(in, Options{})
	want := []Chunk{{Text: "Hello, world. This is short.", Start: 3, End: 31, Units: 9}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SplitText mismatch (-want +got):\n%s", diff)
	}
}

const english = `Retrieval works best on passages that say one thing. A chunk that mixes two topics matches queries about either and answers neither well.

Paragraphs are the natural unit of prose. Writers group sentences that belong together, and a blank line marks where a new thought begins.

Sentences are the next best boundary. Cutting in the middle of one leaves two fragments that each lack a subject or a verb, which hurts both keyword and vector search.

Words come last. Nobody wants half a word in an index.`

func TestEnglishParagraphs(t *testing.T) {
	opt := Options{Size: 80, Overlap: -1} // paragraphs of 46, 47, 56 and 19 units
	got := SplitText(english, opt)
	checkChunks(t, extract.Document{Text: english}, opt, got)
	want := []string{
		"Retrieval works best on passages that say one thing. A chunk that mixes two topics matches queries about either and answers neither well.",
		"Paragraphs are the natural unit of prose. Writers group sentences that belong together, and a blank line marks where a new thought begins.",
		"Sentences are the next best boundary. Cutting in the middle of one leaves two fragments that each lack a subject or a verb, which hurts both keyword and vector search.\n\nWords come last. Nobody wants half a word in an index.",
	}
	if diff := cmp.Diff(want, texts(got)); diff != "" {
		t.Errorf("chunks mismatch (-want +got):\n%s", diff)
	}
}

func TestEnglishSentencesWhenParagraphTooLong(t *testing.T) {
	para := strings.Repeat("This sentence has exactly eight short words in it. ", 20)
	opt := Options{Size: 50, Overlap: -1}
	got := SplitText(para, opt)
	checkChunks(t, extract.Document{Text: para}, opt, got)
	if len(got) < 2 {
		t.Fatalf("got %d chunks, want several", len(got))
	}
	for i, c := range got {
		if !strings.HasPrefix(c.Text, "This") || !strings.HasSuffix(c.Text, "in it.") {
			t.Errorf("chunk %d = %q, want whole sentences", i, c.Text)
		}
	}
}

func TestJapaneseWithoutSpaces(t *testing.T) {
	in := strings.Repeat("今日は天気が良いので公園へ散歩に行きました。", 10) // 22 units a sentence
	opt := Options{Size: 50, Overlap: -1}
	got := SplitText(in, opt)
	checkChunks(t, extract.Document{Text: in}, opt, got)
	if len(got) != 5 {
		t.Fatalf("got %d chunks, want 5 of two sentences: %q", len(got), texts(got))
	}
	for i, c := range got {
		if c.Text != strings.Repeat("今日は天気が良いので公園へ散歩に行きました。", 2) || c.Units != 44 {
			t.Errorf("chunk %d = %q (%d units), want two whole sentences (44 units)", i, c.Text, c.Units)
		}
	}
}

func TestJapaneseClosingQuoteStaysWithSentence(t *testing.T) {
	in := "彼は「明日は雨が降るでしょう。」と言った。" + strings.Repeat("あ", 30)
	opt := Options{Size: 30, Overlap: -1}
	got := SplitText(in, opt)
	checkChunks(t, extract.Document{Text: in}, opt, got)
	if len(got) == 0 || !strings.HasSuffix(got[0].Text, "。」と言った。") {
		t.Errorf("first chunk = %q, want it to end with the sentence", texts(got))
	}
}

func TestClauseBoundaries(t *testing.T) {
	// One long Japanese sentence: break and overlap after 、, not mid-word.
	in := strings.Repeat("雨が降っていたので、", 12) + "家にいた。"
	opt := Options{Size: 40, Overlap: 15}
	got := SplitText(in, opt)
	checkChunks(t, extract.Document{Text: in}, opt, got)
	for i, c := range got {
		if !strings.HasPrefix(c.Text, "雨") {
			t.Errorf("chunk %d = %q, want it to start at a clause", i, c.Text)
		}
		if i < len(got)-1 && !strings.HasSuffix(c.Text, "、") {
			t.Errorf("chunk %d = %q, want it to end at a clause", i, c.Text)
		}
	}

	// The same in English, at commas.
	en := strings.Repeat("because it was raining outside, ", 10) + "we stayed home."
	got = SplitText(en, Options{Size: 40, Overlap: -1})
	checkChunks(t, extract.Document{Text: en}, Options{Size: 40, Overlap: -1}, got)
	for i, c := range got[:len(got)-1] {
		if !strings.HasSuffix(c.Text, "outside,") {
			t.Errorf("chunk %d = %q, want it to end at a comma", i, c.Text)
		}
	}
}

func TestMixedScripts(t *testing.T) {
	in := "Goは2009年に公開されたプログラミング言語です。 It was designed at Google by Robert Griesemer, Rob Pike and Ken Thompson. " +
		"並行処理のためのgoroutineとchannelを備えています。 Its standard library includes net/http and encoding/json."
	opt := Options{Size: 45, Overlap: -1} // sentences of 23, 23, 23 and 19 units
	got := SplitText(in, opt)
	checkChunks(t, extract.Document{Text: in}, opt, got)
	want := []string{
		"Goは2009年に公開されたプログラミング言語です。",
		"It was designed at Google by Robert Griesemer, Rob Pike and Ken Thompson.",
		"並行処理のためのgoroutineとchannelを備えています。 Its standard library includes net/http and encoding/json.",
	}
	if diff := cmp.Diff(want, texts(got)); diff != "" {
		t.Errorf("chunks mismatch (-want +got):\n%s", diff)
	}
}

func TestMarkdownHeadingsFromExtract(t *testing.T) {
	md := "# Guide\n\nIntro text about the guide.\n\n## Install\n\n" +
		strings.Repeat("Run the installer and follow the prompts. ", 8) +
		"\n\n## Configure\n\nEdit the config file. Restart the service.\n"
	docs, err := extract.Extract(context.Background(), "guide.md", strings.NewReader(md), nil)
	if err != nil {
		t.Fatal(err)
	}
	doc := docs[0]
	opt := Options{Size: 60, Overlap: 10}
	got := Split(doc, opt)
	checkChunks(t, doc, opt, got)

	var headings []string
	for _, c := range got {
		headings = append(headings, c.Heading)
	}
	wantHeadings := []string{"Guide", "Install", "Install", "Configure"}
	if diff := cmp.Diff(wantHeadings, headings); diff != "" {
		t.Errorf("headings mismatch (-want +got):\n%s", diff)
	}
	if got[0].Text != "# Guide\n\nIntro text about the guide." {
		t.Errorf("first chunk = %q, want the Guide section only", got[0].Text)
	}
	if !strings.HasPrefix(got[1].Text, "## Install\n\nRun the installer") {
		t.Errorf("second chunk = %q, want it to start at the Install heading", got[1].Text)
	}
	if got[3].Text != "## Configure\n\nEdit the config file. Restart the service." {
		t.Errorf("last chunk = %q, want the whole Configure section", got[3].Text)
	}
}

func TestHeadingLinesInPlainText(t *testing.T) {
	in := "Some preface sentence.\nAnother line of the preface here.\n## Next part\nBody of the next part."
	opt := Options{Size: 20, Overlap: 5} // no overlap before a heading
	got := SplitText(in, opt)
	checkChunks(t, extract.Document{Text: in}, opt, got)
	want := []string{
		"Some preface sentence.\nAnother line of the preface here.",
		"## Next part\nBody of the next part.",
	}
	if diff := cmp.Diff(want, texts(got)); diff != "" {
		t.Errorf("chunks mismatch (-want +got):\n%s", diff)
	}
}

func TestPages(t *testing.T) {
	doc := assemble("report.pdf",
		extract.Section{Page: 1, Text: "Short first page."},
		extract.Section{Page: 2, Text: strings.Repeat("Second page sentence goes here. ", 5)},
		extract.Section{Page: 3, Text: "Third page."},
	)
	opt := Options{Size: 40, Overlap: 15}
	got := Split(doc, opt)
	checkChunks(t, doc, opt, got)
	var pages []int
	for _, c := range got {
		pages = append(pages, c.Page)
	}
	// A short page is a chunk of its own rather than joined with the next.
	if diff := cmp.Diff([]int{1, 2, 2, 3}, pages); diff != "" {
		t.Errorf("pages mismatch (-want +got):\n%s", diff)
	}
	if got[0].Text != "Short first page." || got[3].Text != "Third page." {
		t.Errorf("first and last chunks = %q, %q", got[0].Text, got[3].Text)
	}
	// The overlap repeats the end of page 2 only within page 2.
	if got[2].Start >= got[1].End {
		t.Errorf("chunks on page 2 do not overlap: %+v", got[1:3])
	}
}

func TestSameHeadingSectionsAreJoined(t *testing.T) {
	doc := assemble("data.csv",
		extract.Section{Heading: "rows 1-2", Text: "a; b"},
		extract.Section{Heading: "rows 1-2", Text: "c; d"},
		extract.Section{Heading: "rows 3-4", Text: "e; f"},
	)
	opt := Options{}
	got := Split(doc, opt)
	checkChunks(t, doc, opt, got)
	if diff := cmp.Diff([]string{"a; b\n\nc; d", "e; f"}, texts(got)); diff != "" {
		t.Errorf("chunks mismatch (-want +got):\n%s", diff)
	}
}

func TestBadSectionOffsetsDoNotPanic(t *testing.T) {
	doc := extract.Document{
		Name: "hand-made",
		Text: "東京タワー and more words here",
		Sections: []extract.Section{
			{Text: "x", Page: 1},
			{Text: "y", Page: 2, Offset: 1},   // inside 東: snapped to a rune start
			{Text: "z", Page: 3, Offset: -4},  // ignored
			{Text: "w", Page: 4, Offset: 999}, // ignored
		},
	}
	got := Split(doc, Options{Size: 3, Overlap: -1})
	reach := 0
	for _, c := range got {
		if doc.Text[c.Start:c.End] != c.Text || !utf8.ValidString(c.Text) {
			t.Fatalf("bad chunk %+v", c)
		}
		reach = c.End
	}
	if reach != len(doc.Text) {
		t.Errorf("chunks end at %d, want %d", reach, len(doc.Text))
	}
	if got[0].Text != "東" || got[0].Page != 1 || got[1].Page != 2 {
		t.Errorf("first chunks = %+v, want 東 on page 1 then page 2", got[:2])
	}
}

func TestLongWordIsSplitOnlyWhenLargerThanSize(t *testing.T) {
	word := strings.Repeat("ab", 400) + "é" // 801 runes: 267 units
	in := "before " + word + " after"
	opt := Options{Size: 100, Overlap: 20}
	got := SplitText(in, opt)
	checkChunks(t, extract.Document{Text: in}, opt, got)
	// The last piece (67 units) and "after" fit one chunk.
	want := []string{"before", word[:300], word[300:600], word[600:] + " after"}
	if diff := cmp.Diff(want, texts(got)); diff != "" {
		t.Errorf("chunks mismatch (-want +got):\n%s", diff)
	}

	// A word within Size is never split, even when it ends a long line.
	line := strings.Repeat("lorem ipsum dolor ", 50) + strings.Repeat("z", 90)
	got = SplitText(line, opt)
	checkChunks(t, extract.Document{Text: line}, opt, got)
	for i, c := range got {
		if strings.HasPrefix(c.Text, "z") && c.Text != strings.Repeat("z", 90) || strings.HasSuffix(c.Text, "ipsu") {
			t.Errorf("chunk %d = %q splits a word", i, c.Text)
		}
	}
}

func TestLongLineWithoutSentences(t *testing.T) {
	in := strings.Repeat("word ", 1000)
	opt := Options{Size: 100, Overlap: -1}
	got := SplitText(in, opt)
	checkChunks(t, extract.Document{Text: in}, opt, got)
	for i, c := range got[:len(got)-1] {
		if c.Units != 100 {
			t.Errorf("chunk %d has %d units, want a full 100 when only word boundaries exist", i, c.Units)
		}
	}
}

func TestOverlap(t *testing.T) {
	in := strings.Repeat("One two three four five. Six seven eight nine ten. ", 30)
	for _, overlap := range []int{10, 25, 40} {
		opt := Options{Size: 80, Overlap: overlap}
		got := SplitText(in, opt)
		checkChunks(t, extract.Document{Text: in}, opt, got)
		if len(got) < 3 {
			t.Fatalf("overlap %d: got %d chunks, want several", overlap, len(got))
		}
		for i := 1; i < len(got); i++ {
			prev, c := got[i-1], got[i]
			if c.Start >= prev.End {
				t.Fatalf("overlap %d: chunk %d starts at %d, after chunk %d ends at %d", overlap, i, c.Start, i-1, prev.End)
			}
			shared := in[c.Start:prev.End]
			if u := Units(shared); u > overlap || 2*u < overlap {
				t.Errorf("overlap %d: chunk %d repeats %q, %d units", overlap, i, shared, u)
			}
			// The repeated part starts at a sentence: here one begins
			// every 5 to 7 units.
			if !strings.HasPrefix(shared, "One") && !strings.HasPrefix(shared, "Six") {
				t.Errorf("overlap %d: chunk %d repeats %q, want it to start at a sentence", overlap, i, shared)
			}
		}
	}

	// Without sentences the overlap starts at a word.
	words := strings.Repeat("alpha beta gamma delta ", 40)
	opt := Options{Size: 50, Overlap: 10}
	got := SplitText(words, opt)
	checkChunks(t, extract.Document{Text: words}, opt, got)
	for i := 1; i < len(got); i++ {
		shared := words[got[i].Start:got[i-1].End]
		if u := Units(shared); u > 10 || u < 8 {
			t.Errorf("chunk %d repeats %q, %d units, want 8..10", i, shared, u)
		}
	}

	// Negative Overlap disables it.
	got = SplitText(in, Options{Size: 80, Overlap: -1})
	for i := 1; i < len(got); i++ {
		if got[i].Start < got[i-1].End {
			t.Errorf("Overlap -1: chunk %d overlaps chunk %d", i, i-1)
		}
	}
}

func TestJapaneseOverlapStartsAtSentence(t *testing.T) {
	in := strings.Repeat("吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。", 6)
	opt := Options{Size: 60, Overlap: 20}
	got := SplitText(in, opt)
	checkChunks(t, extract.Document{Text: in}, opt, got)
	for i := 1; i < len(got); i++ {
		shared := in[got[i].Start:got[i-1].End]
		if shared == "" || !strings.HasSuffix(shared, "。") || !(strings.HasPrefix(shared, "名前") || strings.HasPrefix(shared, "吾輩") || strings.HasPrefix(shared, "どこ")) {
			t.Errorf("chunk %d repeats %q, want whole sentences", i, shared)
		}
	}
}

func TestChunkDocument(t *testing.T) {
	c := Chunk{Text: "body", Source: "a.pdf", Page: 3, Heading: "Intro", Start: 10, End: 14, Index: 2, Units: 2}
	want := search.Document{
		ID:       "a.pdf#2",
		Index:    "kb",
		Title:    "Intro",
		Text:     "body",
		Metadata: map[string]string{"source": "a.pdf", "chunk": "2", "start": "10", "end": "14", "page": "3", "heading": "Intro"},
	}
	if diff := cmp.Diff(want, c.Document("kb")); diff != "" {
		t.Errorf("Document mismatch (-want +got):\n%s", diff)
	}
	plain := Chunk{Text: "x", Source: "n.txt", End: 1}.Document("kb")
	if _, ok := plain.Metadata["page"]; ok {
		t.Errorf("page metadata set for a chunk without page: %v", plain.Metadata)
	}
}

func TestManyParagraphs(t *testing.T) {
	// Many windows through the reused atom buffer, with overlap.
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "Sentence number %d ends here. ", i)
		if i%7 == 0 {
			b.WriteString("\n\n")
		}
	}
	in := b.String()
	opt := Options{Size: 120, Overlap: 30}
	checkChunks(t, extract.Document{Text: in}, opt, SplitText(in, opt))
}
