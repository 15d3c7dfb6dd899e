package transform

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRender(t *testing.T) {
	for _, c := range []struct {
		tmpl, want, wantErr string
	}{
		{tmpl: "plain text }} stays", want: "plain text }} stays"},
		{tmpl: "{{input}}", want: "  Hello, World  "},
		{tmpl: "{{ vars.name }}/{{vars.qty}}/{{vars.user.tags}}", want: `Ada/3/["a","b"]`},
		{tmpl: `{{vars.user["tags"][1]}}`, want: "b"},
		{tmpl: "{{nodes.my-id.output}} {{nodes.plan.output.items[-1].title}}", want: "7 Second"},
		{tmpl: "{{nodes.json.output}}", want: `{"a": {"b": [10, 20]}, "html": "<b>"}`},
		{tmpl: "{{nodes.plan.output}}", want: `{"items":[{"title":"First"},{"title":"Second"}]}`},
		{tmpl: "{{foo}}", wantErr: "template: {{foo}} at character 1: unknown reference: use {{input}}, {{vars.<name>}} or {{nodes.<id>.output}}"},
		{tmpl: "x {{vars.missing}}", wantErr: `{{vars.missing}} at character 3: variable "missing" is not set (set: name, neg, price, qty, user)`},
		{tmpl: "{{vars}}", wantErr: "want vars.<name>"},
		{tmpl: "{{nodes.plan}}", wantErr: "want nodes.<id>.output"},
		{tmpl: "{{nodes.plan.result}}", wantErr: "want nodes.<id>.output"},
		{tmpl: "{{nodes.ghost.output}}", wantErr: `node "ghost" has no output`},
		{tmpl: "{{nodes.plan.output.items.title}}", wantErr: "nodes.plan.output.items is an array, not an object"},
		{tmpl: "{{vars.name.first}}", wantErr: "vars.name is a string, which has no .first"},
		{tmpl: "{{input[0}}", wantErr: "invalid path"},
		{tmpl: "ok {{input", wantErr: `"{{" at character 4 has no closing "}}"`},
		{tmpl: "{{}}", wantErr: "unknown reference"},
	} {
		got, err := Render(c.tmpl, sample)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("Render(%q) error = %v, want it to contain %q", c.tmpl, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Render(%q): %v", c.tmpl, err)
			continue
		}
		if got != c.want {
			t.Errorf("Render(%q) = %q, want %q", c.tmpl, got, c.want)
		}
	}
}

func TestRenderTooLarge(t *testing.T) {
	d := Data{Input: strings.Repeat("x", MaxRenderBytes/2+1)}
	if _, err := Render("{{input}}{{input}}", d); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

func TestResolve(t *testing.T) {
	for _, c := range []struct {
		tmpl string
		want any
	}{
		{" {{nodes.list.output}} ", []any{"x", 2.0, true, nil}},
		{"{{vars.qty}}", 3.0},
		{"{{vars.qty}}{{vars.qty}}", "33"},
		{"n={{vars.qty}}", "n=3"},
		{"text", "text"},
	} {
		got, err := Resolve(c.tmpl, sample)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", c.tmpl, err)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("Resolve(%q) (-want +got):\n%s", c.tmpl, diff)
		}
	}
	if _, err := Resolve("{{vars.nope}}", sample); !errors.Is(err, ErrReference) {
		t.Errorf("Resolve of a missing var: %v, want ErrReference", err)
	}
}

func TestExtract(t *testing.T) {
	v := map[string]any{"a.b": 1.0, "c d": map[string]any{"]": 2.0}, "l": []any{[]any{3.0}}}
	for _, c := range []struct {
		path    string
		want    any
		wantErr string
	}{
		{path: "", want: v},
		{path: "$", want: v},
		{path: `$["a.b"]`, want: 1.0},
		{path: `$['c d'][']']`, want: 2.0},
		{path: "l[0][0]", want: 3.0},
		{path: "$.l[-1][-1]", want: 3.0},
		{path: "$.l[0][-2]", wantErr: "index out of range"},
		{path: "$.", wantErr: "empty key"},
		{path: "$x", wantErr: `unexpected 'x'`},
		{path: "$.l[", wantErr: "'[' without ']'"},
		{path: `$["a`, wantErr: "'[' without ']'"},
		{path: `$["a"x]`, wantErr: "want ']' after a quoted key"},
		{path: "$.c d", wantErr: "needs brackets and quotes"},
	} {
		got, err := Extract(v, c.path)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("Extract(%q) error = %v, want %q", c.path, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Extract(%q): %v", c.path, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("Extract(%q) (-want +got):\n%s", c.path, diff)
		}
	}
}

func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"", "{{input}}", "{{ vars.user.tags[0] }}", `{{vars.user["x"]}}`, "{{nodes.plan.output.items[-1].title}}", "{{", "}}{{}}", "{{nodes..output}}", "{{input[", `{{input['`, "{{vars.a[99999999999999999999]}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tmpl string) {
		out, err := Render(tmpl, sample)
		if err == nil && !strings.Contains(tmpl, "{{") && out != tmpl {
			t.Fatalf("Render(%q) = %q: text without references must pass through", tmpl, out)
		}
		_, _ = Resolve(tmpl, sample)
		_, _ = Extract(sample.Nodes, tmpl)
	})
}

func BenchmarkRender(b *testing.B) {
	const tmpl = "Ticket for {{vars.name}}: {{nodes.plan.output.items[0].title}}, then {{nodes.plan.output.items[1].title}}. Input: {{input}}"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render(tmpl, sample); err != nil {
			b.Fatal(err)
		}
	}
}
