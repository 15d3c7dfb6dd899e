package extract

import (
	"strings"
)

// splitMarkdown splits Markdown text into sections at headings (ATX "# x"
// and setext "x\n===") outside fenced code blocks. Each section keeps its
// heading line, so the text reads as written; Heading holds the heading's
// plain text. The title is the front matter's "title:" or the first H1.
// Text before the first heading forms a section without a heading.
func splitMarkdown(text string) (title string, secs []Section) {
	lines := strings.SplitAfter(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	start := 0
	if fm, n := frontMatter(lines); n > 0 {
		title = fm
		start = n
	}
	var (
		cur     strings.Builder
		heading string
		fence   string // the fence that opened the current code block, "" outside
	)
	flush := func() {
		if strings.TrimSpace(cur.String()) != "" {
			secs = append(secs, Section{Text: cur.String(), Heading: heading})
		}
		cur.Reset()
	}
	for i := start; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if f := fenceOf(trimmed); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(f, fence) && strings.TrimLeft(trimmed, fence[:1]) == "":
				fence = ""
			}
			cur.WriteString(line)
			continue
		}
		if fence != "" {
			cur.WriteString(line)
			continue
		}
		if level, h, ok := atxHeading(line); ok {
			flush()
			heading = h
			if level == 1 && title == "" {
				title = h
			}
			cur.WriteString(line)
			continue
		}
		// Setext: a non-blank paragraph line underlined by === or ---. Only a
		// single-line paragraph is recognised, which covers practical use.
		if i+1 < len(lines) && trimmed != "" && !indentedCode(line) && isSetextUnderline(lines[i+1]) &&
			(i == start || strings.TrimSpace(lines[i-1]) == "") && !isListOrQuote(trimmed) {
			flush()
			heading = trimmed
			if strings.TrimSpace(lines[i+1])[0] == '=' && title == "" {
				title = trimmed
			}
			cur.WriteString(line)
			cur.WriteString(lines[i+1])
			i++
			continue
		}
		cur.WriteString(line)
	}
	flush()
	return title, secs
}

// frontMatter recognises a YAML front matter block ("---" ... "---") at the
// start and returns its title and the number of lines it spans.
func frontMatter(lines []string) (title string, n int) {
	if len(lines) == 0 || strings.TrimRight(lines[0], "\r\n") != "---" {
		return "", 0
	}
	for i := 1; i < len(lines) && i < 200; i++ {
		l := strings.TrimRight(lines[i], "\r\n")
		if l == "---" || l == "..." {
			return title, i + 1
		}
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "title" && title == "" {
			title = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return "", 0
}

// atxHeading parses "## Heading ##" (up to three leading spaces).
func atxHeading(line string) (level int, text string, ok bool) {
	s := strings.TrimRight(line, "\r\n")
	indent := len(s) - len(strings.TrimLeft(s, " "))
	if indent > 3 {
		return 0, "", false
	}
	s = s[indent:]
	for level < len(s) && s[level] == '#' {
		level++
	}
	if level == 0 || level > 6 {
		return 0, "", false
	}
	rest := s[level:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return 0, "", false // "#hashtag" is not a heading
	}
	rest = strings.TrimSpace(rest)
	// A closing sequence of #s is dropped when preceded by a space.
	if t := strings.TrimRight(rest, "#"); t != rest && (t == "" || strings.HasSuffix(t, " ") || strings.HasSuffix(t, "\t")) {
		rest = strings.TrimSpace(t)
	}
	return level, rest, true
}

// fenceOf returns the fence ("```" or "~~~", possibly longer) that starts
// line, or "".
func fenceOf(trimmed string) string {
	for _, c := range []string{"`", "~"} {
		n := len(trimmed) - len(strings.TrimLeft(trimmed, c))
		if n >= 3 {
			return trimmed[:n]
		}
	}
	return ""
}

func isSetextUnderline(line string) bool {
	s := strings.TrimSpace(line)
	if s == "" || indentedCode(line) {
		return false
	}
	return strings.Trim(s, "=") == "" || len(s) >= 2 && strings.Trim(s, "-") == ""
}

func indentedCode(line string) bool {
	return strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t")
}

func isListOrQuote(s string) bool {
	return strings.HasPrefix(s, "- ") || strings.HasPrefix(s, "* ") || strings.HasPrefix(s, "+ ") || strings.HasPrefix(s, ">")
}
