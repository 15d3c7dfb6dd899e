package guard

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"
)

// streamAll feeds chunks to a scanner and returns everything it emitted.
func streamAll(t testing.TB, p Policy, holdBack int, chunks []string) (string, bool) {
	t.Helper()
	ctx := context.Background()
	s := NewStreamScanner(p, holdBack)
	var out strings.Builder
	for _, c := range chunks {
		safe, blocked := s.Next(ctx, c)
		out.WriteString(safe)
		if blocked {
			if more, _ := s.Next(ctx, "more"); more != "" {
				t.Errorf("scanner emitted %q after blocking", more)
			}
			return out.String(), true
		}
	}
	safe, blocked := s.Close(ctx)
	out.WriteString(safe)
	return out.String(), blocked
}

func TestStreamScannerSplitAtEveryPosition(t *testing.T) {
	const refusal = "[removed]"
	f := mustNew(t, &Options{Rules: []Rule{
		{Name: "leak", Keywords: []string{"sk-live-secret"}, Action: Block, Message: refusal},
		{Name: "zh", Keywords: []string{"绝密文件"}, Action: Block, Message: refusal},
	}})
	for _, phrase := range []string{"SK-LIVE-SECRET", "绝密文件"} {
		text := "Here is the answer: " + phrase + " and some more words after it. 完了。"
		// Split into three chunks at every pair of byte positions, including
		// positions inside multi-byte runes.
		for i := 0; i <= len(text); i++ {
			for j := i; j <= len(text); j++ {
				chunks := []string{text[:i], text[i:j], text[j:]}
				out, blocked := streamAll(t, f, 16, chunks)
				if !blocked || !strings.HasSuffix(out, refusal) {
					t.Fatalf("split %d,%d: not blocked: %q", i, j, out)
				}
				if sent := len(out) - len(refusal); sent > strings.Index(text, phrase) {
					t.Fatalf("split %d,%d: part of the blocked phrase reached the client: %q", i, j, out)
				}
				if !strings.HasPrefix(text, strings.TrimSuffix(out, refusal)) {
					t.Fatalf("split %d,%d: emitted text is not a prefix of the output: %q", i, j, out)
				}
			}
		}
		// One rune per chunk.
		var chunks []string
		for _, r := range text {
			chunks = append(chunks, string(r))
		}
		if out, blocked := streamAll(t, f, 16, chunks); !blocked || strings.Contains(out, string([]rune(phrase)[:2])) {
			t.Errorf("rune-by-rune: blocked=%v out=%q", blocked, out)
		}
	}
}

func TestStreamScannerPassesCleanText(t *testing.T) {
	f := mustNew(t, &Options{Rules: []Rule{{Name: "leak", Keywords: []string{"password"}, Action: Block}}})
	text := strings.Repeat("日本語のテキストとEnglish words. ", 20)
	for size := 1; size < 40; size += 7 {
		var chunks []string
		for b := []byte(text); len(b) > 0; {
			n := min(size, len(b))
			chunks = append(chunks, string(b[:n]))
			b = b[n:]
		}
		out, blocked := streamAll(t, f, DefaultHoldBack, chunks)
		if blocked || out != text {
			t.Fatalf("chunk size %d: blocked=%v, output changed", size, blocked)
		}
	}
}

func TestStreamScannerHoldsBackAndRecordsMatches(t *testing.T) {
	f := mustNew(t, &Options{Rules: []Rule{{Name: "brand", Keywords: []string{"acme"}, Action: Warn}}})
	s := NewStreamScanner(f, 8)
	ctx := context.Background()
	safe, _ := s.Next(ctx, "0123456789")
	if safe != "01" {
		t.Errorf("first chunk: emitted %q, want the text before the last 8 runes", safe)
	}
	s.Next(ctx, " acme ")
	s.Next(ctx, "ACME again")
	rest, blocked := s.Close(ctx)
	if blocked || !strings.HasSuffix(rest, "again") {
		t.Errorf("Close = %q, %v", rest, blocked)
	}
	d := s.Decision()
	// The overlapping scans saw "acme" several times; it is reported once.
	if d.Action != Warn || len(d.Matches) != 1 || d.Matches[0].Match != "acme" {
		t.Errorf("Decision = %+v, want warn with one match", d)
	}
	if got, _ := s.Close(ctx); got != "" {
		t.Errorf("second Close emitted %q", got)
	}
}

func FuzzStreamScanner(f *testing.F) {
	f.Add("hello world, the secret code is sk-live-secret ok", 3, 16)
	f.Add("绝密文件在这里", 1, 4)
	f.Add("\xe7\xbb\x9d\xe5", 2, 1)
	pol, err := New(&Options{Rules: []Rule{
		{Name: "leak", Keywords: []string{"sk-live-secret"}, Action: Block},
		{Name: "zh", Keywords: []string{"绝密文件"}, Action: Block},
		{Name: "re", Pattern: `(?i)pass(word)?\s*=\s*\S+`, Action: Block},
		{Name: "w", Keywords: []string{"acme"}, Action: Warn},
	}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string, chunkSize, holdBack int) {
		if chunkSize < 1 {
			chunkSize = 1
		}
		chunkSize = chunkSize%32 + 1
		holdBack %= 100
		var chunks []string
		for rest := text; rest != ""; {
			n := min(chunkSize, len(rest))
			chunks = append(chunks, rest[:n])
			rest = rest[n:]
		}
		out, blocked := streamAll(t, pol, holdBack, chunks)
		if blocked {
			if !strings.HasSuffix(out, DefaultBlockMessage) || !strings.HasPrefix(text, strings.TrimSuffix(out, DefaultBlockMessage)) {
				t.Fatalf("blocked output %q is not a prefix of %q plus the refusal", out, text)
			}
			return
		}
		if out != text {
			t.Fatalf("unblocked output %q != input %q", out, text)
		}
		if utf8.ValidString(text) && holdBack >= 16 {
			if strings.Contains(out, "sk-live-secret") || strings.Contains(out, "绝密文件") {
				t.Fatalf("blocked keyword passed: %q", out)
			}
		}
	})
}
