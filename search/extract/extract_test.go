package extract

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// extractOne runs Extract and requires exactly one valid document.
func extractOne(t *testing.T, name string, data []byte, lim *Limits) Document {
	t.Helper()
	docs, err := Extract(context.Background(), name, bytes.NewReader(data), lim)
	if err != nil {
		t.Fatalf("Extract(%q): %v", name, err)
	}
	if len(docs) != 1 {
		t.Fatalf("Extract(%q) = %d documents, want 1", name, len(docs))
	}
	checkDoc(t, docs[0])
	return docs[0]
}

// checkDoc verifies the invariants every Document keeps: Text is the
// sections joined with "\n\n" and each Offset points at its section.
func checkDoc(t *testing.T, d Document) {
	t.Helper()
	var parts []string
	for i, s := range d.Sections {
		if s.Text == "" {
			t.Errorf("%s: section %d is empty", d.Name, i)
		}
		if s.Offset < 0 || s.Offset+len(s.Text) > len(d.Text) || d.Text[s.Offset:s.Offset+len(s.Text)] != s.Text {
			t.Errorf("%s: section %d offset %d does not point at its text", d.Name, i, s.Offset)
		}
		parts = append(parts, s.Text)
	}
	if got := strings.Join(parts, "\n\n"); got != d.Text {
		t.Errorf("%s: Text is not the sections joined:\n%q\nvs\n%q", d.Name, d.Text, got)
	}
}

// headings lists the sections' headings.
func headings(d Document) []string {
	var out []string
	for _, s := range d.Sections {
		out = append(out, s.Heading)
	}
	return out
}

func TestText(t *testing.T) {
	d := extractOne(t, "notes.txt", []byte("  hello\nworld  \n"), nil)
	want := Document{Name: "notes.txt", MediaType: "text/plain", Text: "hello\nworld",
		Sections: []Section{{Text: "hello\nworld"}}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestMarkdown(t *testing.T) {
	src := "---\ntitle: \"Guide\"\n---\nIntro text.\n\n# Install\n\nRun it.\n\n```sh\n# not a heading\n```\n\n## Configure ##\n\nSet `X`.\n\nUsage\n-----\n\n#hashtag is text\n"
	d := extractOne(t, "guide.md", []byte(src), nil)
	if d.Title != "Guide" {
		t.Errorf("Title = %q, want front matter title", d.Title)
	}
	if diff := cmp.Diff([]string{"", "Install", "Configure", "Usage"}, headings(d)); diff != "" {
		t.Errorf("headings (-want +got)\n%s", diff)
	}
	if !strings.Contains(d.Sections[1].Text, "# not a heading") {
		t.Errorf("fenced code lost from its section: %q", d.Sections[1].Text)
	}
	if !strings.Contains(d.Sections[3].Text, "#hashtag is text") {
		t.Errorf("#hashtag line should stay text: %q", d.Sections[3].Text)
	}
	if strings.Contains(d.Text, "title:") {
		t.Errorf("front matter leaked into text: %q", d.Text)
	}

	d = extractOne(t, "readme.markdown", []byte("# Main Title\ntext\n"), nil)
	if d.Title != "Main Title" || d.MediaType != "text/markdown" {
		t.Errorf("Title, MediaType = %q, %q", d.Title, d.MediaType)
	}
}

func TestHTML(t *testing.T) {
	page := `<!DOCTYPE html><html><head><title>Refund policy</title>
<style>body{color:red}</style><script>var tracking = "SCRIPT_NOISE";</script></head>
<body>
<header class="site"><a href="/">Acme HEADER_NOISE</a></header>
<nav><ul><li>Home</li><li>NAV_NOISE</li></ul></nav>
<main>
  <article>
    <header><p>By Jane, 2026</p></header>
    <h1>Refunds</h1>
    <p>We refund   within <b>30 days</b>.</p>
    <h2>Exceptions</h2>
    <ul><li>Gift cards</li><li>Sale items</li></ul>
    <table><tr><th>Item</th><th>Days</th></tr><tr><td>Books</td><td>14</td></tr></table>
    <div hidden>HIDDEN_NOISE</div>
    <img src="x.png" alt="refund chart">
  </article>
  <aside>ASIDE_NOISE</aside>
</main>
<footer>FOOTER_NOISE</footer>
<script>SCRIPT_NOISE2()</script>
</body></html>`
	d := extractOne(t, "policy.html", []byte(page), nil)
	if d.Title != "Refund policy" {
		t.Errorf("Title = %q", d.Title)
	}
	for _, noise := range []string{"NOISE", "tracking", "color:red"} {
		if strings.Contains(d.Text, noise) {
			t.Errorf("text contains %q:\n%s", noise, d.Text)
		}
	}
	for _, want := range []string{"By Jane, 2026", "We refund within 30 days.", "- Gift cards", "Item | Days", "Books | 14", "refund chart"} {
		if !strings.Contains(d.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, d.Text)
		}
	}
	if diff := cmp.Diff([]string{"", "Refunds", "Exceptions"}, headings(d)); diff != "" {
		t.Errorf("headings (-want +got)\n%s", diff)
	}

	// Without <title>, the first <h1> names the page; no <main>: the body.
	d = extractOne(t, "page.htm", []byte(`<body><nav>NAV</nav><h1>Only H1</h1><p>Body text</p></body>`), nil)
	if d.Title != "Only H1" || strings.Contains(d.Text, "NAV") || !strings.Contains(d.Text, "Body text") {
		t.Errorf("got title %q text %q", d.Title, d.Text)
	}
}

func TestUnsupported(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"program.bin", []byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0}},
		{"sheet.xlsx", zipOf(t, map[string][]byte{"xl/workbook.xml": []byte("<workbook/>")})},
	} {
		_, err := Extract(context.Background(), tc.name, bytes.NewReader(tc.data), nil)
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: err = %v, want ErrUnsupported", tc.name, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.name) {
			t.Errorf("error %q does not name the file", err)
		}
	}
}

