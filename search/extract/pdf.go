package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/ledongthuc/pdf"
)

// parsePDF extracts the text layer, one section per page with Page set.
// Pages without text (scans) are skipped with a warning: rasterizing a PDF
// for OCR needs tools this package does not assume. The parser panics on
// some malformed files; every call into it is guarded so that a bad upload
// becomes an error or a warning, never a crash.
func parsePDF(ctx context.Context, data []byte) (title string, secs []Section, warns []string, err error) {
	var r *pdf.Reader
	if err := guard(func() error {
		var err error
		r, err = pdf.NewReader(newPDFReaderAt(data), int64(len(data)))
		return err
	}); err != nil {
		return "", nil, nil, fmt.Errorf("read pdf: %w", err)
	}
	var pages int
	_ = guard(func() error {
		pages = r.NumPage()
		title = r.Trailer().Key("Info").Key("Title").Text()
		return nil
	})
	// Count comes from the file: a lying Count must not make us loop
	// billions of times. Every page object takes more than 16 bytes.
	if pages > len(data)/16 {
		pages = len(data) / 16
	}
	fonts := make(map[string]*pdf.Font)
	var empty []int
	for i := 1; i <= pages; i++ {
		if err := ctx.Err(); err != nil {
			return "", nil, nil, err
		}
		var text string
		err := guard(func() error {
			p := r.Page(i)
			if p.V.IsNull() {
				return errNoPage
			}
			for _, name := range p.Fonts() {
				if _, ok := fonts[name]; !ok {
					f := p.Font(name)
					fonts[name] = &f
				}
			}
			var err error
			text, err = p.GetPlainText(fonts)
			return err
		})
		if err != nil {
			warns = append(warns, fmt.Sprintf("page %d: text could not be read: %v", i, err))
			if errors.Is(err, errNoPage) {
				break // the page tree is shorter than its Count
			}
			continue
		}
		text = cleanPDFText(text)
		if text == "" {
			empty = append(empty, i)
			continue
		}
		secs = append(secs, Section{Text: text, Page: i})
	}
	if len(empty) > 0 {
		warns = append(warns, fmt.Sprintf("%d of %d pages have no text layer (scanned?); they were not OCRed", len(empty), pages))
	}
	return title, secs, warns, nil
}

var errNoPage = errors.New("page not found in the page tree")

// guard runs f, turning a panic into an error.
func guard(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("malformed pdf: %v", p)
		}
	}()
	return f()
}

var blankLines = regexp.MustCompile(`\n[ \t]*\n([ \t]*\n)+`)

// cleanPDFText trims lines and collapses runs of blank lines.
func cleanPDFText(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r", "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.TrimSpace(blankLines.ReplaceAllString(strings.Join(lines, "\n"), "\n\n"))
}

// pdfVersionShim presents a "%PDF-2.x" header as "%PDF-1.7": the parser
// refuses headers above 1.7, yet PDF 2.0 files keep the same text syntax.
type pdfVersionShim struct {
	r      io.ReaderAt
	major2 bool
}

func newPDFReaderAt(data []byte) pdfVersionShim {
	return pdfVersionShim{r: bytes.NewReader(data), major2: bytes.HasPrefix(data, []byte("%PDF-2."))}
}

func (s pdfVersionShim) ReadAt(p []byte, off int64) (int, error) {
	n, err := s.r.ReadAt(p, off)
	if s.major2 {
		for i := 0; i < n && off+int64(i) < 8; i++ {
			switch off + int64(i) {
			case 5:
				p[i] = '1'
			case 7:
				p[i] = '7'
			}
		}
	}
	return n, err
}
