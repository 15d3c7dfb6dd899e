package web

import (
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzReadable feeds web_fetch's HTML path (charset decoding, then
// readability or the plain-text fallback) hostile bytes: it must not
// panic, must return valid UTF-8 without markup it parsed, and must
// finish in bounded time.
func FuzzReadable(f *testing.F) {
	for _, seed := range []string{
		articlePage,
		"",
		"<",
		"<html><head><title>t</title><meta charset=shift_jis></head><body>\x82\xa0</body></html>",
		strings.Repeat("<div>", 600) + "deep",
		"<table><tr><td><table><tr><td>x",
		"<p>a<br><br><br>b</p><script>document.write('<p>')</script>",
		"<svg><foreignObject><math><mi><p>x</mi></svg>",
		"<noscript><img src=x></noscript><template><p>t</p></template>",
		"<a href=\"javascript:alert(1)\">link</a><base href=\"file:///\">",
		`<script type="application/ld+json">{"@type":"NewsArticle","headline":"h","author":{"name":["a",{"x":1}]}}</script><p>body</p>`,
		"\xef\xbb\xbf<p>BOM</p>\xff\xfe",
	} {
		f.Add([]byte(seed))
	}
	u, _ := url.Parse("https://example.com/a/b")
	f.Fuzz(func(t *testing.T, data []byte) {
		start := time.Now()
		text := decodeText(data, "text/html")
		p := readable([]byte(text), u)
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("%d bytes took %v", len(data), d)
		}
		for _, s := range []string{p.title, p.byline, p.text} {
			if !utf8.ValidString(s) {
				t.Fatalf("invalid UTF-8 out: %q", s)
			}
		}
		if strings.ContainsAny(p.title, "\n\t") {
			t.Fatalf("title has line breaks: %q", p.title)
		}
	})
}
