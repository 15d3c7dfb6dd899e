package transform

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestJavaScript(t *testing.T) {
	runCases(t, &Runner{}, []modeCase{
		{name: "last value", cfg: cfg("mode", "javascript", "script", "const n = 2; n * 21"), want: 42.0},
		{name: "reads input vars nodes", cfg: cfg("mode", "javascript", "script", "input.trim() + ' ' + vars.name + ' ' + nodes.plan.output.items[1].title + ' ' + nodes['my-id'].output"), want: "Hello, World Ada Second 7"},
		{name: "object result", cfg: cfg("mode", "javascript", "script", "({a: [1, 'b', null, true], u: undefined})"), want: map[string]any{"a": []any{1.0, "b", nil, true}}},
		{name: "input key", cfg: cfg("mode", "javascript", "input", "{{nodes.list.output}}", "script", "input.length"), want: 4.0},
		{name: "undefined is nil", cfg: cfg("mode", "javascript", "script", "undefined"), want: nil},
		{name: "mutating globals stays inside", cfg: cfg("mode", "javascript", "script", "vars.name = 'Eve'; nodes.plan.output.items.length = 0; vars.name"), want: "Eve"},
		{name: "require undefined", cfg: cfg("mode", "javascript", "script", "typeof require + ',' + typeof fetch + ',' + typeof setTimeout + ',' + typeof setInterval + ',' + typeof console + ',' + typeof process"), want: "undefined,undefined,undefined,undefined,undefined,undefined"},
		{name: "calling require", cfg: cfg("mode", "javascript", "script", "require('fs')"), wantErr: "script: ReferenceError: require is not defined"},
		{name: "calling fetch", cfg: cfg("mode", "javascript", "script", "fetch('http://example.com')"), wantErr: "script: ReferenceError: fetch is not defined"},
		{name: "thrown error", cfg: cfg("mode", "javascript", "script", "throw new TypeError('bad input')"), wantErr: "script: TypeError: bad input"},
		{name: "thrown value", cfg: cfg("mode", "javascript", "script", "throw 'plain'"), wantErr: "script: plain"},
		{name: "syntax error", cfg: cfg("mode", "javascript", "script", "let = ;"), wantErr: "script: "},
		{name: "function result", cfg: cfg("mode", "javascript", "script", "(function(){})"), wantErr: "script result is a function"},
		{name: "symbol result", cfg: cfg("mode", "javascript", "script", "Symbol('s')"), wantErr: "cannot be written as JSON"},
		{name: "cycle", cfg: cfg("mode", "javascript", "script", "const o = {}; o.o = o; o"), wantErr: "script: TypeError"},
		{name: "recursion", cfg: cfg("mode", "javascript", "script", "function f(n) { return f(n + 1) + 1 } f(0)"), wantErr: "script: RangeError: maximum call stack size exceeded"},
		{name: "bad timeout", cfg: cfg("mode", "javascript", "script", "1", "timeout", "soon"), wantErr: `config.timeout: "soon" is not a positive duration`},
		{name: "missing script", cfg: cfg("mode", "javascript"), wantErr: "config.script: missing"},
	})
	if got := sample.Vars["name"]; got != "Ada" {
		t.Errorf("a script changed the caller's vars: name = %v", got)
	}
	if n := len(sample.Nodes["plan"].(map[string]any)["items"].([]any)); n != 2 {
		t.Errorf("a script changed the caller's node output: %d items", n)
	}
}

// TestJavaScriptErrorsDeterministic: the same failing script gives the
// same error every time (no addresses, timings or stack positions).
func TestJavaScriptErrorsDeterministic(t *testing.T) {
	c := cfg("mode", "javascript", "script", "null.x")
	var first string
	for i := range 3 {
		_, err := (&Runner{}).Run(context.Background(), c, sample)
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

func TestJavaScriptTimeLimit(t *testing.T) {
	start := time.Now()
	_, err := (&Runner{}).Run(context.Background(), cfg("mode", "javascript", "script", "for (;;) {}", "timeout", "100ms"), sample)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("stopped after %v, want about 100ms", d)
	}

	// MaxTimeout caps a longer configured timeout.
	start = time.Now()
	r := New(&Options{MaxTimeout: 50 * time.Millisecond})
	if _, err := r.Run(context.Background(), cfg("mode", "javascript", "script", "while (true) {}", "timeout", "1h"), sample); !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("MaxTimeout: stopped after %v", d)
	}
}

func TestJavaScriptContextCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := (&Runner{}).Run(ctx, cfg("mode", "javascript", "script", "for (;;) {}"), sample)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
}

func BenchmarkJavaScript(b *testing.B) {
	c := cfg("mode", "javascript", "script", "input.trim().toUpperCase() + ' / ' + vars.name")
	var r Runner
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Run(ctx, c, sample); err != nil {
			b.Fatal(err)
		}
	}
}

// TestConcurrentRuns: one Runner serves concurrent calls (run with -race).
func TestConcurrentRuns(t *testing.T) {
	var r Runner
	configs := []map[string]any{
		cfg("mode", "javascript", "script", "vars.name + input.length"),
		cfg("mode", "text", "operation", "title"),
		cfg("mode", "arithmetic", "expression", "vars.price * 2"),
		cfg("mode", "template", "template", "{{nodes.plan.output.items[0].title}}"),
		cfg("mode", "starlark", "script", "result = vars['name'] + str(len(input))"),
	}
	want := []any{"Ada16", "  Hello, World  ", 25.0, "First", "Ada16"}
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for g := range 8 {
		wg.Go(func() {
			for i := range 10 {
				k := (g + i) % len(configs)
				got, err := r.Run(context.Background(), configs[k], sample)
				if err != nil || got != want[k] {
					errs <- fmt.Errorf("mode %v: got %v, %v; want %v", configs[k]["mode"], got, err, want[k])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestJavaScriptMemoryCap(t *testing.T) {
	r := New(&Options{MaxScriptMemory: 32 << 20})
	start := time.Now()
	// Keeps every string alive, so the heap grows ~doubling each step.
	_, err := r.Run(context.Background(), map[string]any{"mode": "javascript", "timeout": "20s",
		"script": "var keep = []; var s = 'x'; for (;;) { s = s + s + 'y'; keep.push(s); if (s.length > 1e9) break; }; keep.length"}, Data{})
	if !errors.Is(err, ErrMemory) {
		t.Fatalf("err = %v, want ErrMemory", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("stopped after %v; the cap should stop it long before the time limit", d)
	}
	// A normal script is unaffected.
	out, err := r.Run(context.Background(), map[string]any{"mode": "javascript", "script": "var a = []; for (var i = 0; i < 1000; i++) a.push(i); a.length"}, Data{})
	if err != nil || out != float64(1000) {
		t.Fatalf("plain script: %v %v", out, err)
	}
}
