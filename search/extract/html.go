package extract

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// parseHTML extracts the main content of an HTML page. Scripts, styles,
// navigation, asides and the site's header and footer are dropped; when the
// page marks its content with <main> or <article>, only that is read. The
// title comes from <title>, else the first <h1>. Headings h1–h3 start
// sections.
func parseHTML(data []byte) (title string, secs []Section, err error) {
	text, err := decodeHTML(data)
	if err != nil {
		return "", nil, err
	}
	doc, err := html.Parse(strings.NewReader(text))
	if err != nil {
		return "", nil, err
	}
	if t := find(doc, atom.Title); t != nil {
		title = collapse(textOf(t))
	}
	if title == "" {
		if h := find(doc, atom.H1); h != nil {
			title = collapse(textOf(h))
		}
	}
	root := find(doc, atom.Main)
	if root == nil {
		root = find(doc, atom.Article)
	}
	if root == nil {
		root = find(doc, atom.Body)
	}
	if root == nil {
		root = doc
	}
	w := &htmlWriter{}
	w.walk(root, false, 0)
	w.flush()
	return title, w.secs, nil
}

// decodeHTML converts data to UTF-8: a BOM or a <meta charset> decides;
// otherwise DetectEncoding guesses, as for plain text.
func decodeHTML(data []byte) (string, error) {
	enc, name, certain := charset.DetermineEncoding(data, "")
	if !certain && name == "windows-1252" {
		// No BOM, no declaration: the prescan defaults to windows-1252.
		// Our detector also knows Shift_JIS and EUC-JP.
		text, _ := decodeText(data)
		return text, nil
	}
	out, err := enc.NewDecoder().Bytes(data)
	if err != nil {
		return string(bytes.ToValidUTF8(data, []byte("\uFFFD"))), nil
	}
	return string(out), nil
}

// find returns the first element of type a in document order.
func find(n *html.Node, a atom.Atom) *html.Node { return findDepth(n, a, 0) }

// maxHTMLDepth bounds recursion: content nested deeper than this is
// ignored, so a page of a million nested <div>s cannot exhaust the stack.
const maxHTMLDepth = 512

func findDepth(n *html.Node, a atom.Atom, depth int) *html.Node {
	if n.Type == html.ElementNode && n.DataAtom == a {
		return n
	}
	if depth > maxHTMLDepth {
		return nil
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := findDepth(c, a, depth+1); f != nil {
			return f
		}
	}
	return nil
}

// textOf returns all text below n.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node, int)
	walk = func(n *html.Node, depth int) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			b.WriteByte(' ')
		}
		if depth > maxHTMLDepth {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

// collapse replaces runs of white space with one space and trims.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// htmlWriter accumulates text as lines and sections.
type htmlWriter struct {
	secs    []Section
	heading string
	sec     strings.Builder // finished lines of the current section
	line    strings.Builder // the line being built, white space collapsed
	space   bool            // a space is pending before the next word
}

// skipped elements never hold main content.
var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Nav: true, atom.Aside: true, atom.Head: true, atom.Svg: true,
	atom.Iframe: true, atom.Object: true, atom.Canvas: true, atom.Button: true,
	atom.Select: true, atom.Dialog: true,
}

// skippedRoles are ARIA landmarks of page chrome.
var skippedRoles = map[string]bool{
	"navigation": true, "banner": true, "contentinfo": true, "complementary": true, "search": true,
}

// blocks break lines.
var blocks = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true, atom.Main: true,
	atom.Header: true, atom.Footer: true, atom.Ul: true, atom.Ol: true, atom.Li: true,
	atom.Dl: true, atom.Dt: true, atom.Dd: true, atom.Table: true, atom.Tr: true,
	atom.Thead: true, atom.Tbody: true, atom.Tfoot: true, atom.Caption: true,
	atom.Blockquote: true, atom.Pre: true, atom.Figure: true, atom.Figcaption: true,
	atom.H4: true, atom.H5: true, atom.H6: true, atom.Hr: true, atom.Address: true,
	atom.Details: true, atom.Summary: true, atom.Form: true, atom.Fieldset: true,
}

// walk writes the text below n. inContent is true below <main>, <article>
// or <section>, where <header> and <footer> belong to the content (an
// article's byline) rather than to the site's chrome.
func (w *htmlWriter) walk(n *html.Node, inContent bool, depth int) {
	if depth > maxHTMLDepth {
		return
	}
	switch n.Type {
	case html.TextNode:
		w.text(n.Data)
		return
	case html.ElementNode:
	case html.DocumentNode:
	default:
		return
	}
	if n.Type == html.ElementNode {
		if skipped[n.DataAtom] || skippedRoles[strings.ToLower(attr(n, "role"))] || hasAttr(n, "hidden") || attr(n, "aria-hidden") == "true" {
			return
		}
		switch n.DataAtom {
		case atom.Header, atom.Footer:
			if !inContent {
				return
			}
		case atom.Main, atom.Article, atom.Section:
			inContent = true
		case atom.H1, atom.H2, atom.H3:
			w.flush()
			w.heading = collapse(textOf(n))
			w.sec.WriteString(w.heading)
			w.sec.WriteByte('\n')
			return
		case atom.Br:
			w.endLine()
			return
		case atom.Pre:
			w.endLine()
			w.sec.WriteString(strings.Trim(textOf(n), "\n"))
			w.sec.WriteByte('\n')
			return
		case atom.Td, atom.Th:
			w.space = w.line.Len() > 0
			if w.space {
				w.line.WriteString(" |")
			}
		case atom.Img:
			if alt := collapse(attr(n, "alt")); alt != "" {
				w.text(alt)
			}
			return
		}
		if blocks[n.DataAtom] {
			w.endLine()
			defer w.endLine()
		}
		if n.DataAtom == atom.Li {
			w.line.WriteString("- ")
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.walk(c, inContent, depth+1)
	}
}

// text appends s with white space collapsed.
func (w *htmlWriter) text(s string) {
	if s == "" {
		return
	}
	if isSpaceByte(s[0]) {
		w.space = true
	}
	for i, f := range strings.Fields(s) {
		if (i > 0 || w.space) && w.line.Len() > 0 && !strings.HasSuffix(w.line.String(), "- ") {
			w.line.WriteByte(' ')
		}
		w.line.WriteString(f)
		w.space = false
	}
	if isSpaceByte(s[len(s)-1]) {
		w.space = true
	}
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' }

// endLine finishes the current line, if any.
func (w *htmlWriter) endLine() {
	if l := strings.TrimSpace(w.line.String()); l != "" && l != "-" {
		w.sec.WriteString(l)
		w.sec.WriteByte('\n')
	}
	w.line.Reset()
	w.space = false
}

// flush finishes the current section.
func (w *htmlWriter) flush() {
	w.endLine()
	if s := w.sec.String(); strings.TrimSpace(s) != "" {
		w.secs = append(w.secs, Section{Text: s, Heading: w.heading})
	}
	w.sec.Reset()
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return strings.TrimSpace(a.Val)
		}
	}
	return ""
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}
