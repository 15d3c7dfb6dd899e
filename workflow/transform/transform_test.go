package transform

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/expr-lang/expr/parser"

	"github.com/agentcraftlab/agentcraft/tool"
)

// sample is the data the mode tests read.
var sample = Data{
	Input: "  Hello, World  ",
	Vars:  map[string]any{"name": "Ada", "price": "12.50", "qty": 3.0, "user": map[string]any{"tags": []any{"a", "b"}}, "neg": -2.0},
	Nodes: map[string]any{
		"plan":  map[string]any{"items": []any{map[string]any{"title": "First"}, map[string]any{"title": "Second"}}},
		"list":  []any{"x", 2.0, true, nil},
		"json":  `{"a": {"b": [10, 20]}, "html": "<b>"}`,
		"my-id": 7.0,
	},
}

type modeCase struct {
	name    string
	cfg     map[string]any
	data    *Data // nil: sample
	want    any
	wantErr string // substring of the error; "" means success
	is      error  // errors.Is target, if any
}

func runCases(t *testing.T, r *Runner, cases []modeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := sample
			if tc.data != nil {
				data = *tc.data
			}
			got, err := r.Run(context.Background(), tc.cfg, data)
			if tc.wantErr != "" || tc.is != nil {
				if err == nil {
					t.Fatalf("Run = %#v, want error containing %q", got, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error = %q, want it to contain %q", err, tc.wantErr)
				}
				var ce *ConfigError
				if strings.Contains(tc.wantErr, "config.") != errors.As(err, &ce) {
					t.Errorf("error %v: *ConfigError %v, want %v", err, ce != nil, strings.Contains(tc.wantErr, "config."))
				}
				if tc.is != nil && !errors.Is(err, tc.is) {
					t.Errorf("error = %v, want errors.Is %v", err, tc.is)
				}
				return
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

func cfg(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func TestModes(t *testing.T) {
	runCases(t, &Runner{}, []modeCase{
		// mode itself
		{name: "no mode", cfg: cfg(), wantErr: "config.mode: missing"},
		{name: "unknown mode", cfg: cfg("mode", "python"), wantErr: `config.mode: unknown mode "python"`},
		{name: "mode not a string", cfg: cfg("mode", 3.0), wantErr: "config.mode: want a string, got a number"},
		{name: "bad input template", cfg: cfg("mode", "text", "operation", "trim", "input", "{{vars.nope}}"), wantErr: `input: template: {{vars.nope}}: variable "nope" is not set`, is: ErrReference},

		// template
		{name: "template", cfg: cfg("mode", "template", "template", "Hi {{vars.name}}: {{ nodes.plan.output.items[1].title }} x{{vars.qty}}"), want: "Hi Ada: Second x3"},
		{name: "template input is the input key", cfg: cfg("mode", "template", "input", "{{vars.name}}", "template", "<{{input}}>"), want: "<Ada>"},
		{name: "template structured value as JSON", cfg: cfg("mode", "template", "template", "{{nodes.list.output}}"), want: `["x",2,true,null]`},
		{name: "template missing key", cfg: cfg("mode", "template"), wantErr: "config.template: missing"},
		{name: "template unknown node", cfg: cfg("mode", "template", "template", "{{nodes.ghost.output}}"), wantErr: `node "ghost" has no output`, is: ErrReference},
		{name: "template unclosed", cfg: cfg("mode", "template", "template", "a {{input"), wantErr: `"{{" at character 3 has no closing "}}"`},

		// json_path
		{name: "json_path structured", cfg: cfg("mode", "json_path", "input", "{{nodes.plan.output}}", "path", "$.items[0].title"), want: "First"},
		{name: "json_path from JSON text", cfg: cfg("mode", "json_path", "input", "{{nodes.json.output}}", "path", "a.b[-1]"), want: 20.0},
		{name: "json_path whole", cfg: cfg("mode", "json_path", "input", "{{nodes.json.output}}", "path", "$.a"), want: map[string]any{"b": []any{10.0, 20.0}}},
		{name: "json_path missing key", cfg: cfg("mode", "json_path", "input", "{{nodes.json.output}}", "path", "$.a.c"), wantErr: `$.a has no key "c" (keys: b)`, is: ErrReference},
		{name: "json_path out of range", cfg: cfg("mode", "json_path", "input", "{{nodes.json.output}}", "path", "$.a.b[2]"), wantErr: "$.a.b[2]: index out of range (the array has 2 items)"},
		{name: "json_path bad path", cfg: cfg("mode", "json_path", "path", "$.a[x]"), wantErr: `config.path: invalid path "$.a[x]"`},
		{name: "json_path input not JSON", cfg: cfg("mode", "json_path", "path", "$.a"), wantErr: "input: invalid JSON at character"},
		{name: "json_path missing path", cfg: cfg("mode", "json_path"), wantErr: "config.path: missing"},

		// regex_extract
		{name: "regex whole match", cfg: cfg("mode", "regex_extract", "pattern", `W\w+`), want: "World"},
		{name: "regex group 1", cfg: cfg("mode", "regex_extract", "pattern", `(\w+), (\w+)`), want: "Hello"},
		{name: "regex group chosen by non-capturing", cfg: cfg("mode", "regex_extract", "pattern", `(?:\w+), (\w+)`), want: "World"},
		{name: "regex named groups", cfg: cfg("mode", "regex_extract", "pattern", `(?P<greet>\w+), (?P<who>\w+)(?P<bang>!)?`), want: map[string]any{"greet": "Hello", "who": "World", "bang": nil}},
		{name: "regex no match", cfg: cfg("mode", "regex_extract", "pattern", `\d+`), wantErr: "does not match", is: ErrNoMatch},
		{name: "regex invalid", cfg: cfg("mode", "regex_extract", "pattern", `(?<=a)b`), wantErr: "config.pattern: invalid RE2"},
		{name: "regex missing", cfg: cfg("mode", "regex_extract"), wantErr: "config.pattern: missing"},

		// regex_replace
		{name: "replace groups", cfg: cfg("mode", "regex_replace", "pattern", `(\w+), (\w+)`, "replacement", "$2 ${1}!"), want: "  World Hello!  "},
		{name: "replace default empty", cfg: cfg("mode", "regex_replace", "pattern", `\s+`), want: "Hello,World"},
		{name: "replace replacement not string", cfg: cfg("mode", "regex_replace", "pattern", `a`, "replacement", 1.0), wantErr: "config.replacement: want a string"},
		{name: "replace invalid pattern", cfg: cfg("mode", "regex_replace", "pattern", `(`), wantErr: "config.pattern: invalid RE2"},

		// split
		{name: "split", cfg: cfg("mode", "split", "input", "a,b,,c", "separator", ","), want: []any{"a", "b", "", "c"}},
		{name: "split lines", cfg: cfg("mode", "split", "input", "a\nb", "separator", "\n"), want: []any{"a", "b"}},
		{name: "split empty input", cfg: cfg("mode", "split", "input", "", "separator", ","), want: []any{}},
		{name: "split characters", cfg: cfg("mode", "split", "input", "hé", "separator", ""), want: []any{"h", "é"}},
		{name: "split missing separator", cfg: cfg("mode", "split"), wantErr: "config.separator: missing"},

		// join
		{name: "join list", cfg: cfg("mode", "join", "input", "{{nodes.list.output}}", "separator", "|"), want: "x|2|true|"},
		{name: "join JSON array text", cfg: cfg("mode", "join", "input", `["a","b"]`, "separator", ", "), want: "a, b"},
		{name: "join not a list", cfg: cfg("mode", "join", "input", "{{vars.qty}}", "separator", ","), wantErr: "input is a number, not a list"},
		{name: "join text not JSON", cfg: cfg("mode", "join", "separator", ","), wantErr: "input is text, not a list"},
		{name: "join separator not string", cfg: cfg("mode", "join", "separator", []any{}), wantErr: "config.separator: want a string, got an array"},

		// json_parse
		{name: "json_parse", cfg: cfg("mode", "json_parse", "input", "{{nodes.json.output}}"), want: map[string]any{"a": map[string]any{"b": []any{10.0, 20.0}}, "html": "<b>"}},
		{name: "json_parse passes structured", cfg: cfg("mode", "json_parse", "input", "{{nodes.list.output}}"), want: []any{"x", 2.0, true, nil}},
		{name: "json_parse invalid", cfg: cfg("mode", "json_parse", "input", `{"a":}`), wantErr: "invalid JSON at character 6"},
		{name: "json_parse trailing", cfg: cfg("mode", "json_parse", "input", `{"a":1} ]`), wantErr: "text after the value at character 9"},

		// json_format
		{name: "json_format structured", cfg: cfg("mode", "json_format", "input", "{{nodes.plan.output.items[0]}}"), want: "{\n  \"title\": \"First\"\n}"},
		{name: "json_format reindents text, keeps <", cfg: cfg("mode", "json_format", "input", `{"h":"<b>"}`), want: "{\n  \"h\": \"<b>\"\n}"},
		{name: "json_format text not JSON", cfg: cfg("mode", "json_format"), wantErr: "json_format writes JSON data or re-indents JSON text"},

		// text
		{name: "trim", cfg: cfg("mode", "text", "operation", "trim"), want: "Hello, World"},
		{name: "upper", cfg: cfg("mode", "text", "operation", "upper", "input", "héllo"), want: "HÉLLO"},
		{name: "lower", cfg: cfg("mode", "text", "operation", "lower", "input", "ÀB"), want: "àb"},
		{name: "title", cfg: cfg("mode", "text", "operation", "title", "input", "hello wORLD"), want: "Hello World"},
		{name: "text number input", cfg: cfg("mode", "text", "operation", "trim", "input", "{{vars.qty}}"), want: "3"},
		{name: "text bad op", cfg: cfg("mode", "text", "operation", "reverse"), wantErr: `config.operation: unknown operation "reverse"`},
		{name: "text missing op", cfg: cfg("mode", "text"), wantErr: "config.operation: missing"},

		// arithmetic
		{name: "arith input", cfg: cfg("mode", "arithmetic", "input", "{{vars.price}}", "expression", "input * 2 + 1"), want: 26.0},
		{name: "arith vars and nodes", cfg: cfg("mode", "arithmetic", "expression", `vars.price * vars.qty + nodes["my-id"].output`), want: 44.5},
		{name: "arith negative power", cfg: cfg("mode", "arithmetic", "expression", "vars.neg ** 2"), want: 4.0},
		{name: "arith tiny and huge values", data: &Data{Vars: map[string]any{"t": 1e-7, "h": -1e21}}, cfg: cfg("mode", "arithmetic", "expression", "vars.t * 1e7 + vars.h / 1e21"), want: 0.0},
		{name: "arith field of input", data: &Data{Input: map[string]any{"total": []any{"4"}}}, cfg: cfg("mode", "arithmetic", "expression", "input.total[0] * 2"), want: 8.0},
		{name: "arith input not numeric", cfg: cfg("mode", "arithmetic", "input", "{{nodes.json.output}}", "expression", "sqrt(input) "), wantErr: "is not a number"},
		{name: "arith functions", cfg: cfg("mode", "arithmetic", "expression", "max(1, vars.qty, 2) ^ 2 % 5"), want: 4.0},
		{name: "arith not a number", cfg: cfg("mode", "arithmetic", "expression", "vars.name + 1"), wantErr: `vars.name: "Ada" is not a number`},
		{name: "arith unknown var", cfg: cfg("mode", "arithmetic", "expression", "vars.nope"), wantErr: `variable "nope" is not set`, is: ErrReference},
		{name: "arith division by zero", cfg: cfg("mode", "arithmetic", "expression", "1 / (vars.qty - 3)"), wantErr: "division by zero"},
		{name: "arith strings refused", cfg: cfg("mode", "arithmetic", "expression", `"a" + "b"`), wantErr: "a string is not allowed"},
		{name: "arith unknown name", cfg: cfg("mode", "arithmetic", "expression", "foo * 2"), wantErr: `unknown name "foo"`},
		{name: "arith syntax", cfg: cfg("mode", "arithmetic", "expression", "1 +"), wantErr: "config.expression: invalid expression"},
		{name: "arith missing", cfg: cfg("mode", "arithmetic"), wantErr: "config.expression: missing"},
	})
}

func TestTooLarge(t *testing.T) {
	r := New(&Options{MaxInputBytes: 100, MaxOutputBytes: 50})
	big := strings.Repeat("x", 101)
	runCases(t, r, []modeCase{
		{name: "input", cfg: cfg("mode", "text", "operation", "trim", "input", big), is: ErrTooLarge, wantErr: "input is 101 bytes"},
		{name: "output", cfg: cfg("mode", "template", "input", "0123456789", "template", "{{input}}{{input}}{{input}}{{input}}{{input}}{{input}}"), is: ErrTooLarge, wantErr: "output is 60 bytes"},
		{name: "replace stops early", cfg: cfg("mode", "regex_replace", "input", strings.Repeat("a", 90), "pattern", "", "replacement", "0123456789"), is: ErrTooLarge, wantErr: "passes the limit of 50"},
		{name: "js output", cfg: cfg("mode", "javascript", "script", "'x'.repeat(60)"), data: &Data{}, is: ErrTooLarge, wantErr: "script result is 62 bytes"},
		{name: "js input", cfg: cfg("mode", "javascript", "script", "1", "input", big), is: ErrTooLarge, wantErr: "input, vars and nodes are"},
	})
}

// TestRegexReplaceMatchesStdlib shows that the budgeted replacement loop
// gives what regexp.ReplaceAllString gives, empty matches included.
func TestRegexReplaceMatchesStdlib(t *testing.T) {
	for _, c := range []struct{ pattern, repl, in string }{
		{``, "-", "abc"},
		{`x*`, "-", "abxxc"},
		{`\b`, "|", "hello big world"},
		{`^`, ">", "a\nb"},
		{`(?m)^`, ">", "a\nb"},
		{`(a)(b)?`, "[$2$1]", "aab ab"},
		{`(?P<w>\w+)`, "${w}s", "cat dog"},
		{`é`, "e", "café é"},
		{`$`, "!", ""},
	} {
		re := regexp.MustCompile(c.pattern)
		want := re.ReplaceAllString(c.in, c.repl)
		got, err := (&Runner{}).Run(context.Background(), cfg("mode", "regex_replace", "input", c.in, "pattern", c.pattern, "replacement", c.repl), Data{})
		if err != nil {
			t.Fatalf("%q: %v", c.pattern, err)
		}
		if got != want {
			t.Errorf("pattern %q on %q: got %q, want %q", c.pattern, c.in, got, want)
		}
	}
}

var inputWord = regexp.MustCompile(`\binput\b`)

// FuzzArithmetic: substituting references and printing the tree never
// panics, and for expressions over input only it agrees with writing the
// value into the text in parentheses (a negative value is the case where
// printing without the right parentheses would change the meaning).
func FuzzArithmetic(f *testing.F) {
	for _, s := range []string{"input * 1.1", "input ** 2", "2 ** input ** 2", "-input ^ 2", "input % 2", "abs(input)", "vars.neg ** 2", `nodes["my-id"].output / vars.qty`, "-vars.neg - -vars.neg", "max(vars.qty, input)", "vars.user.tags[0]", "nodes.plan?.output"} {
		f.Add(s)
	}
	r := &Runner{}
	data := sample
	data.Input = "-2.5"
	f.Fuzz(func(t *testing.T, expression string) {
		out, err := r.Run(context.Background(), cfg("mode", "arithmetic", "expression", expression), data)
		if err == nil {
			if _, ok := out.(float64); !ok {
				t.Fatalf("%q gave %T, want float64", expression, out)
			}
		}
		if strings.Contains(expression, "vars") || strings.Contains(expression, "nodes") || strings.Contains(expression, "?") {
			return
		}
		if _, err := parser.Parse(expression); err != nil {
			return // the textual substitution could turn "abs input" into a call
		}
		want, wantErr := tool.Evaluate(inputWord.ReplaceAllString(expression, "(-2.5)"))
		if wantErr != nil {
			return
		}
		if err != nil {
			t.Fatalf("%q: %v, but the textual substitution gives %v", expression, err, want)
		}
		if out != want {
			t.Fatalf("%q = %v, textual substitution gives %v", expression, out, want)
		}
	})
}
