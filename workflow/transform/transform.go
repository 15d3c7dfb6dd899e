package transform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"

	"github.com/agentcraftlab/agentcraft/internal/jsrun"
)

// Defaults of Options.
const (
	DefaultMaxInputBytes  = 4 << 20
	DefaultMaxOutputBytes = 4 << 20
	// DefaultTimeout is the script time limit when the config has no
	// "timeout"; it is the default the code kind declares in
	// workflow/nodes (a test keeps the two equal).
	DefaultTimeout = jsrun.DefaultTimeout
	// DefaultMaxCallStackSize bounds JavaScript recursion depth.
	DefaultMaxCallStackSize = jsrun.DefaultMaxCallStackSize
)

// Options configure a Runner. The zero value means defaults.
type Options struct {
	// MaxInputBytes bounds the value a mode transforms (its text, or its
	// JSON for structured values) and, in the script modes (javascript,
	// starlark), the JSON of everything handed to the script. Default
	// DefaultMaxInputBytes.
	MaxInputBytes int
	// MaxOutputBytes bounds the output (its text, or its JSON).
	// Default DefaultMaxOutputBytes.
	MaxOutputBytes int
	// MaxTimeout caps a script's configured "timeout"; zero means no cap.
	MaxTimeout time.Duration
	// MaxCallStackSize bounds JavaScript call depth. Default
	// DefaultMaxCallStackSize.
	MaxCallStackSize int
	// MaxScriptMemory caps how much a script may grow the heap, in
	// bytes. Default DefaultMaxScriptMemory.
	MaxScriptMemory int64
	// MaxScriptSteps bounds a Starlark script's interpreter steps.
	// Default: starlarkrun.DefaultStepsPerSecond for each second of the
	// script's timeout.
	MaxScriptSteps int64
}

// Runner runs code-node transforms. The zero value uses the defaults; it
// holds no state between calls and is safe for concurrent use.
type Runner struct {
	opts Options
}

// New returns a Runner with opts (nil means defaults). opts is copied.
func New(opts *Options) *Runner {
	r := &Runner{}
	if opts != nil {
		r.opts = *opts
	}
	return r
}

func (r *Runner) maxIn() int {
	if r.opts.MaxInputBytes > 0 {
		return r.opts.MaxInputBytes
	}
	return DefaultMaxInputBytes
}

func (r *Runner) maxOut() int {
	if r.opts.MaxOutputBytes > 0 {
		return r.opts.MaxOutputBytes
	}
	return DefaultMaxOutputBytes
}

// ConfigError is a config value that a mode cannot use.
type ConfigError struct {
	Key     string // config key, such as "pattern"
	Message string // what is wrong and how to fix it
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("config.%s: %s", e.Key, e.Message)
}

// Run applies the mode config["mode"] to data and returns the output.
// config is the code node's config as the definition holds it (JSON
// types); Validate has normally checked it, but Run checks again what it
// reads and reports a *ConfigError instead of panicking.
//
// The transformed value is config["input"] resolved with [Resolve]
// (default "{{input}}", so data.Input). Modes:
//
//	template       render "template" with {{input}} = the transformed value → string
//	json_path      parse the value as JSON if it is a string, then [Extract] "path" → any
//	regex_extract  first match of "pattern": the whole match if it has no
//	               groups; group 1 if it has unnamed groups only; an object
//	               {name: text} if it has named groups. No match: ErrNoMatch.
//	regex_replace  replace every match of "pattern" with "replacement" ($1, ${name})
//	split          split text by "separator" → list of strings ("" splits into characters)
//	join           join a list (or a JSON array in a string) with "separator" → string
//	json_parse     parse text as JSON → any (a value that is not a string is returned as is)
//	json_format    the value as JSON indented by two spaces (a string holding JSON is re-indented)
//	text           "operation": trim, upper, lower or title → string
//	arithmetic     "expression" over numbers, input, vars.x, nodes.<id>.output → float64
//	javascript     "script" in a sandbox, its last value → any (see [jsrun.Run])
//	starlark       "script" (Starlark, a Python dialect) in a sandbox, the value it
//	               assigns to the global result → any (see [starlarkrun.Run])
//
// Errors are prefixed with "transform: <mode>: ".
func (r *Runner) Run(ctx context.Context, config map[string]any, data Data) (any, error) {
	mode, err := str(config, "mode", true)
	if err != nil {
		return nil, fmt.Errorf("transform: %w", err)
	}
	out, err := r.run(ctx, mode, config, data)
	if err != nil {
		return nil, fmt.Errorf("transform: %s: %w", mode, err)
	}
	return out, nil
}

