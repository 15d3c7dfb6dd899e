package token

import (
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		name string
		opts *Options
		in   string
		want []string
	}{
		{"english default stems and drops stopwords", nil, "The Running dogs of Tokyo's parks", []string{"run", "dog", "tokyo", "park"}},
		{"english plain", &Options{DisableStemming: true, KeepStopwords: true}, "The Running dogs", []string{"the", "running", "dogs"}},
		{"apostrophe and numbers stay whole", &Options{DisableStemming: true}, "don't pay 1,000.50 now", []string{"don't", "pay", "1,000.50", "now"}},
		{"trailing punctuation splits", &Options{DisableStemming: true}, "end. 3, x'", []string{"end", "3", "x"}},
		{"accented letters", &Options{DisableStemming: true}, "Crème Brûlée", []string{"crème", "brûlée"}},
		{"full-width latin is normalised", &Options{DisableStemming: true}, "ＡＢＣ１２", []string{"abc12"}},
		{"chinese bigrams", nil, "北京大学", []string{"北京", "京大", "大学"}},
		{"single han is a unigram", nil, "中 文", []string{"中", "文"}},
		{"korean bigrams", nil, "안녕하세요 세계", []string{"안녕", "녕하", "하세", "세요", "세계"}},
		{"japanese bigrams", &Options{Japanese: JapaneseBigram}, "東京タワー", []string{"東京", "京タ", "タワ", "ワー"}},
		{"japanese kagome", &Options{Japanese: JapaneseKagome}, "東京タワーに行きました", []string{"東京", "タワー", "に", "行き", "まし", "た"}},
		{"japanese kagome with bigrams", &Options{Japanese: JapaneseKagomeBigram}, "梅雨とは", []string{"梅雨", "と", "は", "梅雨", "雨と", "とは"}},
		{"mixed japanese and english", &Options{Japanese: JapaneseKagome}, "GoのTesting", []string{"go", "の", "test"}},
		{"han without kana is chinese even in kagome mode", &Options{Japanese: JapaneseKagome}, "東京大学", []string{"東京", "京大", "大学"}},
		{"empty", nil, "", nil},
		{"only punctuation", nil, "... ,,, !!!", nil},
		{"invalid bytes separate words", &Options{DisableStemming: true}, "ab\xffcd", []string{"ab", "cd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := New(tt.opts).Tokens(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Tokens(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestDefaultJapaneseMode(t *testing.T) {
	got := New(nil).Tokens("東京タワー")
	want := New(&Options{Japanese: defaultJapanese}).Tokens("東京タワー")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("default mode differs from %v (-want +got):\n%s", defaultJapanese, diff)
	}
}

func FuzzTokens(f *testing.F) {
	for _, s := range []string{"hello world", "東京タワーに行きました", "北京大学", "안녕하세요", "don't 1,000", "ab\xffcd", "ｶﾀｶﾅ", "ー", "'''", "1.2.3.", "\u0301a"} {
		f.Add(s)
	}
	toks := []*Tokenizer{
		New(nil),
		New(&Options{Japanese: JapaneseKagome}),
		New(&Options{Japanese: JapaneseKagomeBigram, DisableStemming: true, KeepStopwords: true}),
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range toks {
			for _, term := range tok.Tokens(s) {
				if term == "" {
					t.Fatalf("Tokens(%q) returned an empty term", s)
				}
				if utf8.ValidString(s) && !utf8.ValidString(term) {
					t.Fatalf("Tokens(%q) returned invalid UTF-8 term %q", s, term)
				}
			}
		}
	})
}

func BenchmarkTokensEnglish(b *testing.B) {
	tok := New(nil)
	text := "Alterations of the architecture of cerebral white matter in the developing human brain can affect cortical development and result in functional disabilities."
	b.ReportAllocs()
	for b.Loop() {
		tok.Tokens(text)
	}
}

func BenchmarkTokensJapanese(b *testing.B) {
	text := "梅雨（つゆ、ばいう）は、北海道と小笠原諸島を除く日本、朝鮮半島南部、中国の南部から長江流域にかけての沿海部、および台湾など、東アジアの広範囲においてみられる特有の気象現象で、5月から7月にかけて来る曇りや雨の多い期間のこと。"
	for _, m := range []JapaneseMode{JapaneseBigram, JapaneseKagome, JapaneseKagomeBigram} {
		tok := New(&Options{Japanese: m})
		tok.Tokens(text) // load the dictionary outside the timing
		b.Run(m.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tok.Tokens(text)
			}
		})
	}
}
