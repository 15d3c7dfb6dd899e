package chunk

import (
	"strings"
	"testing"
)

func benchmarkSplit(b *testing.B, text string) {
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		SplitText(text, Options{})
	}
}

// About 1 MiB of each kind of text.
var (
	benchEnglish  = strings.Repeat(english+"\n\n", 1<<20/(len(english)+2))
	benchJapanese = strings.Repeat("吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。何でも薄暗いじめじめした所でニャーニャー泣いていた事だけは記憶している。\n\n", 1<<20/230)
	benchMixed    = strings.Repeat("Goは2009年に公開されたプログラミング言語です。 It was designed at Google by Robert Griesemer, Rob Pike and Ken Thompson.\n", 1<<20/150)
)

func BenchmarkSplitEnglish(b *testing.B)  { benchmarkSplit(b, benchEnglish) }
func BenchmarkSplitJapanese(b *testing.B) { benchmarkSplit(b, benchJapanese) }
func BenchmarkSplitMixed(b *testing.B)    { benchmarkSplit(b, benchMixed) }

func BenchmarkUnits(b *testing.B) {
	b.SetBytes(int64(len(benchEnglish)))
	b.ReportAllocs()
	for b.Loop() {
		Units(benchEnglish)
	}
}
