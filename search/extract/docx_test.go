package extract

import (
	"archive/zip"
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const docxContentTypes = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
<Default Extension="xml" ContentType="application/xml"/>
<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>
</Types>`

// docxBody wraps paragraphs in a w:document.
func docxBody(paras string) string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` + paras + `</w:body></w:document>`
}

func para(style, text string) string {
	p := "<w:p>"
	if style != "" {
		p += `<w:pPr><w:pStyle w:val="` + style + `"/></w:pPr>`
	}
	return p + "<w:r><w:t>" + text + "</w:t></w:r></w:p>"
}

// zipOf builds a ZIP archive in memory, entries in name order.
func zipOf(t testing.TB, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(files[n]); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDOCX(t *testing.T) {
	body := docxBody(
		para("Title", "Employee Handbook") +
			para("", "Preface text.") +
			para("Heading1", "Introduction") +
			para("", "First paragraph.") +
			`<w:p><w:r><w:t xml:space="preserve">Second </w:t></w:r><w:r><w:tab/><w:t>paragraph.</w:t></w:r>` +
			`<w:r><w:delText>DELETED</w:delText></w:r><w:r><w:instrText>PAGEREF _Toc1</w:instrText></w:r></w:p>` +
			para("Heading2", "Details") +
			para("", "More text.") +
			para("Heading4", "Minor heading") +
			para("", "Still details.") +
			para("a1", "見出し") + // localized style id, named "heading 1" in styles.xml
			para("", "本文。"))
	styles := `<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
<w:style w:type="paragraph" w:styleId="a1"><w:name w:val="heading 1"/></w:style></w:styles>`
	data := zipOf(t, map[string][]byte{
		"[Content_Types].xml": []byte(docxContentTypes),
		"word/document.xml":   []byte(body),
		"word/styles.xml":     []byte(styles),
	})
	d := extractOne(t, "handbook.docx", data, nil)
	if d.Title != "Employee Handbook" {
		t.Errorf("Title = %q", d.Title)
	}
	if diff := cmp.Diff([]string{"", "Introduction", "Details", "見出し"}, headings(d)); diff != "" {
		t.Errorf("headings (-want +got)\n%s", diff)
	}
	if want := "Introduction\nFirst paragraph.\nSecond \tparagraph."; d.Sections[1].Text != want {
		t.Errorf("section 1 = %q, want %q", d.Sections[1].Text, want)
	}
	if !strings.Contains(d.Sections[2].Text, "Minor heading\nStill details.") {
		t.Errorf("Heading4 should not start a section: %q", d.Sections[2].Text)
	}
	if strings.Contains(d.Text, "DELETED") || strings.Contains(d.Text, "PAGEREF") {
		t.Errorf("deleted text or field codes leaked: %q", d.Text)
	}

	// Sniffed without an extension.
	d = extractOne(t, "upload", data, nil)
	if d.MediaType != mediaDOCX {
		t.Errorf("MediaType = %q", d.MediaType)
	}
}

func TestDOCXCoreTitleAndBroken(t *testing.T) {
	core := `<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Core Title</dc:title></cp:coreProperties>`
	data := zipOf(t, map[string][]byte{
		"word/document.xml": []byte(docxBody(para("", "Body"))),
		"docProps/core.xml": []byte(core),
	})
	if d := extractOne(t, "a.docx", data, nil); d.Title != "Core Title" || d.Text != "Body" {
		t.Errorf("got %q / %q", d.Title, d.Text)
	}
	if _, err := Extract(t.Context(), "b.docx", bytes.NewReader(zipOf(t, map[string][]byte{"x.xml": nil})), nil); err == nil || !strings.Contains(err.Error(), "word/document.xml") {
		t.Errorf("err = %v, want missing word/document.xml", err)
	}
}

func TestDOCXBomb(t *testing.T) {
	bomb := zerosZip(t, "word/document.xml", 200<<20)
	_, err := Extract(t.Context(), "evil.docx", bytes.NewReader(bomb), nil)
	if !errors.Is(err, ErrZipBomb) || !strings.Contains(err.Error(), "evil.docx") || !strings.Contains(err.Error(), "word/document.xml") {
		t.Errorf("err = %v, want ErrZipBomb naming the file and part", err)
	}
}
