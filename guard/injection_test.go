package guard

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

type injectionCase struct {
	Lang   string `json:"lang"`
	Attack bool   `json:"attack"`
	Family string `json:"family"` // expected family for attacks; a note for harmless text
	Text   string `json:"text"`
}

var injectionFile = "testdata/injection.jsonl"

func loadInjectionCases(t testing.TB) []injectionCase {
	t.Helper()
	f, err := os.Open(injectionFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []injectionCase
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		var c injectionCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("testdata/injection.jsonl:%d: %v", line, err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// TestInjectionRates measures the detector on hand-written attacks and
// harmless look-alikes (security questions, quoted instructions, everyday
// requests that share words with attacks) in English, Chinese and Japanese.
func TestInjectionRates(t *testing.T) {
	f, err := New(&Options{Injection: true})
	if err != nil {
		t.Fatal(err)
	}
	type tally struct{ attacks, caught, harmless, flagged int }
	per := map[string]*tally{}
	total := &tally{}
	for _, c := range loadInjectionCases(t) {
		d := f.Check(context.Background(), Input{Direction: DirectionInput, Messages: []Message{{Role: RoleUser, Text: c.Text}}})
		blocked := d.Action == Block
		if per[c.Lang] == nil {
			per[c.Lang] = &tally{}
		}
		for _, tl := range []*tally{per[c.Lang], total} {
			if c.Attack {
				tl.attacks++
				if blocked {
					tl.caught++
				}
			} else {
				tl.harmless++
				if blocked {
					tl.flagged++
				}
			}
		}
		switch {
		case c.Attack && !blocked:
			t.Logf("missed %s attack (%s): %q", c.Lang, c.Family, c.Text)
		case !c.Attack && blocked:
			t.Logf("false positive %s (%s): %q -> %+v", c.Lang, c.Family, c.Text, d.Matches)
		}
	}
	if total.attacks < 60 || total.harmless < 60 {
		t.Fatalf("corpus has %d attacks and %d harmless cases; want at least 60 of each", total.attacks, total.harmless)
	}
	for _, lang := range []string{"en", "zh", "ja", "all"} {
		tl := per[lang]
		if lang == "all" {
			tl = total
		}
		t.Logf("%-3s detection %5.1f%% (%d/%d)  false positives %4.1f%% (%d/%d)", lang,
			100*float64(tl.caught)/float64(tl.attacks), tl.caught, tl.attacks,
			100*float64(tl.flagged)/float64(tl.harmless), tl.flagged, tl.harmless)
	}
	if fp := float64(total.flagged) / float64(total.harmless); fp > 0.05 {
		t.Errorf("false-positive rate %.1f%%, want at most 5%%", 100*fp)
	}
	if dr := float64(total.caught) / float64(total.attacks); dr < 0.90 {
		t.Errorf("detection rate %.1f%%, want at least 90%%", 100*dr)
	}
}

func TestHasQuote(t *testing.T) {
	const quotes = "\"'`“”‘’「」『』«»"
	for _, s := range []string{"", "plain text", "中文「引号」", "a “b” c", "«x»", "it's", "`x`", "日本語の文章です。", "½ ¼ ’", "ア『イ", "\u00a0\u2014\u300a"} {
		if got, want := hasQuote(s), strings.ContainsAny(s, quotes); got != want {
			t.Errorf("hasQuote(%q) = %v, want %v", s, got, want)
		}
	}
	for r := rune(0); r < 0x10000; r++ {
		s := "ab" + string(r) + "cd"
		if got, want := hasQuote(s), strings.ContainsAny(s, quotes); got != want {
			t.Fatalf("hasQuote(%q) = %v, want %v", s, got, want)
		}
	}
}