func (r *Runner) run(ctx context.Context, mode string, cfg map[string]any, data Data) (any, error) {
	if _, ok := modes[mode]; !ok {
		return nil, &ConfigError{Key: "mode", Message: fmt.Sprintf("unknown mode %q (use one of: %s)", mode, strings.Join(ModeNames, ", "))}
	}
	inTmpl := "{{input}}"
	if _, ok := cfg["input"]; ok {
		s, err := str(cfg, "input", true)
		if err != nil {
			return nil, err
		}
		inTmpl = s
	}
	in, err := Resolve(inTmpl, data)
	if err != nil {
		return nil, fmt.Errorf("config.input: %w", err)
	}
	script := scriptModes[mode]
	if !script { // a script mode measures everything it hands over
		if err := r.checkSize("input", in, r.maxIn()); err != nil {
			return nil, err
		}
	}
	out, err := modes[mode](ctx, r, cfg, in, data)
	if err != nil {
		return nil, err
	}
	if !script { // a script mode measured its output already
		if err := r.checkSize("output", out, r.maxOut()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkSize reports v's size (text length, or JSON length) above limit.
func (r *Runner) checkSize(what string, v any, limit int) error {
	n := 0
	switch x := v.(type) {
	case string:
		n = len(x)
	case nil, bool, float64:
		return nil
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Errorf("%s is not JSON data: %w", what, err)
		}
		n = len(b)
	}
	if n > limit {
		return fmt.Errorf("%s is %d bytes, more than the limit of %d: %w", what, n, limit, ErrTooLarge)
	}
	return nil
}

type modeFunc func(ctx context.Context, r *Runner, cfg map[string]any, in any, data Data) (any, error)

// ModeNames are the modes Run accepts, as the code kind declares them.
var ModeNames = []string{"template", "json_path", "regex_extract", "regex_replace", "split", "join", "json_parse", "json_format", "text", "arithmetic", "javascript", "starlark"}

var modes = map[string]modeFunc{
	"template":      runTemplate,
	"json_path":     runJSONPath,
	"regex_extract": runRegexExtract,
	"regex_replace": runRegexReplace,
	"split":         runSplit,
	"join":          runJoin,
	"json_parse":    runJSONParse,
	"json_format":   runJSONFormat,
	"text":          runText,
	"arithmetic":    runArithmetic,
	"javascript":    scriptMode(runJavaScript),
	"starlark":      scriptMode(runStarlark),
}

// str reads the string config key; a missing required key or a value of
// another type is a *ConfigError.
func str(cfg map[string]any, key string, required bool) (string, error) {
	v, ok := cfg[key]
	if !ok || v == nil {
		if required {
			return "", &ConfigError{Key: key, Message: "missing: this mode needs it"}
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", &ConfigError{Key: key, Message: fmt.Sprintf("want a string, got %s", kindOf(v))}
	}
	return s, nil
}

func runTemplate(_ context.Context, _ *Runner, cfg map[string]any, in any, data Data) (any, error) {
	t, err := str(cfg, "template", true)
	if err != nil {
		return nil, err
	}
	data.Input = in
	return Render(t, data)
}

func runJSONPath(_ context.Context, _ *Runner, cfg map[string]any, in any, _ Data) (any, error) {
	p, err := str(cfg, "path", true)
	if err != nil {
		return nil, err
	}
	if _, err := parsePath(p); err != nil {
		return nil, &ConfigError{Key: "path", Message: err.Error()}
	}
	if s, ok := in.(string); ok {
		v, err := parseJSON(s)
		if err != nil {
			return nil, fmt.Errorf("input: %w", err)
		}
		in = v
	}
	return Extract(in, p)
}

func compilePattern(cfg map[string]any) (*regexp.Regexp, error) {
	p, err := str(cfg, "pattern", true)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, &ConfigError{Key: "pattern", Message: fmt.Sprintf("invalid RE2 regular expression: %v (no look-around or back-references)", err)}
	}
	return re, nil
}

func runRegexExtract(_ context.Context, _ *Runner, cfg map[string]any, in any, _ Data) (any, error) {
	re, err := compilePattern(cfg)
	if err != nil {
		return nil, err
	}
	s, err := Text(in)
	if err != nil {
		return nil, err
	}
	m := re.FindStringSubmatchIndex(s)
	if m == nil {
		return nil, fmt.Errorf("pattern %q does not match the input: %w", re.String(), ErrNoMatch)
	}
	group := func(i int) any {
		if m[2*i] < 0 {
			return nil // a group that did not take part in the match
		}
		return s[m[2*i]:m[2*i+1]]
	}
	names := re.SubexpNames()
	named := map[string]any{}
	for i, n := range names {
		if n != "" {
			named[n] = group(i)
		}
	}
	switch {
	case len(named) > 0:
		return named, nil
	case re.NumSubexp() > 0:
		return group(1), nil
	}
	return group(0), nil
}

// runRegexReplace is regexp.ReplaceAllString with a budget: it expands
// match by match and stops once the output passes MaxOutputBytes, so an
// empty-matching pattern with a long replacement cannot build gigabytes
// first. Its transient memory is the match index list, bounded by the
// input size.
func runRegexReplace(_ context.Context, r *Runner, cfg map[string]any, in any, _ Data) (any, error) {
	re, err := compilePattern(cfg)
	if err != nil {
		return nil, err
	}
	repl, err := str(cfg, "replacement", false)
	if err != nil {
		return nil, err
	}
	s, err := Text(in)
	if err != nil {
		return nil, err
	}
	limit := r.maxOut()
	var buf []byte
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
		buf = append(buf, s[last:m[0]]...)
		buf = re.ExpandString(buf, repl, s, m)
		last = m[1]
		if len(buf) > limit {
			return nil, fmt.Errorf("output passes the limit of %d bytes: %w", limit, ErrTooLarge)
		}
	}
	buf = append(buf, s[last:]...)
	return string(buf), nil
}

func runSplit(_ context.Context, _ *Runner, cfg map[string]any, in any, _ Data) (any, error) {
	sep, err := str(cfg, "separator", true)
	if err != nil {
		return nil, err
	}
	s, err := Text(in)
	if err != nil {
		return nil, err
	}
	if s == "" {
		return []any{}, nil // not [""]: an empty input has no items
	}
	parts := strings.Split(s, sep)
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out, nil
}

func runJoin(_ context.Context, _ *Runner, cfg map[string]any, in any, _ Data) (any, error) {
	sep, err := str(cfg, "separator", true)
	if err != nil {
		return nil, err
	}
	if s, ok := in.(string); ok {
		v, err := parseJSON(s)
		if err != nil {
			return nil, fmt.Errorf("input is text, not a list: give a list or a JSON array: %w", err)
		}
		in = v
	}
	list, ok := in.([]any)
	if !ok {
		return nil, fmt.Errorf("input is %s, not a list: give a list or a JSON array", kindOf(in))
	}
	parts := make([]string, len(list))
	for i, e := range list {
		t, err := Text(e)
		if err != nil {
			return nil, fmt.Errorf("input[%d]: %w", i, err)
		}
		parts[i] = t
	}
	return strings.Join(parts, sep), nil
}

// parseJSON decodes exactly one JSON value; numbers become float64.
func parseJSON(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	var v any
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("invalid JSON at character %d: %v", se.Offset, se)
		}
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	off := dec.InputOffset()
	if rest := strings.TrimLeft(s[off:], " \t\r\n"); rest != "" {
		return nil, fmt.Errorf("invalid JSON: text after the value at character %d", len(s)-len(rest)+1)
	}
	return v, nil
}

