package extract

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// parseDOCX reads the paragraphs of word/document.xml. Paragraphs styled as
// headings 1–3 (by style name, so localized style ids such as "1" or
// "見出し1" work too, or by outline level) start sections. The title is
// the core properties' dc:title, else the first "Title"-styled paragraph.
// The package is inflated with the same limits as any archive entry.
func parseDOCX(data []byte, lim Limits) (title string, secs []Section, err error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return "", nil, fmt.Errorf("read docx: %w", err)
	}
	parts := map[string]*zip.File{}
	for _, f := range zr.File {
		parts[f.Name] = f
	}
	body, ok := parts["word/document.xml"]
	if !ok {
		return "", nil, errors.New("read docx: no word/document.xml (not a Word document?)")
	}
	read := func(f *zip.File) ([]byte, error) {
		b, err := readEntry(f, lim)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		return b, nil
	}
	styles := map[string]docxStyle{}
	if f, ok := parts["word/styles.xml"]; ok {
		if b, err := read(f); err == nil {
			styles = parseDOCXStyles(b)
		} else if errors.Is(err, ErrZipBomb) || errors.Is(err, ErrTooLarge) {
			return "", nil, err
		}
	}
	if f, ok := parts["docProps/core.xml"]; ok {
		if b, err := read(f); err == nil {
			title = coreTitle(b)
		}
	}
	b, err := read(body)
	if err != nil {
		return "", nil, err
	}
	paras, err := docxParagraphs(b, styles)
	if err != nil {
		return "", nil, err
	}
	var (
		cur     strings.Builder
		heading string
	)
	flush := func() {
		if cur.Len() > 0 {
			secs = append(secs, Section{Text: cur.String(), Heading: heading})
		}
		cur.Reset()
	}
	for _, p := range paras {
		if p.title && title == "" {
			title = p.text
		}
		if p.level >= 1 && p.level <= 3 {
			flush()
			heading = p.text
		}
		cur.WriteString(p.text)
		cur.WriteByte('\n')
	}
	flush()
	return title, secs, nil
}

// docxStyle is what matters of a paragraph style.
type docxStyle struct {
	level int // heading level 1–9, 0 when not a heading
	title bool
}

type docxPara struct {
	text  string
	level int
	title bool
}

// headingLevel reads "heading 2" / "Heading2" as 2.
func headingLevel(s string) int {
	s = strings.ToLower(strings.ReplaceAll(s, " ", ""))
	if n, ok := strings.CutPrefix(s, "heading"); ok {
		if l, err := strconv.Atoi(n); err == nil && l >= 1 && l <= 9 {
			return l
		}
	}
	return 0
}

// parseDOCXStyles maps style ids to heading levels using each style's
// name and outline level. Errors leave the map partial: styles only refine
// the sections.
func parseDOCXStyles(b []byte) map[string]docxStyle {
	out := map[string]docxStyle{}
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = false
	var id string
	var st docxStyle
	for {
		tok, err := d.Token()
		if err != nil {
			return out
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "style":
				id, st = xmlAttr(t, "styleId"), docxStyle{level: headingLevel(xmlAttr(t, "styleId"))}
				if strings.EqualFold(xmlAttr(t, "styleId"), "Title") {
					st.title = true
				}
			case "name":
				if l := headingLevel(xmlAttr(t, "val")); l > 0 {
					st.level = l
				}
				if strings.EqualFold(xmlAttr(t, "val"), "title") {
					st.title = true
				}
			case "outlineLvl":
				if l, err := strconv.Atoi(xmlAttr(t, "val")); err == nil && l >= 0 && l < 9 && st.level == 0 {
					st.level = l + 1
				}
			}
		case xml.EndElement:
			if t.Name.Local == "style" && id != "" {
				out[id] = st
				id = ""
			}
		}
	}
}

// docxParagraphs returns the non-empty paragraphs of a document.xml body.
// Only w:t text is kept (not deleted text or field codes); tabs and breaks
// become white space.
func docxParagraphs(b []byte, styles map[string]docxStyle) ([]docxPara, error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = false
	var (
		out    []docxPara
		cur    docxPara
		text   strings.Builder
		inText bool
		depth  int // nesting of w:p (text boxes hold paragraphs in paragraphs)
	)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			if len(out) > 0 || text.Len() > 0 {
				break // keep what was read of a truncated document
			}
			return nil, fmt.Errorf("parse word/document.xml: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "p":
				depth++
				if depth == 1 {
					cur = docxPara{}
					text.Reset()
				}
			case "pStyle":
				if s, ok := styles[xmlAttr(t, "val")]; ok {
					cur.level, cur.title = s.level, s.title
				} else {
					cur.level = headingLevel(xmlAttr(t, "val"))
					cur.title = strings.EqualFold(xmlAttr(t, "val"), "Title")
				}
			case "outlineLvl":
				if l, err := strconv.Atoi(xmlAttr(t, "val")); err == nil && l >= 0 && l < 9 {
					cur.level = l + 1
				}
			case "t":
				inText = true
			case "tab":
				text.WriteByte('\t')
			case "br", "cr":
				text.WriteByte('\n')
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "t":
				inText = false
			case "p":
				if depth > 0 {
					depth--
				}
				if depth == 0 {
					cur.text = strings.TrimSpace(text.String())
					if cur.text != "" {
						out = append(out, cur)
					}
					text.Reset()
				} else {
					text.WriteByte('\n')
				}
			}
		case xml.CharData:
			if inText {
				text.Write(t)
			}
		}
	}
	if s := strings.TrimSpace(text.String()); s != "" {
		out = append(out, docxPara{text: s, level: cur.level})
	}
	return out, nil
}

// coreTitle reads dc:title from docProps/core.xml.
func coreTitle(b []byte) string {
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = false
	in := false
	for {
		tok, err := d.Token()
		if err != nil {
			return ""
		}
		switch t := tok.(type) {
		case xml.StartElement:
			in = t.Name.Local == "title"
		case xml.CharData:
			if in {
				return strings.TrimSpace(string(t))
			}
		case xml.EndElement:
			in = false
		}
	}
}

// xmlAttr returns the value of the attribute with local name key.
func xmlAttr(t xml.StartElement, key string) string {
	for _, a := range t.Attr {
		if a.Name.Local == key {
			return a.Value
		}
	}
	return ""
}
