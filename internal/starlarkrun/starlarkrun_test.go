package starlarkrun

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/internal/scriptrun"
)

func TestRun(t *testing.T) {
	in := map[string]any{"items": []any{"a", "b"}, "name": "Ada", "n": 3.0, "price": 2.5, "nested": map[string]any{"z": 1.0, "a": 2.0}}
	tests := []struct {
		script  string
		want    any
		wantErr string
	}{
		{script: "n = 2\nresult = n * 21", want: 42.0},
		{script: "result = str(len(input['items'])) + ' ' + input['name']", want: "2 Ada"},
		// Whole numbers are ints (range needs one), others floats.
		{script: "result = [type(input['n']), type(input['price']), list(range(input['n']))]", want: []any{"int", "float", []any{0.0, 1.0, 2.0}}},
		{script: "result = list(input['nested'].keys())", want: []any{"a", "z"}},
		{script: "result = {'a': [1, 'b', None, True], 't': (1, 2.5)}", want: map[string]any{"a": []any{1.0, "b", nil, true}, "t": []any{1.0, 2.5}}},
		{script: "result = None", want: nil},
		{script: "input['name'] = 'Eve'\nresult = input['name']", want: "Eve"},
		// Python as people write it: top-level loops and ifs, while,
		// reassigned globals, set(), comprehensions, % formatting.
		{script: "total = 0\nfor x in [1, 2, 3]:\n    if x > 1:\n        total += x\nresult = total", want: 5.0},
		{script: "i = 0\nwhile i < 10:\n    i += 3\nresult = i", want: 12.0},
		{script: "result = sorted(set([3, 1, 3, 2]))", want: []any{1.0, 2.0, 3.0}},
		{script: "result = '%s-%d' % ('x', 7) + ' {}'.format(input['name'])", want: "x-7 Ada"},
		{script: "def double(x):\n    return x * 2\nresult = [double(x) for x in range(3)]", want: []any{0.0, 2.0, 4.0}},
		// The modules.
		{script: "result = json.decode(json.encode({'a': [1, 2]}))", want: map[string]any{"a": []any{1.0, 2.0}}},
		{script: "result = math.floor(math.sqrt(17))", want: 4.0},
		// print goes nowhere: the result is still the result.
		{script: "print('hello')\nresult = 'ok'", want: "ok"},
		// A big int comes back as the nearest float64.
		{script: "result = 1 << 70", want: float64(1 << 70)},

		// Faults of the script, with their positions.
		{script: "result = (", wantErr: "script: script.star:1:11: got end of file, want primary expression"},
		{script: "x = 1\nresult = y", wantErr: "script: script.star:2:10: undefined: y"},
		{script: "def f(d):\n    return d['x']\nresult = f({})", wantErr: `script: script.star:2:13: in f: key "x" not in dict`},
		{script: "result = len(1)", wantErr: "script: script.star:1:13: len: value of type int has no len"},
		{script: "fail('bad input')", wantErr: "fail: bad input"},
		{script: "def f(n):\n    return f(n - 1)\nresult = f(3)", wantErr: "function f called recursively"},
		{script: "load('other.star', 'x')\nresult = x", wantErr: "load is not available"},
		{script: "import os", wantErr: "script: script.star:1:1: "},
		{script: "x = 1", wantErr: "the script set no result: assign the value to return to the global result"},
		{script: "result = {1: 'a'}", wantErr: "result is a dict with a key of type int"},
		{script: "result = {'a': [1, set([2])]}", wantErr: `result["a"][1] is a set`},
		{script: "result = len", wantErr: "result is a builtin_function_or_method, which is not JSON data"},
		{script: "result = float('nan')", wantErr: "result is nan, which JSON cannot hold"},
		{script: "a = []\na.append(a)\nresult = a", wantErr: "does a list or dict contain itself?"},
		{script: "x = 1 << 500\nresult = x * x * x", wantErr: "result is an int too large for JSON data"},
		{script: "x = 'a' * (1 << 40)", wantErr: "repeat count 1099511627776 too large"},
	}
	for _, tt := range tests {
		// In process, for speed (a child costs a few ms, a second under
		// the race detector); TestRunSandboxed crosses the process
		// boundary with the same kinds of values and errors.
		got, err := runInProcess(tt.script, map[string]any{"input": in})
		if tt.wantErr != "" {
			var se *ScriptError
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &se) {
				t.Errorf("Run(%q) error = %v, want a *ScriptError containing %q", tt.script, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Run(%q): %v", tt.script, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Run(%q) (-want +got):\n%s", tt.script, diff)
		}
	}
}

