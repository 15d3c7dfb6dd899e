package extract

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// csvRowsPerSection is how many data rows make one section.
const csvRowsPerSection = 50

// parseCSV renders each data row as a line "header: value; header: value"
// (empty cells omitted) so that every chunk of a table carries its column
// names. Sections hold csvRowsPerSection rows; their Heading names the row
// range ("rows 51-100", data rows counted from 1), which is what a citation
// of a table needs. The delimiter is a tab for TSV, else whichever of
// comma, semicolon and tab is most frequent in the first line. budget caps
// the text produced: repeating headers can multiply a file's size.
func parseCSV(text string, tsv bool, budget int64) (secs []Section, warns []string, err error) {
	text = strings.TrimPrefix(text, "\uFEFF")
	r := csv.NewReader(strings.NewReader(text))
	r.Comma = sniffDelimiter(text, tsv)
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	r.ReuseRecord = true
	header, err := r.Read()
	if err == io.EOF {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("parse csv header: %w", err)
	}
	header = append([]string(nil), header...)
	for i, h := range header {
		header[i] = strings.TrimSpace(h)
		if header[i] == "" {
			header[i] = "column " + strconv.Itoa(i+1)
		}
	}
	var (
		cur   strings.Builder
		first = 1 // first data row of the current section
		row   = 0
		used  int64
	)
	flush := func() {
		if cur.Len() > 0 {
			secs = append(secs, Section{Text: cur.String(), Heading: fmt.Sprintf("rows %d-%d", first, row)})
			used += int64(cur.Len())
		}
		cur.Reset()
		first = row + 1
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				warns = append(warns, fmt.Sprintf("csv parse stopped at line %d: %v", pe.Line, pe.Err))
				break
			}
			return nil, nil, fmt.Errorf("parse csv: %w", err)
		}
		row++
		n := 0
		for i, v := range rec {
			v = strings.TrimSpace(v)
			if v == "" {
				continue
			}
			if n > 0 {
				cur.WriteString("; ")
			}
			if i < len(header) {
				cur.WriteString(header[i])
			} else {
				cur.WriteString("column " + strconv.Itoa(i+1))
			}
			cur.WriteString(": ")
			cur.WriteString(v)
			n++
		}
		if n > 0 {
			cur.WriteByte('\n')
		}
		if used+int64(cur.Len()) > budget {
			return nil, nil, fmt.Errorf("%w: csv text exceeds what MaxExtractedBytes leaves (%d bytes)", ErrTooLarge, budget)
		}
		if row%csvRowsPerSection == 0 {
			flush()
		}
	}
	flush()
	if row == 0 && len(header) > 0 {
		// A single line is data without a header, not a table of nothing.
		secs = []Section{{Text: strings.Join(header, "; ")}}
	}
	return secs, warns, nil
}

// sniffDelimiter picks the field separator from the first line.
func sniffDelimiter(text string, tsv bool) rune {
	if tsv {
		return '\t'
	}
	line, _, _ := strings.Cut(text, "\n")
	best, bestN := ',', strings.Count(line, ",")
	for _, c := range []rune{';', '\t'} {
		if n := strings.Count(line, string(c)); n > bestN {
			best, bestN = c, n
		}
	}
	return best
}
