package extract

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
)

func benchPage() []byte {
	var b strings.Builder
	b.WriteString("<html><head><title>Bench</title><script>var x=1;</script></head><body><nav>menu</nav><main>")
	for i := range 200 {
		fmt.Fprintf(&b, "<h2>Section %d</h2><p>Paragraph %d with <a href='#'>a link</a> and <b>bold</b> text, 検索の例文。</p><ul><li>one</li><li>two</li></ul>", i, i)
	}
	b.WriteString("</main><footer>f</footer></body></html>")
	return []byte(b.String())
}

func BenchmarkExtractHTML(b *testing.B) {
	page := benchPage()
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Extract(context.Background(), "p.html", bytes.NewReader(page), nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExtractTXT(b *testing.B) {
	text := []byte(strings.Repeat("The quick brown fox jumps over the lazy dog. 日本語の文章。\n", 20000))
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Extract(context.Background(), "t.txt", bytes.NewReader(text), nil); err != nil {
			b.Fatal(err)
		}
	}
}