// runInProcess is Run without the child process.
func runInProcess(script string, globals map[string]any) (any, error) {
	l, gjson, err := prepare(globals, nil)
	if err != nil {
		return nil, err
	}
	text, err := runLocal(context.Background(), script, gjson, l)
	if err != nil {
		return nil, err
	}
	return scriptrun.DecodeResult(text)
}

func TestRunSandboxed(t *testing.T) {
	in := map[string]any{"items": []any{"a", "b"}, "name": "Ada"}
	got, err := Run(context.Background(), "input['name'] = 'Eve'\nresult = {'n': len(input['items']), 'name': input['name'], 'none': None}", map[string]any{"input": in}, nil)
	if diff := cmp.Diff(map[string]any{"n": 2.0, "name": "Eve", "none": nil}, got); err != nil || diff != "" {
		t.Errorf("Run: %v (-want +got):\n%s", err, diff)
	}
	if in["name"] != "Ada" {
		t.Errorf("a script changed the caller's data: name = %v", in["name"])
	}
	var se *ScriptError
	_, err = Run(context.Background(), "def f(d):\n    return d['x']\nresult = f({})", nil, nil)
	if !errors.As(err, &se) || se.Message != `script.star:2:13: in f: key "x" not in dict` {
		t.Errorf("runtime error: %v, want a *ScriptError with its position", err)
	}
	if _, err := Run(context.Background(), "result = set()", nil, nil); !errors.As(err, &se) || !strings.Contains(se.Message, "result is a set") {
		t.Errorf("a result that is not JSON: %v, want a *ScriptError", err)
	}
}

func TestRunLimits(t *testing.T) {
	ctx := context.Background()

	// An endless loop: the step budget stops it, long before the clock.
	start := time.Now()
	_, err := Run(ctx, "while True:\n    pass", nil, &Limits{MaxSteps: 100_000, Timeout: 10 * time.Second})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "script ran more than 100000 steps") || time.Since(start) > 5*time.Second {
		t.Errorf("endless loop under a step budget: err = %v after %v, want ErrTimeout naming 100000 steps", err, time.Since(start))
	}
	// With a budget it cannot reach, the clock stops it.
	start = time.Now()
	_, err = Run(ctx, "while True:\n    pass", nil, &Limits{MaxSteps: 1 << 50, Timeout: 100 * time.Millisecond})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "script ran longer than 100ms") || time.Since(start) > 2*time.Second {
		t.Errorf("endless loop: err = %v after %v, want ErrTimeout after about 100ms", err, time.Since(start))
	}
	// A script that fits its budget finishes.
	if got, err := Run(ctx, "n = 0\nfor i in range(1000):\n    n += i\nresult = n", nil, &Limits{MaxSteps: 100_000}); err != nil || got != 499500.0 {
		t.Errorf("a loop inside the budget: %v, %v", got, err)
	}

	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := Run(cctx, "while True:\n    pass", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled ctx: err = %v, want context.DeadlineExceeded", err)
	}
	if _, err := Run(cctx, "result = 1", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ctx ended before the run: err = %v, want context.DeadlineExceeded", err)
	}

	if _, err := Run(ctx, "result = 1", map[string]any{"input": strings.Repeat("x", 100)}, &Limits{MaxInputBytes: 50}); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "the script's input is 112 bytes") {
		t.Errorf("large input: err = %v, want ErrTooLarge saying the script's input is 112 bytes", err)
	}
	lim := &Limits{MaxInputBytes: 50, InputName: "input and vars"}
	if _, err := Run(ctx, "result = 1", map[string]any{"input": strings.Repeat("x", 100), "vars": map[string]any{}}, lim); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "input and vars are 122 bytes") {
		t.Errorf("large input with InputName: err = %v, want ErrTooLarge saying input and vars are 122 bytes", err)
	}
	if _, err := Run(ctx, "result = 'x' * 100", nil, &Limits{MaxOutputBytes: 50}); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "more than 50 bytes") {
		t.Errorf("large output: err = %v, want ErrTooLarge", err)
	}
	// A huge result fails at the limit, not after writing it all.
	if _, err := Run(ctx, "result = [['x' * 1000] * 1000] * 1000", nil, &Limits{MaxOutputBytes: 1 << 20}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("huge output: err = %v, want ErrTooLarge", err)
	}
}

