package extract

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding/japanese"
)

func FuzzMarkdown(f *testing.F) {
	f.Add("# A\ntext\n## B ##\n```\n# no\n```\nSetext\n===\n")
	f.Add("---\ntitle: x\n---\n~~~~\n~~~\n# in\n~~~~\n#\n")
	f.Add("    # indented\n- list\n---\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, secs := splitMarkdown(s)
		for _, sec := range secs {
			if strings.TrimSpace(sec.Text) == "" {
				t.Fatalf("empty section from %q", s)
			}
		}
	})
}

func FuzzCSV(f *testing.F) {
	f.Add("a,b\n1,2\n\"x,\"\"y\",3\n", false)
	f.Add("a\tb\n1\t2\t3\n", true)
	f.Add("\"unterminated\n1,2", false)
	f.Fuzz(func(t *testing.T, s string, tsv bool) {
		secs, _, err := parseCSV(s, tsv, 1<<20)
		if err != nil {
			return
		}
		for _, sec := range secs {
			var a, b int
			if sec.Heading == "" {
				continue // a single line without data rows
			}
			if _, err := fmt.Sscanf(sec.Heading, "rows %d-%d", &a, &b); err != nil || a < 1 || b < a {
				t.Fatalf("bad row range %q from %q", sec.Heading, s)
			}
		}
	})
}

func FuzzDOCXXML(f *testing.F) {
	f.Add([]byte(docxBody(para("Heading1", "H")+para("", "p"))), []byte(`<w:styles><w:style w:styleId="1"><w:name w:val="heading 2"/><w:pPr><w:outlineLvl w:val="1"/></w:pPr></w:style></w:styles>`))
	f.Add([]byte("<w:p><w:p><w:t>x</w:t></w:p>"), []byte(""))
	f.Add([]byte("<w:t>unclosed"), []byte("<w:style"))
	f.Fuzz(func(t *testing.T, doc, styles []byte) {
		st := parseDOCXStyles(styles)
		paras, err := docxParagraphs(doc, st)
		if err != nil {
			return
		}
		for _, p := range paras {
			if p.text == "" {
				t.Fatal("empty paragraph returned")
			}
		}
		_ = coreTitle(doc)
	})
}

func FuzzDetectEncoding(f *testing.F) {
	sjis, _ := japanese.ShiftJIS.NewEncoder().Bytes([]byte("日本語のテキスト"))
	euc, _ := japanese.EUCJP.NewEncoder().Bytes([]byte("日本語のテキスト"))
	f.Add(sjis)
	f.Add(euc)
	f.Add([]byte("\xff\xfeh\x00i\x00"))
	f.Add([]byte("caf\xe9"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if DetectEncoding(b) == "" {
			t.Fatal("no encoding named")
		}
		s, _ := decodeText(b)
		if !utf8.ValidString(s) {
			t.Fatalf("decodeText returned invalid UTF-8 for %q", b)
		}
	})
}

func FuzzJSON(f *testing.F) {
	f.Add(`[{"a":1},{"b":[1,2,{"c":null}]},"s"]`)
	f.Add("{\"a\":1}\n{\"a\":2}\n")
	f.Add(`[[[[[`)
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = parseJSON(s, 1<<20)
	})
}

// FuzzExtract drives every parser, archives included, through the public
// entry point; the extension picks the parser.
func FuzzExtract(f *testing.F) {
	exts := []string{".txt", ".md", ".html", ".pdf", ".docx", ".csv", ".json", ".zip", ""}
	f.Add(uint8(2), []byte("<main><h2>x</h2><p>y</p><table><tr><td>1</td></tr></table></main>"))
	f.Add(uint8(3), buildPDF(f, "1.4", "t", "Hello", "World"))
	f.Add(uint8(4), zipOf(f, map[string][]byte{"word/document.xml": []byte(docxBody(para("Heading1", "H")))}))
	f.Add(uint8(7), zipOf(f, map[string][]byte{"a.md": []byte("# a"), "b.zip": zipOf(f, map[string][]byte{"c.csv": []byte("a\n1")})}))
	f.Fuzz(func(t *testing.T, ext uint8, data []byte) {
		name := "f" + exts[int(ext)%len(exts)]
		lim := &Limits{MaxFileBytes: 1 << 20, MaxExtractedBytes: 4 << 20, MaxZipEntries: 50, OCRTimeout: 1}
		docs, err := Extract(context.Background(), name, bytes.NewReader(data), lim)
		if err != nil {
			return
		}
		for _, d := range docs {
			checkDoc(t, d)
		}
	})
}

func FuzzHTML(f *testing.F) {
	f.Add([]byte(`<main><article><header>h</header><h1>T</h1><p>a<br>b</p><pre> x </pre><table><tr><td>1<td>2</table></article></main>`))
	f.Add([]byte(`<meta charset="euc-jp"><body><nav>n</nav><div hidden>x</div><li><img alt="a">`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, secs, err := parseHTML(b)
		if err != nil {
			return
		}
		for _, s := range secs {
			if strings.TrimSpace(s.Text) == "" {
				t.Fatalf("empty section from %q", b)
			}
		}
	})
}
