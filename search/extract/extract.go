// Package extract turns uploaded files into text with enough structure
// (page numbers, headings, byte offsets) for a knowledge base to cite where
// an answer came from.
//
// Extract picks a parser from the file name's extension and, when the
// extension is missing or unknown, from the content itself:
//
//	docs, err := extract.Extract(ctx, "handbook.zip", f, nil) // nil: default Limits
//	for _, d := range docs {
//		for _, s := range d.Sections {
//			fmt.Println(d.Name, s.Page, s.Heading, s.Offset, len(s.Text))
//		}
//	}
//
// Supported: plain text, Markdown, HTML, PDF (text layer), DOCX, CSV/TSV,
// JSON (and JSON Lines), ZIP archives (recursively, one Document per entry)
// and PNG/JPEG images (OCR through the tesseract binary when it is
// installed). Text files may be UTF-8, UTF-16 with a byte order mark,
// Shift_JIS or EUC-JP; see DetectEncoding for the heuristic.
//
// Everything happens in memory: nothing from an archive is ever written to
// disk, so entry names such as "../../etc/passwd" are only names. Limits
// bounds the memory and time an upload can cost; breaking a limit yields
// ErrTooLarge or ErrZipBomb, and a type this package cannot read yields
// ErrUnsupported. Inside an archive, an entry that cannot be read (an
// unsupported type, a damaged PDF, an image without OCR) becomes a Document
// with a Warning instead of failing the whole archive; only a broken limit or
// a cancelled context aborts it.
package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"time"
	"unicode/utf8"
)

// Errors returned (wrapped, with the file name and the limit) by Extract.
var (
	// ErrUnsupported means the file type cannot be extracted.
	ErrUnsupported = errors.New("unsupported file type")
	// ErrTooLarge means a file or the extracted text exceeds a size limit.
	ErrTooLarge = errors.New("too large")
	// ErrZipBomb means an archive inflates suspiciously (ratio, entry count,
	// nesting depth) and was refused before it was inflated.
	ErrZipBomb = errors.New("zip bomb suspected")
)

// Section is one structural unit of a document: a page of a PDF, the text
// under a heading, a group of CSV rows.
type Section struct {
	// Text is the section's text; never empty.
	Text string
	// Page is the 1-based page number, 0 when the format has no pages.
	Page int
	// Heading is the nearest heading above the text, when known.
	Heading string
	// Offset is the byte offset of Text within Document.Text.
	Offset int
}

// Document is the text extracted from one file (or one archive entry).
type Document struct {
	// Name is the file name; for archive entries it is the archive's name,
	// a slash and the entry's path ("archive.zip/inner/path.txt").
	Name string
	// MediaType is the detected type, e.g. "application/pdf".
	MediaType string
	// Title is the document's own title (HTML <title>, PDF Info, DOCX core
	// properties, first Markdown H1), when it has one.
	Title string
	// Sections hold the text in document order.
	Sections []Section
	// Text is all sections' texts joined with "\n\n".
	Text string
	// Warnings say what was skipped or guessed (encoding, missing OCR, a
	// page that could not be read).
	Warnings []string
}

// Limits bounds what one call of Extract may cost. Zero fields take their
// defaults; a nil *Limits means all defaults.
type Limits struct {
	// MaxFileBytes caps the size of the uploaded file and of every archive
	// entry after inflation. Default 50 MiB.
	MaxFileBytes int64
	// MaxExtractedBytes caps the total text of all documents produced by one
	// call. Default 100 MiB.
	MaxExtractedBytes int64
	// MaxZipEntries caps the number of files in all archives of one call,
	// nested ones included. Default 1000.
	MaxZipEntries int
	// MaxZipDepth caps how deeply archives may nest; the uploaded archive is
	// depth 1. Default 3.
	MaxZipDepth int
	// MaxZipRatio caps inflated/compressed size, per entry and for a whole
	// archive. Amounts under 1 MiB are exempt: tiny repetitive files
	// legitimately compress better than 100x and cannot hurt. Default 100.
	MaxZipRatio float64
	// OCRTimeout bounds one tesseract run on an image. Default 2 minutes.
	OCRTimeout time.Duration
	// Timeout bounds one call. Extract stops at it between steps;
	// Isolated kills the child process running the parsers, so that it
	// holds even for a parser stuck in a loop. Default 60 seconds.
	Timeout time.Duration
	// MaxMemory caps the memory of the child process Isolated runs the
	// parsers in, beyond what it holds at start (the file and its text
	// count against it). Default 1 GiB. Extract does not enforce it.
	MaxMemory int64
}

// Defaults of Limits.
const (
	DefaultMaxFileBytes      = 50 << 20
	DefaultMaxExtractedBytes = 100 << 20
	DefaultMaxZipEntries     = 1000
	DefaultMaxZipDepth       = 3
	DefaultMaxZipRatio       = 100
	DefaultOCRTimeout        = 2 * time.Minute
	DefaultTimeout           = 60 * time.Second
	DefaultMaxMemory         = 1 << 30
)