// TestRunMemory holds the memory cap for both ways a script can grab
// memory: a little at a time inside the interpreter (the heap watch
// cancels the thread) and at once inside one built-in call (the child's
// OS limits kill it).
func TestRunMemory(t *testing.T) {
	tests := []struct {
		name   string
		script string
	}{
		{"list growth", "keep = []\nfor i in range(100000000):\n    keep.append('x' * 1000 + str(i))\nresult = len(keep)"},
		{"doubling string", "keep = []\ns = 'x'\nwhile len(s) < 1000000000:\n    s = s + s\n    keep.append(s)\nresult = len(keep)"},
		// 512 MiB in one strings.Repeat, which no step count sees.
		{"one huge repeat", "x = 'a' * (1 << 29)\nresult = len(x)"},
	}
	for _, tt := range tests {
		start := time.Now()
		_, err := Run(context.Background(), tt.script, nil, &Limits{MaxMemory: 32 << 20, Timeout: 20 * time.Second, MaxSteps: 1 << 50})
		d := time.Since(start)
		t.Logf("%s: %v after %v", tt.name, err, d.Round(time.Millisecond))
		if !errors.Is(err, ErrMemory) {
			t.Errorf("%s: err = %v, want ErrMemory", tt.name, err)
		}
		if d > 10*time.Second {
			t.Errorf("%s: the memory cap stopped the script after %v", tt.name, d)
		}
	}
	// The same cap lets a script that fits finish.
	got, err := Run(context.Background(), "result = len([i for i in range(100000)])", nil, &Limits{MaxMemory: 32 << 20})
	if err != nil || got != 100000.0 {
		t.Errorf("a fitting list: %v, %v", got, err)
	}
}

// TestRunErrorsDeterministic: the same failing script gives the same
// error every time (no addresses, timings or goroutine ids), since a
// workflow records it.
func TestRunErrorsDeterministic(t *testing.T) {
	var first string
	for i := range 3 {
		_, err := Run(context.Background(), "def f(d):\n    return d['k']\nresult = f({})", nil, nil)
		if err == nil {
			t.Fatal("no error")
		}
		if i == 0 {
			first = err.Error()
		} else if err.Error() != first {
			t.Fatalf("error changed: %q, then %q", first, err)
		}
	}
}

func TestRunSharesSentinels(t *testing.T) {
	if ErrTimeout != scriptrun.ErrTimeout || ErrMemory != scriptrun.ErrMemory || ErrTooLarge != scriptrun.ErrTooLarge {
		t.Error("starlarkrun's sentinels are not scriptrun's: callers testing jsrun's would miss Starlark's")
	}
}

func BenchmarkRun(b *testing.B) {
	const script = "result = 0\nfor x in input['items']:\n    result += x * 2"
	globals := map[string]any{"input": map[string]any{"items": []any{1, 2, 3}}}
	b.Run("in-process", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			l, gjson, err := prepare(globals, nil)
			if err != nil {
				b.Fatal(err)
			}
			text, err := runLocal(context.Background(), script, gjson, l)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := scriptrun.DecodeResult(text); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sandboxed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Run(context.Background(), script, globals, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
