package transform

import (
	"fmt"
	"strings"
)

// MaxRenderBytes bounds what Render produces, so that a template repeating
// a large input cannot exhaust memory.
const MaxRenderBytes = 8 << 20

// Render replaces every {{reference}} in tmpl with the referenced value as
// text (see [Text]). References, with optional spaces inside the braces:
//
//	{{input}}                 data.Input
//	{{vars.<name>}}           data.Vars[name]
//	{{nodes.<id>.output}}     data.Nodes[id]
//
// Each may continue into a structured value with the [Extract] syntax:
// {{nodes.plan.output.items[0].title}}, {{vars.user["first name"]}}.
//
// A reference to a variable, node or field that does not exist, an
// unknown root such as {{foo}}, or a "{{" without "}}" is an error naming
// the reference and its position; nothing is silently left empty. There is
// no escape for a literal "{{"; a lone "}}" is kept as text.
func Render(tmpl string, data Data) (string, error) {
	var b strings.Builder
	rest := tmpl
	for {
		open := strings.Index(rest, "{{")
		if open < 0 {
			if b.Len()+len(rest) > MaxRenderBytes {
				return "", renderTooLarge()
			}
			b.WriteString(rest)
			return b.String(), nil
		}
		b.WriteString(rest[:open])
		ref, after, err := cutReference(tmpl, rest[open:])
		if err != nil {
			return "", err
		}
		v, err := lookup(ref, data)
		if err != nil {
			return "", fmt.Errorf("template: {{%s}} at character %d: %w", ref, len(tmpl)-len(rest)+open+1, err)
		}
		s, err := Text(v)
		if err != nil {
			return "", fmt.Errorf("template: {{%s}}: %w", ref, err)
		}
		if b.Len()+len(s) > MaxRenderBytes {
			return "", renderTooLarge()
		}
		b.WriteString(s)
		rest = after
	}
}

func renderTooLarge() error {
	return fmt.Errorf("template: the result exceeds %d bytes: %w", MaxRenderBytes, ErrTooLarge)
}

// Resolve is Render for a template that may stand for a whole value: if
// tmpl is exactly one reference (spaces around it allowed), it returns the
// referenced value unchanged, so "{{nodes.plan.output}}" keeps a list a
// list; otherwise it returns the rendered string.
func Resolve(tmpl string, data Data) (any, error) {
	t := strings.TrimSpace(tmpl)
	if strings.HasPrefix(t, "{{") {
		ref, after, err := cutReference(tmpl, t)
		if err == nil && after == "" {
			v, err := lookup(ref, data)
			if err != nil {
				return nil, fmt.Errorf("template: {{%s}}: %w", ref, err)
			}
			return v, nil
		}
	}
	return Render(tmpl, data)
}

// cutReference splits s, which starts with "{{", into the trimmed
// reference and the text after its "}}".
func cutReference(tmpl, s string) (ref, after string, err error) {
	end := strings.Index(s, "}}")
	if end < 0 {
		return "", "", fmt.Errorf("template: \"{{\" at character %d has no closing \"}}\"", len(tmpl)-len(s)+1)
	}
	return strings.TrimSpace(s[2:end]), s[end+2:], nil
}

// lookup resolves one reference (without braces) against data.
func lookup(ref string, data Data) (any, error) {
	root, rest := splitName(ref)
	switch root {
	case "input":
		return walkRest(data.Input, rest, "input")
	case "vars":
		name, rest, ok := memberName(rest)
		if !ok {
			return nil, fmt.Errorf("want vars.<name>: %w", ErrReference)
		}
		v, ok := data.Vars[name]
		if !ok {
			return nil, fmt.Errorf("variable %q is not set (set: %s): %w", name, keyList(data.Vars), ErrReference)
		}
		return walkRest(v, rest, "vars."+name)
	case "nodes":
		id, rest, ok := memberName(rest)
		field, rest2, ok2 := memberName(rest)
		if !ok || !ok2 || field != "output" {
			return nil, fmt.Errorf("want nodes.<id>.output: %w", ErrReference)
		}
		v, ok := data.Nodes[id]
		if !ok {
			return nil, fmt.Errorf("node %q has no output: it does not exist or has not run: %w", id, ErrReference)
		}
		return walkRest(v, rest2, "nodes."+id+".output")
	}
	return nil, fmt.Errorf("unknown reference: use {{input}}, {{vars.<name>}} or {{nodes.<id>.output}}: %w", ErrReference)
}

// splitName cuts the leading name (up to '.', '[' or the end) off s.
func splitName(s string) (name, rest string) {
	i := strings.IndexAny(s, ".[")
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

// memberName cuts a leading ".name" off s. A node id or variable name may
// hold '-', which a JSON path key may too, so the name runs to the next
// '.' or '['.
func memberName(s string) (name, rest string, ok bool) {
	if !strings.HasPrefix(s, ".") {
		return "", s, false
	}
	name, rest = splitName(s[1:])
	return name, rest, name != ""
}

// walkRest follows the path rest (Extract syntax, without "$") from v.
func walkRest(v any, rest, at string) (any, error) {
	if rest == "" {
		return v, nil
	}
	segs, err := parsePath("$" + rest)
	if err != nil {
		return nil, err
	}
	return walk(v, segs, at)
}
