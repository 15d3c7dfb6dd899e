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

// roundTwoFile holds phrasings written after the first patterns; the
// broader category patterns were then written from its misses, so it is a
// tuning set now, like injectionFile.
var roundTwoFile = "testdata/injection_round2.jsonl"

// heldOutFile holds phrasings written after the patterns of both rounds and
// never used to tune them: its rates are the honest estimate of how the
// detector does on attacks it has not seen.
var heldOutFile = "testdata/injection_heldout.jsonl"

func loadInjectionCases(t testing.TB) []injectionCase {
	t.Helper()
	return loadCases(t, injectionFile)
}

func loadCases(t testing.TB, name string) []injectionCase {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []injectionCase
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		var c injectionCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s:%d: %v", name, line, err)
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
	rates(t, append(loadInjectionCases(t), loadCases(t, roundTwoFile)...), 0.90)
}

// TestInjectionRatesHeldOut reports the rates on the held-out phrasings.
// False positives must stay at most 5% there too; the detection floor is
// set below the measured rate so a regression shows, not to claim more.
func TestInjectionRatesHeldOut(t *testing.T) {
	rates(t, loadCases(t, heldOutFile), heldOutFloor)
}

// rates runs the detector over cases, logs detection and false-positive
// rates per language, and fails above 5% false positives or below
// minDetection.
func rates(t *testing.T, cases []injectionCase, minDetection float64) {
	t.Helper()
	f, err := New(&Options{Injection: true})
	if err != nil {
		t.Fatal(err)
	}
	type tally struct{ attacks, caught, harmless, flagged int }
	per := map[string]*tally{}
	total := &tally{}
	for _, c := range cases {
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
	if total.attacks < 30 || total.harmless < 30 {
		t.Fatalf("corpus has %d attacks and %d harmless cases; want at least 30 of each", total.attacks, total.harmless)
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
	if dr := float64(total.caught) / float64(total.attacks); dr < minDetection {
		t.Errorf("detection rate %.1f%%, want at least %.0f%%", 100*dr, 100*minDetection)
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

// heldOutFloor is just under the held-out detection rate measured when the
// set was written: 26.7% (8/30), with 0/30 false positives. Pattern
// matching generalises poorly to unseen phrasings; a classifier behind
// Policy is the way past it.
const heldOutFloor = 0.20
