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
// becomes an error or a warning, never a crash. The page tree is walked
// here, not by the parser's Reader.Page, which loops forever on a tree
// whose Kids lead back to an ancestor (see pdfPages).
func parsePDF(ctx context.Context, data []byte) (title string, secs []Section, warns []string, err error) {
	var r *pdf.Reader
	if err := guard(func() error {
		var err error
		r, err = pdf.NewReader(newPDFReaderAt(data), int64(len(data)))
		return err
	}); err != nil {
		return "", nil, nil, fmt.Errorf("read pdf: %w", err)
	}
	var (
		pages []pdf.Page
		count int64
	)
	if err := guard(func() error {
		title = r.Trailer().Key("Info").Key("Title").Text()
		root := r.Trailer().Key("Root").Key("Pages")
		count = root.Key("Count").Int64()
		var err error
		pages, err = pdfPages(root, len(data))
		return err
	}); err != nil {
		return "", nil, nil, fmt.Errorf("read pdf: %w", err)
	}
	if count != int64(len(pages)) {
		warns = append(warns, fmt.Sprintf("the page tree holds %d pages, not the %d its Count says", len(pages), count))
	}
	fonts := make(map[string]*pdf.Font)
	var empty []int
	for i, p := range pages {
		n := i + 1
		if err := ctx.Err(); err != nil {
			return "", nil, nil, err
		}
		var text string
		err := guard(func() error {
			if err := inheritable(p.V); err != nil {
				return err
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
			warns = append(warns, fmt.Sprintf("page %d: text could not be read: %v", n, err))
			continue
		}
		text = cleanPDFText(text)
		if text == "" {
			empty = append(empty, n)
			continue
		}
		secs = append(secs, Section{Text: text, Page: n})
	}
	if len(empty) > 0 {
		warns = append(warns, fmt.Sprintf("%d of %d pages have no text layer (scanned?); they were not OCRed", len(empty), len(pages)))
	}
	return title, secs, warns, nil
}

// maxPDFTreeDepth bounds the nesting of a page tree; real files nest a few
// levels (a balanced tree of a million pages is about ten deep).
const maxPDFTreeDepth = 64

// errPDFCycle: a page tree or a page's Parent chain leads back to itself.
var errPDFCycle = errors.New("the page tree has a cycle (a node is its own ancestor)")

// pdfPages lists the pages of the tree under root in document order. It
// refuses a tree where a node comes back among its own descendants, deeper
// than maxPDFTreeDepth, or with more nodes than the file could hold (every
// object takes more than 16 bytes, so a tree walked as a DAG into billions
// of visits is refused too).
//
// The parser's Value has no object identity, so a node is known by its
// printed form, in which references stay "N 0 R": two nodes that print
// the same have the same Kids and walk the same way, so meeting an
// ancestor's form again is exactly a walk that would never end.
func pdfPages(root pdf.Value, size int) ([]pdf.Page, error) {
	if root.Key("Type").Name() != "Pages" {
		return nil, nil // as the parser: no page tree, no pages
	}
	budget := size/16 + 1
	var pages []pdf.Page
	ancestors := map[string]bool{}
	var walk func(node pdf.Value, depth int) error
	walk = func(node pdf.Value, depth int) error {
		if depth > maxPDFTreeDepth {
			return fmt.Errorf("the page tree nests deeper than %d levels", maxPDFTreeDepth)
		}
		key := node.String()
		if ancestors[key] {
			return errPDFCycle
		}
		ancestors[key] = true
		defer delete(ancestors, key)
		kids := node.Key("Kids")
		for i := 0; i < kids.Len(); i++ {
			if budget--; budget < 0 {
				return fmt.Errorf("the page tree has more nodes than a %d-byte file can hold", size)
			}
			kid := kids.Index(i)
			switch kid.Key("Type").Name() {
			case "Pages":
				if err := walk(kid, depth+1); err != nil {
					return err
				}
			case "Page":
				pages = append(pages, pdf.Page{V: kid})
			}
		}
		return nil
	}
	if err := walk(root, 0); err != nil {
		return nil, err
	}
	return pages, nil
}

// inheritable checks that the chain of Parents the parser follows to find a
// page's inherited Resources ends: it follows it without a limit.
func inheritable(page pdf.Value) error {
	seen := map[string]bool{}
	for v := page; !v.IsNull(); v = v.Key("Parent") {
		if !v.Key("Resources").IsNull() {
			return nil
		}
		key := v.String()
		if seen[key] || len(seen) > maxPDFTreeDepth {
			return fmt.Errorf("the page's Parent chain does not end: %w", errPDFCycle)
		}
		seen[key] = true
	}
	return nil
}

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