func TestDetectByContent(t *testing.T) {
	for _, tc := range []struct {
		name, media string
		data        []byte
	}{
		{"README", "text/plain", []byte("plain words")},
		{"index", "text/html", []byte("<!DOCTYPE html><html><body><p>hi</p></body></html>")},
		{"main.go", "text/plain", []byte("package main\n")},
		{"renamed.txt", "application/pdf", []byte("%PDF-1.4\n")},
		{"upload", "application/zip", zipOf(t, map[string][]byte{"a.txt": []byte("a")})},
		{"upload", mediaDOCX, zipOf(t, map[string][]byte{"word/document.xml": []byte("<w:document/>")})},
	} {
		if got := detect(tc.name, tc.data); got != tc.media {
			t.Errorf("detect(%q) = %q, want %q", tc.name, got, tc.media)
		}
	}
}

func TestLimits(t *testing.T) {
	ctx := context.Background()
	_, err := Extract(ctx, "big.txt", strings.NewReader(strings.Repeat("a", 2000)), &Limits{MaxFileBytes: 1000})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "big.txt") || !strings.Contains(err.Error(), "MaxFileBytes") {
		t.Errorf("err = %v, want ErrTooLarge naming file and limit", err)
	}
	_, err = Extract(ctx, "many.txt", strings.NewReader(strings.Repeat("a", 2000)), &Limits{MaxExtractedBytes: 1000})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "MaxExtractedBytes") {
		t.Errorf("err = %v, want ErrTooLarge for MaxExtractedBytes", err)
	}
	// CSV repeats headers on every row: the budget stops it while parsing.
	csv := strings.Repeat("h", 500) + ",b\n" + strings.Repeat("1,2\n", 100)
	_, err = Extract(ctx, "wide.csv", strings.NewReader(csv), &Limits{MaxExtractedBytes: 10000})
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("csv err = %v, want ErrTooLarge", err)
	}
	lim := &Limits{MaxFileBytes: 10}
	_, _ = Extract(ctx, "x.txt", strings.NewReader("abc"), lim)
	if *lim != (Limits{MaxFileBytes: 10}) {
		t.Errorf("Extract changed the caller's Limits: %+v", *lim)
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Extract(ctx, "a.txt", strings.NewReader("x"), nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}
