package chunk

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentcraftlab/agentcraft/search/extract"
)

func FuzzSplit(f *testing.F) {
	seeds := []string{
		"",
		"Hello, world. This is a test.\n\nNew paragraph here!",
		"今日は天気が良い。公園へ行った。「楽しかった。」と言った。",
		"Goは2009年に公開された。 It is fast.",
		"# Title\n\nText.\n## Sub\nMore text.",
		strings.Repeat("x", 500),
		"ab\xffcd \xe3\x81 \xe3\x81\x82 end.",
		"\u3000全角　スペース\u2028line\u2029para",
		"... !!! ??? 。。。 」」」",
	}
	for i, s := range seeds {
		f.Add(s, uint8(i*7), int8(i-3), uint8(i*37))
	}
	f.Fuzz(func(t *testing.T, text string, size uint8, overlap int8, cuts uint8) {
		opt := Options{Size: int(size % 64), Overlap: int(overlap)}
		checkChunks(t, extract.Document{Text: text}, opt, SplitText(text, opt))

		doc := sectioned(text, cuts)
		checkChunks(t, doc, opt, Split(doc, opt))
	})
}

// sectioned cuts text at rune boundaries into up to 8 sections, as extract
// would produce them, with pages and headings derived from cuts.
func sectioned(text string, cuts uint8) extract.Document {
	var secs []extract.Section
	n := int(cuts%8) + 1
	step := len(text)/n + 1
	for i := 0; len(text) > 0; i++ {
		end := min(step, len(text))
		for end < len(text) && !utf8.RuneStart(text[end]) {
			end++
		}
		part := text[:end]
		text = text[end:]
		sec := extract.Section{Text: part}
		if cuts&0x40 != 0 {
			sec.Page = i/2 + 1
		}
		if cuts&0x80 != 0 {
			sec.Heading = string(rune('A' + i%3))
		}
		secs = append(secs, sec)
	}
	return assemble("fuzz.txt", secs...)
}