// withDefaults returns a copy of l with zero fields set to their defaults;
// the caller's Limits are never changed.
func (l *Limits) withDefaults() Limits {
	var out Limits
	if l != nil {
		out = *l
	}
	if out.MaxFileBytes <= 0 {
		out.MaxFileBytes = DefaultMaxFileBytes
	}
	if out.MaxExtractedBytes <= 0 {
		out.MaxExtractedBytes = DefaultMaxExtractedBytes
	}
	if out.MaxZipEntries <= 0 {
		out.MaxZipEntries = DefaultMaxZipEntries
	}
	if out.MaxZipDepth <= 0 {
		out.MaxZipDepth = DefaultMaxZipDepth
	}
	if out.MaxZipRatio <= 0 {
		out.MaxZipRatio = DefaultMaxZipRatio
	}
	if out.OCRTimeout <= 0 {
		out.OCRTimeout = DefaultOCRTimeout
	}
	if out.Timeout <= 0 {
		out.Timeout = DefaultTimeout
	}
	if out.MaxMemory <= 0 {
		out.MaxMemory = DefaultMaxMemory
	}
	return out
}

// Media types reported in Document.MediaType.
const (
	mediaText     = "text/plain"
	mediaMarkdown = "text/markdown"
	mediaHTML     = "text/html"
	mediaPDF      = "application/pdf"
	mediaDOCX     = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	mediaCSV      = "text/csv"
	mediaTSV      = "text/tab-separated-values"
	mediaJSON     = "application/json"
	mediaZIP      = "application/zip"
	mediaPNG      = "image/png"
	mediaJPEG     = "image/jpeg"
)

// byExtension maps lower-case extensions to media types.
var byExtension = map[string]string{
	".txt": mediaText, ".text": mediaText, ".log": mediaText,
	".md": mediaMarkdown, ".markdown": mediaMarkdown, ".mdown": mediaMarkdown,
	".html": mediaHTML, ".htm": mediaHTML, ".xhtml": mediaHTML,
	".pdf":  mediaPDF,
	".docx": mediaDOCX,
	".csv":  mediaCSV, ".tsv": mediaTSV,
	".json": mediaJSON, ".jsonl": mediaJSON, ".ndjson": mediaJSON,
	".zip": mediaZIP,
	".png": mediaPNG, ".jpg": mediaJPEG, ".jpeg": mediaJPEG,
}

// Extract reads the file called name from r and returns its text: one
// Document, or one per entry for a ZIP archive. lim may be nil for defaults.
//
// Extract parses in the calling goroutine: a parser that loops on a
// hostile file cannot be stopped. Files from outside go through Isolated.
func Extract(ctx context.Context, name string, r io.Reader, lim *Limits) ([]Document, error) {
	l := lim.withDefaults()
	data, err := readFile(name, r, l)
	if err != nil {
		return nil, err
	}
	return extractData(ctx, name, data, l, "")
}

func readFile(name string, r io.Reader, l Limits) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, l.MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("extract %s: read: %w", name, err)
	}
	if int64(len(data)) > l.MaxFileBytes {
		return nil, fmt.Errorf("extract %s: %w: file exceeds MaxFileBytes (%d bytes)", name, ErrTooLarge, l.MaxFileBytes)
	}
	return data, nil
}

// extractData is Extract once the file is read; l has its defaults and
// tesseract, when not "", is the OCR binary.
func extractData(ctx context.Context, name string, data []byte, l Limits, tesseract string) ([]Document, error) {
	ctx, cancel := context.WithTimeout(ctx, l.Timeout)
	defer cancel()
	x := &extractor{lim: l, tesseract: tesseract}
	if err := x.file(ctx, name, data, 0); err != nil {
		return nil, err
	}
	return x.docs, nil
}

// extractor holds the state of one Extract call: the limits and what has
// been spent of them. It is used by one goroutine.
type extractor struct {
	lim       Limits
	tesseract string // the OCR binary; "" looks it up in PATH
	docs      []Document
	textLen   int64 // total bytes of Document.Text produced so far
	entries   int   // archive entries seen so far, all archives included
}

// file extracts one file; zipDepth is how many archives enclose it.
func (x *extractor) file(ctx context.Context, name string, data []byte, zipDepth int) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("extract %s: %w", name, err)
	}
	media := detect(name, data)
	if media == "" {
		return fmt.Errorf("extract %s: %w (supported: txt, md, html, pdf, docx, csv, tsv, json, zip, png, jpg)", name, ErrUnsupported)
	}
	if media == mediaZIP {
		return x.zip(ctx, name, data, zipDepth+1)
	}
	doc, err := x.parse(ctx, name, media, data)
	if err != nil {
		return err
	}
	return x.add(doc)
}

