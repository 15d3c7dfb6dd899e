package extract

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// buildPDF writes a minimal valid PDF with one page per text, Helvetica,
// an Info title and an xref table whose offsets are computed here.
func buildPDF(t testing.TB, version, title string, pages ...string) []byte {
	t.Helper()
	n := len(pages)
	// Objects: 1 catalog, 2 pages, 3 font, 4 info, then page/content pairs.
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"", // pages, filled below
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		fmt.Sprintf("<< /Title (%s) >>", title),
	}
	var kids []string
	for i, text := range pages {
		page := 5 + 2*i
		kids = append(kids, fmt.Sprintf("%d 0 R", page))
		content := fmt.Sprintf("BT /F1 12 Tf 72 712 Td (%s) Tj ET", text)
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", page+1),
			fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n)

	var b bytes.Buffer
	fmt.Fprintf(&b, "%%PDF-%s\n%%\xe2\xe3\xcf\xd3\n", version)
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R /Info 4 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

func TestPDF(t *testing.T) {
	for _, version := range []string{"1.4", "2.0"} {
		t.Run(version, func(t *testing.T) {
			data := buildPDF(t, version, "Test Manual", "Hello PDF", "Second page")
			d := extractOne(t, "manual.pdf", data, nil)
			want := []Section{
				{Text: "Hello PDF", Page: 1, Offset: 0},
				{Text: "Second page", Page: 2, Offset: len("Hello PDF\n\n")},
			}
			if diff := cmp.Diff(want, d.Sections); diff != "" {
				t.Errorf("sections (-want +got)\n%s", diff)
			}
			if d.Title != "Test Manual" || d.MediaType != "application/pdf" {
				t.Errorf("Title, MediaType = %q, %q", d.Title, d.MediaType)
			}
		})
	}
}

func TestPDFEmptyPage(t *testing.T) {
	d := extractOne(t, "scan.pdf", buildPDF(t, "1.4", "Scan", "Text", ""), nil)
	if len(d.Sections) != 1 || d.Sections[0].Page != 1 {
		t.Errorf("sections = %+v", d.Sections)
	}
	if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "no text layer") {
		t.Errorf("warnings = %q", d.Warnings)
	}
}

func TestPDFMalformed(t *testing.T) {
	good := buildPDF(t, "1.4", "T", "Hello PDF", "Two")
	for name, data := range map[string][]byte{
		"header only":  []byte("%PDF-1.4\n"),
		"truncated":    good[:len(good)/2],
		"garbage xref": bytes.Replace(good, []byte("xref\n0"), []byte("xref\nZ"), 1),
		"bad offsets":  bytes.Replace(good, []byte("0000000009 00000 n"), []byte("0000009999 00000 n"), 1),
	} {
		// Must return (error or warnings), never panic.
		_, _ = Extract(context.Background(), name+".pdf", bytes.NewReader(data), nil)
	}
}

// A page Count larger than the page tree must not loop over phantom pages.
func TestPDFLyingCount(t *testing.T) {
	data := buildPDF(t, "1.4", "T", "Only page")
	data = bytes.Replace(data, []byte("/Count 1"), []byte("/Count 9"), 1)
	d := extractOne(t, "lie.pdf", data, nil)
	if d.Text != "Only page" || len(d.Warnings) != 1 {
		t.Errorf("text %q warnings %q", d.Text, d.Warnings)
	}
}
