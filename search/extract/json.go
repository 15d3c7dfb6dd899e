package extract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// parseJSON renders JSON as indented text, keeping the document's key
// order. A top-level array yields one section per item (Heading "[i]");
// several top-level values (JSON Lines) are treated like an array. The
// printer streams tokens into a budget so that deep nesting, whose
// indentation grows quadratically, cannot blow up memory.
func parseJSON(text string, budget int64) ([]Section, error) {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	p := &jsonPrinter{d: d, budget: budget}
	var secs []Section
	add := func(heading string) {
		secs = append(secs, Section{Text: p.b.String(), Heading: heading})
		p.used += int64(p.b.Len())
		p.b.Reset()
	}
	n := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("parse json: %w", err)
		}
		if delim, ok := tok.(json.Delim); ok && delim == '[' && n == 0 {
			// Top-level array: one section per item.
			i := 0
			for d.More() {
				if err := p.value(0); err != nil {
					return nil, err
				}
				add("[" + strconv.Itoa(i) + "]")
				i++
			}
			if _, err := d.Token(); err != nil { // ']'
				return nil, fmt.Errorf("parse json: %w", err)
			}
			n++
			continue
		}
		if err := p.printToken(tok, 0); err != nil {
			return nil, err
		}
		add("[" + strconv.Itoa(n) + "]")
		n++
	}
	if n == 1 && len(secs) == 1 && !strings.HasPrefix(strings.TrimSpace(text), "[") {
		secs[0].Heading = "" // a single object or scalar has no item index
	}
	return secs, nil
}

// maxJSONDepth bounds the nesting the printer follows.
const maxJSONDepth = 1000

// jsonPrinter writes indented JSON from a token stream.
type jsonPrinter struct {
	d      *json.Decoder
	b      bytes.Buffer
	used   int64 // bytes of earlier sections
	budget int64
}

// value prints the next value at the given depth.
func (p *jsonPrinter) value(depth int) error {
	tok, err := p.d.Token()
	if err != nil {
		return fmt.Errorf("parse json: %w", err)
	}
	return p.printToken(tok, depth)
}

// printToken prints tok and, when it opens an object or array, its contents.
func (p *jsonPrinter) printToken(tok json.Token, depth int) error {
	if p.used+int64(p.b.Len()) > p.budget {
		return fmt.Errorf("%w: json text exceeds what MaxExtractedBytes leaves (%d bytes)", ErrTooLarge, p.budget)
	}
	if depth > maxJSONDepth {
		// Recursion is bounded so that "[[[[..." cannot exhaust the stack.
		return fmt.Errorf("parse json: nested deeper than %d levels", maxJSONDepth)
	}
	switch t := tok.(type) {
	case json.Delim:
		closing := byte(']')
		if t == '{' {
			closing = '}'
		}
		p.b.WriteByte(byte(t))
		empty := true
		for p.d.More() {
			if !empty {
				p.b.WriteByte(',')
			}
			empty = false
			p.newline(depth + 1)
			if t == '{' {
				key, err := p.d.Token()
				if err != nil {
					return fmt.Errorf("parse json: %w", err)
				}
				k, ok := key.(string)
				if !ok {
					return errors.New("parse json: object key is not a string")
				}
				p.str(k)
				p.b.WriteString(": ")
			}
			if err := p.value(depth + 1); err != nil {
				return err
			}
		}
		if _, err := p.d.Token(); err != nil {
			return fmt.Errorf("parse json: %w", err)
		}
		if !empty {
			p.newline(depth)
		}
		p.b.WriteByte(closing)
	case string:
		p.str(t)
	case json.Number:
		p.b.WriteString(t.String())
	case bool:
		p.b.WriteString(strconv.FormatBool(t))
	case nil:
		p.b.WriteString("null")
	}
	return nil
}

func (p *jsonPrinter) newline(depth int) {
	p.b.WriteByte('\n')
	for range depth {
		p.b.WriteString("  ")
	}
}

// str writes s quoted, leaving non-ASCII text readable.
func (p *jsonPrinter) str(s string) {
	enc := json.NewEncoder(&p.b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // cannot fail for a string
	p.b.Truncate(p.b.Len() - 1)
}
