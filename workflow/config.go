package workflow

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/expr-lang/expr"
)

// CheckConfig reports the problems of a node config of this kind, as
// Validate does for every node: missing required keys, unknown keys, values
// of the wrong type, enum or minimum, expressions and regexps that do not
// compile, then, when those pass, the kind's cross-key rules (Check). at is
// the JSON path of cfg, such as "nodes[2].config". It does not look at
// Unavailable; Validate reports that instead of the config.
func (k Kind) CheckConfig(cfg map[string]any, at string) []Problem {
	probs := checkConfig(k.Config, cfg, at)
	if len(probs) == 0 && k.Check != nil {
		probs = k.Check(cfg, at)
	}
	return probs
}

// checkConfig checks cfg against keys. at is the JSON path of cfg, such as
// "nodes[2].config". It reports missing required keys, unknown keys and
// values of the wrong type, and compiles expressions and regexps.
func checkConfig(keys []ConfigKey, cfg map[string]any, at string) []Problem {
	var probs []Problem
	known := map[string]bool{}
	for _, k := range keys {
		known[k.Name] = true
		path := at + "." + k.Name
		v, ok := cfg[k.Name]
		if !ok || v == nil {
			if k.Required {
				probs = append(probs, Problem{
					Path:    path,
					Message: fmt.Sprintf("missing required %s %q", k.Type, k.Name),
					Hint:    fmt.Sprintf("add %q: %s", k.Name, k.Doc),
				})
			}
			continue
		}
		probs = append(probs, checkValue(k, v, path)...)
	}
	var unknown []string
	for name := range cfg {
		if !known[name] {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	for _, name := range unknown {
		names := make([]string, 0, len(keys))
		for _, k := range keys {
			names = append(names, k.Name)
		}
		hint := "remove it"
		if len(names) > 0 {
			hint = "remove it or use one of: " + strings.Join(names, ", ")
		}
		probs = append(probs, Problem{Path: at + "." + name, Message: fmt.Sprintf("unknown config key %q", name), Hint: hint})
	}
	return probs
}

func checkValue(k ConfigKey, v any, path string) []Problem {
	wrong := func() []Problem {
		return []Problem{{
			Path:    path,
			Message: fmt.Sprintf("want %s, got %s", article(k.Type), describe(v)),
			Hint:    fmt.Sprintf("set %q to %s: %s", k.Name, article(k.Type), k.Doc),
		}}
	}
	switch k.Type {
	case TypeAny:
		return nil
	case TypeString, TypeTemplate, TypeExpression, TypeDuration, TypeRegexp:
		s, ok := v.(string)
		if !ok {
			return wrong()
		}
		return checkString(k, s, path)
	case TypeNumber, TypeInteger:
		f, ok := v.(float64)
		if !ok || (k.Type == TypeInteger && f != math.Trunc(f)) {
			return wrong()
		}
		if k.Min != nil && f < *k.Min {
			return []Problem{{Path: path, Message: fmt.Sprintf("%v is below the minimum %v", f, *k.Min), Hint: fmt.Sprintf("set %q to at least %v", k.Name, *k.Min)}}
		}
	case TypeBoolean:
		if _, ok := v.(bool); !ok {
			return wrong()
		}
	case TypeObject:
		m, ok := v.(map[string]any)
		if !ok {
			return wrong()
		}
		if k.Fields != nil {
			return checkConfig(k.Fields, m, path)
		}
	case TypeArray:
		a, ok := v.([]any)
		if !ok {
			return wrong()
		}
		if k.Elem == nil {
			return nil
		}
		var probs []Problem
		for i, e := range a {
			ek := *k.Elem
			ek.Name = fmt.Sprintf("%s[%d]", k.Name, i)
			probs = append(probs, checkValue(ek, e, fmt.Sprintf("%s[%d]", path, i))...)
		}
		return probs
	}
	return nil
}

func checkString(k ConfigKey, s, path string) []Problem {
	if len(k.Enum) > 0 && !slices.Contains(k.Enum, s) {
		return []Problem{{Path: path, Message: fmt.Sprintf("%q is not one of the accepted values", s), Hint: "use one of: " + strings.Join(k.Enum, ", ")}}
	}
	switch k.Type {
	case TypeExpression:
		if err := compileExpr(s); err != nil {
			return []Problem{{Path: path, Message: "invalid expression: " + firstLine(err.Error()), Hint: "write an expr-lang expression that yields true or false, such as nodes.review.output.score >= 3"}}
		}
	case TypeDuration:
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return []Problem{{Path: path, Message: fmt.Sprintf("%q is not a valid duration", s), Hint: "write a duration such as \"30s\" or \"5m\""}}
		}
	case TypeRegexp:
		if _, err := regexp.Compile(s); err != nil {
			return []Problem{{Path: path, Message: "invalid regular expression: " + err.Error(), Hint: "use RE2 syntax (no look-around or back-references)"}}
		}
	}
	return nil
}

// compileExpr compiles src as a boolean expr-lang expression. There is no
// environment yet (node outputs are only known at run time), so only syntax
// and constant types are checked. expr is well fuzzed, but the validator
// promises never to panic on input, so a panic becomes an error.
func compileExpr(src string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("expression compiler failed: %v", r)
		}
	}()
	if strings.TrimSpace(src) == "" {
		return fmt.Errorf("empty expression")
	}
	_, err = expr.Compile(src, expr.AsBool())
	return err
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func article(t ValueType) string {
	switch t {
	case TypeTemplate, TypeExpression, TypeDuration, TypeRegexp:
		return "a string (" + string(t) + ")"
	case TypeInteger, TypeObject, TypeArray:
		return "an " + string(t)
	}
	return "a " + string(t)
}

func describe(v any) string {
	switch x := v.(type) {
	case string:
		return "a string"
	case float64:
		if x == math.Trunc(x) {
			return "an integer"
		}
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// walkStrings calls fn for every string in v, with its JSON path.
func walkStrings(v any, path string, fn func(path, s string)) {
	switch x := v.(type) {
	case string:
		fn(path, x)
	case []any:
		for i, e := range x {
			walkStrings(e, fmt.Sprintf("%s[%d]", path, i), fn)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walkStrings(x[k], path+"."+k, fn)
		}
	}
}