func runJSONParse(_ context.Context, _ *Runner, _ map[string]any, in any, _ Data) (any, error) {
	s, ok := in.(string)
	if !ok {
		return in, nil
	}
	return parseJSON(s)
}

func runJSONFormat(_ context.Context, _ *Runner, _ map[string]any, in any, _ Data) (any, error) {
	if s, ok := in.(string); ok {
		v, err := parseJSON(s)
		if err != nil {
			return nil, fmt.Errorf("input: %w (json_format writes JSON data or re-indents JSON text)", err)
		}
		in = v
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "<" stays "<", not "\u003c"
	enc.SetIndent("", "  ")
	if err := enc.Encode(in); err != nil {
		return nil, fmt.Errorf("input is not JSON data: %w", err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func runText(_ context.Context, _ *Runner, cfg map[string]any, in any, _ Data) (any, error) {
	op, err := str(cfg, "operation", true)
	if err != nil {
		return nil, err
	}
	s, err := Text(in)
	if err != nil {
		return nil, err
	}
	switch op {
	case "trim":
		return strings.TrimSpace(s), nil
	case "upper":
		return strings.ToUpper(s), nil
	case "lower":
		return strings.ToLower(s), nil
	case "title":
		// A Caser keeps state, so each call gets its own.
		return cases.Title(language.Und).String(s), nil
	}
	return nil, &ConfigError{Key: "operation", Message: fmt.Sprintf("unknown operation %q (use one of: trim, upper, lower, title)", op)}
}