// parse runs the parser for media.
func (x *extractor) parse(ctx context.Context, name, media string, data []byte) (Document, error) {
	doc := Document{Name: name, MediaType: media}
	var (
		secs []Section
		err  error
	)
	switch media {
	case mediaText:
		var text string
		text, doc.Warnings = decodeText(data)
		secs = []Section{{Text: text}}
	case mediaMarkdown:
		var text string
		text, doc.Warnings = decodeText(data)
		doc.Title, secs = splitMarkdown(text)
	case mediaHTML:
		doc.Title, secs, err = parseHTML(data)
	case mediaPDF:
		doc.Title, secs, doc.Warnings, err = parsePDF(ctx, data)
	case mediaDOCX:
		doc.Title, secs, err = parseDOCX(data, x.lim)
	case mediaCSV, mediaTSV:
		var text string
		text, doc.Warnings = decodeText(data)
		var w []string
		secs, w, err = parseCSV(text, media == mediaTSV, x.remaining())
		doc.Warnings = append(doc.Warnings, w...)
	case mediaJSON:
		var text string
		text, doc.Warnings = decodeText(data)
		secs, err = parseJSON(text, x.remaining())
	case mediaPNG, mediaJPEG:
		var text, warn string
		text, warn, err = ocr(ctx, x.tesseract, data, x.lim.OCRTimeout)
		if warn != "" {
			doc.Warnings = append(doc.Warnings, warn)
		}
		secs = []Section{{Text: text}}
	default:
		return doc, fmt.Errorf("extract %s: %w: %s", name, ErrUnsupported, media)
	}
	if err != nil {
		return doc, fmt.Errorf("extract %s: %w", name, err)
	}
	assemble(&doc, secs)
	return doc, nil
}

// remaining is how many bytes of text may still be produced.
func (x *extractor) remaining() int64 { return x.lim.MaxExtractedBytes - x.textLen }

// add appends doc, enforcing MaxExtractedBytes.
func (x *extractor) add(doc Document) error {
	x.textLen += int64(len(doc.Text))
	if x.textLen > x.lim.MaxExtractedBytes {
		return fmt.Errorf("extract %s: %w: extracted text exceeds MaxExtractedBytes (%d bytes)", doc.Name, ErrTooLarge, x.lim.MaxExtractedBytes)
	}
	x.docs = append(x.docs, doc)
	return nil
}

// assemble drops empty sections, trims the rest and joins them into
// doc.Text, recording each section's offset.
func assemble(doc *Document, secs []Section) {
	var b strings.Builder
	out := secs[:0]
	for _, s := range secs {
		s.Text = strings.TrimSpace(s.Text)
		if s.Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		s.Offset = b.Len()
		b.WriteString(s.Text)
		out = append(out, s)
	}
	if len(out) == 0 {
		out = nil
	}
	doc.Sections = out
	doc.Text = b.String()
	doc.Title = strings.TrimSpace(doc.Title)
}

// detect returns the media type of a file, or "" when it is unsupported.
// A known extension decides, except that binary formats are trusted by
// their magic bytes (a PDF renamed to .txt is still a PDF). Without a known
// extension, the content decides; a ZIP with an unknown extension (.xlsx,
// .pptx, .jar, .epub) is some other container format and is refused rather
// than unpacked as if it were an archive of documents.
func detect(name string, data []byte) string {
	ext := strings.ToLower(path.Ext(name))
	switch {
	case bytes.HasPrefix(data, []byte("%PDF-")):
		return mediaPDF
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return mediaPNG
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return mediaJPEG
	}
	if m, ok := byExtension[ext]; ok {
		return m
	}
	if bytes.HasPrefix(data, []byte("PK\x03\x04")) || bytes.HasPrefix(data, []byte("PK\x05\x06")) {
		if ext != "" {
			return ""
		}
		if isDOCX(data) {
			return mediaDOCX
		}
		return mediaZIP
	}
	switch ct := http.DetectContentType(data); {
	case strings.HasPrefix(ct, "text/html"):
		return mediaHTML
	case strings.HasPrefix(ct, "text/plain"):
		return mediaText
	}
	// DetectContentType calls Shift_JIS and EUC-JP text binary when it has
	// no BOM; accept anything that decodes to text without control bytes.
	if looksLikeText(data) {
		return mediaText
	}
	return ""
}

// looksLikeText reports whether data (its first 4 KiB) has no NUL or other
// control bytes besides whitespace and decodes in some supported encoding.
func looksLikeText(data []byte) bool {
	head := data
	if len(head) > 4096 {
		head = head[:4096]
	}
	for _, c := range head {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' {
			return false
		}
	}
	if utf8.Valid(head) {
		return true
	}
	enc := DetectEncoding(head)
	return enc == "Shift_JIS" || enc == "EUC-JP"
}
