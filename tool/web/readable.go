package web

import (
	"bytes"
	"net/url"
	"regexp"
	"strings"

	readability "codeberg.org/readeck/go-readability/v2"
	"codeberg.org/readeck/go-readability/v2/render"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxReadableElements bounds the elements of a page that readability
// scores. Its scoring walks the tree several times and some steps are
// quadratic in bad cases, so a page past this (a real article has a few
// thousand) is read as plain text instead: linear, and still complete.
const maxReadableElements = 20000

// page is what web_fetch reads out of an HTML document.
type page struct {
	title, byline, text string
}

// readable turns an HTML document into its main text, with readability
// (the algorithm of Firefox's reader view) dropping navigation, ads,
// sidebars and footers. A page readability finds no article in, or one
// too large to score, is read whole as text (scripts, styles and hidden
// elements left out). It never fails: HTML parsing accepts any bytes.
func readable(body []byte, pageURL *url.URL) page {
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		// The parser gives up on elements nested past its limit (512).
		return tokenText(body)
	}
	title := documentTitle(doc)
	if countElements(doc, maxReadableElements+1) <= maxReadableElements {
		p := readability.NewParser()
		p.MaxElemsToParse = maxReadableElements
		if a, err := p.ParseAndMutate(doc, pageURL); err == nil && a.Node != nil {
			if text := normalizeText(render.InnerText(a.Node)); text != "" {
				return page{title: oneLine(cmpOr(a.Title(), title)), byline: oneLine(a.Byline()), text: text}
			}
		}
		// readability changed doc; read the page afresh.
		if doc, err = html.Parse(bytes.NewReader(body)); err != nil {
			return tokenText(body)
		}
	}
	return page{title: title, text: normalizeText(render.InnerText(bodyOf(doc)))}
}

// tokenText reads the text of a document the parser refused, token by
// token: the text outside scripts, styles and the like, a line break at
// each block element.
func tokenText(body []byte) page {
	var b strings.Builder
	var title strings.Builder
	z := html.NewTokenizer(bytes.NewReader(body))
	skip, inTitle := 0, false
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return page{title: oneLine(title.String()), text: normalizeText(b.String())}
		case html.TextToken:
			switch {
			case inTitle:
				title.Write(z.Text())
			case skip == 0:
				b.Write(z.Text())
			}
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			switch a {
			case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Iframe:
				if tt == html.StartTagToken {
					skip++
				} else if tt == html.EndTagToken && skip > 0 {
					skip--
				}
			case atom.Title:
				inTitle = tt == html.StartTagToken
			case atom.P, atom.Div, atom.Br, atom.Li, atom.Tr, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
				atom.Section, atom.Article, atom.Header, atom.Footer, atom.Table, atom.Ul, atom.Ol, atom.Pre, atom.Blockquote:
				b.WriteByte('\n')
			default:
				b.WriteByte(' ')
			}
		}
	}
}

// countElements counts the element nodes of n, stopping at limit.
func countElements(n *html.Node, limit int) int {
	count := 0
	// An explicit stack: a hostile page may nest deeper than is good
	// for recursion.
	stack := []*html.Node{n}
	for len(stack) > 0 && count < limit {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Type == html.ElementNode {
			count++
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			stack = append(stack, c)
		}
	}
	return count
}

// documentTitle is the text of the document's first <title>.
func documentTitle(doc *html.Node) string {
	stack := []*html.Node{doc}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Type == html.ElementNode && n.DataAtom == atom.Title {
			var b strings.Builder
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.TextNode {
					b.WriteString(c.Data)
				}
			}
			return oneLine(b.String())
		}
		if n.Type == html.ElementNode && n.DataAtom == atom.Body {
			continue
		}
		for c := n.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, c)
		}
	}
	return ""
}

// bodyOf is the document's <body>, or the document when it has none.
func bodyOf(doc *html.Node) *html.Node {
	for h := doc.FirstChild; h != nil; h = h.NextSibling {
		if h.Type != html.ElementNode || h.DataAtom != atom.Html {
			continue
		}
		for b := h.FirstChild; b != nil; b = b.NextSibling {
			if b.Type == html.ElementNode && b.DataAtom == atom.Body {
				return b
			}
		}
	}
	return doc
}

var (
	blankLines    = regexp.MustCompile(`\n[ \t\r\f\v]*(\n[ \t\r\f\v]*)+`)
	trailingSpace = regexp.MustCompile(`[ \t\r\f\v]+\n`)
)

// normalizeText trims the text, drops trailing spaces and keeps at most
// one blank line between paragraphs.
func normalizeText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = trailingSpace.ReplaceAllString(s, "\n")
	s = blankLines.ReplaceAllString(s, "\n\n")
	return strings.TrimSpace(s)
}
