package transform

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestStarlark(t *testing.T) {
	runCases(t, &Runner{}, []modeCase{
		{name: "result global", cfg: cfg("mode", "starlark", "script", "n = 2\nresult = n * 21"), want: 42.0},
		{name: "reads input vars nodes", cfg: cfg("mode", "starlark", "script", "result = ' '.join([input.strip(), vars['name'], nodes['plan']['output']['items'][1]['title'], str(nodes['my-id']['output'])])"), want: "Hello, World Ada Second 7"},
		{name: "whole numbers are ints", cfg: cfg("mode", "starlark", "script", "result = [type(vars['qty']), list(range(vars['qty']))]"), want: []any{"int", []any{0.0, 1.0, 2.0}}},
		{name: "dict result", cfg: cfg("mode", "starlark", "script", "result = {'a': [1, 'b', None, True], 't': (1, 2)}"), want: map[string]any{"a": []any{1.0, "b", nil, true}, "t": []any{1.0, 2.0}}},
		{name: "input key", cfg: cfg("mode", "starlark", "input", "{{nodes.list.output}}", "script", "result = len(input)"), want: 4.0},
		{name: "python-like control flow", cfg: cfg("mode", "starlark", "script", "out = []\nfor it in nodes['plan']['output']['items']:\n    if it['title'].startswith('S'):\n        out.append(it['title'].upper())\nresult = out"), want: []any{"SECOND"}},
		{name: "json module", cfg: cfg("mode", "starlark", "input", "{{nodes.json.output}}", "script", "result = json.decode(input)['a']['b'][1]"), want: 20.0},
		{name: "none result", cfg: cfg("mode", "starlark", "script", "result = None"), want: nil},
		{name: "mutating globals stays inside", cfg: cfg("mode", "starlark", "script", "vars['name'] = 'Eve'\nnodes['plan']['output']['items'].clear()\nresult = vars['name']"), want: "Eve"},
		{name: "no result", cfg: cfg("mode", "starlark", "script", "x = 1"), is: nil, wantErr: "script: the script set no result: assign the value to return to the global result"},
		{name: "syntax error", cfg: cfg("mode", "starlark", "script", "result = (1,"), wantErr: "script: script.star:1:13: got end of file"},
		{name: "undefined", cfg: cfg("mode", "starlark", "script", "result = vars['name'] + missing"), wantErr: "script: script.star:1:25: undefined: missing"},
		{name: "key error", cfg: cfg("mode", "starlark", "script", "result = vars['nope']"), wantErr: `script: script.star:1:14: key "nope" not in dict`},
		{name: "fail", cfg: cfg("mode", "starlark", "script", "fail('bad input')"), wantErr: "fail: bad input"},
		{name: "recursion", cfg: cfg("mode", "starlark", "script", "def f(n):\n    return f(n + 1)\nresult = f(0)"), wantErr: "function f called recursively"},
		{name: "load", cfg: cfg("mode", "starlark", "script", "load('x.star', 'y')\nresult = y"), wantErr: "load is not available"},
		{name: "set result", cfg: cfg("mode", "starlark", "script", "result = set([1])"), wantErr: "result is a set"},
		{name: "bad timeout", cfg: cfg("mode", "starlark", "script", "result = 1", "timeout", "soon"), wantErr: `config.timeout: "soon" is not a positive duration`},
		{name: "missing script", cfg: cfg("mode", "starlark"), wantErr: "config.script: missing"},
	})
	if got := sample.Vars["name"]; got != "Ada" {
		t.Errorf("a script changed the caller's vars: name = %v", got)
	}
	if n := len(sample.Nodes["plan"].(map[string]any)["items"].([]any)); n != 2 {
		t.Errorf("a script changed the caller's node output: %d items", n)
	}
	var se *ScriptError
	if _, err := (&Runner{}).Run(context.Background(), cfg("mode", "starlark", "script", "result = 1 // 0"), sample); !errors.As(err, &se) {
		t.Errorf("err = %v, want a *ScriptError", err)
	}
}

func TestStarlarkLimits(t *testing.T) {
	ctx := context.Background()
	start := time.Now()
	_, err := (&Runner{}).Run(ctx, cfg("mode", "starlark", "script", "while True:\n    pass", "timeout", "100ms"), sample)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("endless loop: err = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("endless loop stopped after %v, want about 100ms", d)
	}

	// MaxTimeout caps a longer configured timeout, and the step budget
	// follows the capped timeout.
	start = time.Now()
	r := New(&Options{MaxTimeout: 50 * time.Millisecond})
	if _, err := r.Run(ctx, cfg("mode", "starlark", "script", "while True:\n    pass", "timeout", "1h"), sample); !errors.Is(err, ErrTimeout) {
		t.Fatalf("MaxTimeout: err = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("MaxTimeout: stopped after %v", d)
	}

	// MaxScriptSteps: a deterministic stop, whatever the clock says.
	r = New(&Options{MaxScriptSteps: 10_000})
	_, err = r.Run(ctx, cfg("mode", "starlark", "script", "n = 0\nfor i in range(100000):\n    n += i\nresult = n", "timeout", "30s"), sample)
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "more than 10000 steps") {
		t.Errorf("step budget: err = %v, want ErrTimeout naming 10000 steps", err)
	}

	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := (&Runner{}).Run(cctx, cfg("mode", "starlark", "script", "while True:\n    pass"), sample); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled ctx: err = %v, want context.DeadlineExceeded", err)
	}

	r = New(&Options{MaxInputBytes: 100, MaxOutputBytes: 50})
	runCases(t, r, []modeCase{
		{name: "starlark output", cfg: cfg("mode", "starlark", "script", "result = 'x' * 60"), data: &Data{}, is: ErrTooLarge, wantErr: "script result is more than 50 bytes"},
		{name: "starlark input", cfg: cfg("mode", "starlark", "script", "result = 1", "input", strings.Repeat("x", 101)), is: ErrTooLarge, wantErr: "input, vars and nodes are"},
	})

	r = New(&Options{MaxScriptMemory: 32 << 20})
	start = time.Now()
	_, err = r.Run(ctx, cfg("mode", "starlark", "timeout", "20s", "script", "keep = []\nfor i in range(100000000):\n    keep.append('x' * 1000 + str(i))\nresult = len(keep)"), Data{})
	if !errors.Is(err, ErrMemory) {
		t.Fatalf("growing list: err = %v, want ErrMemory", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the memory cap stopped the script after %v", d)
	}
}

func BenchmarkStarlark(b *testing.B) {
	c := cfg("mode", "starlark", "script", "result = input.strip().upper() + ' / ' + vars['name']")
	var r Runner
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Run(ctx, c, sample); err != nil {
			b.Fatal(err)
		}
	}
}
