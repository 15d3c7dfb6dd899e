package jsrun

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
	in := map[string]any{"items": []any{"a", "b"}, "name": "Ada"}
	tests := []struct {
		script  string
		want    any
		wantErr string
	}{
		{script: "const n = 2; n * 21", want: 42.0},
		{script: "input.items.length + ' ' + input.name", want: "2 Ada"},
		{script: "({a: [1, 'b', null, true], u: undefined})", want: map[string]any{"a": []any{1.0, "b", nil, true}}},
		{script: "undefined", want: nil},
		{script: "input.name = 'Eve'; input.name", want: "Eve"},
		{script: "typeof require + typeof fetch + typeof setTimeout + typeof console + typeof process", want: strings.Repeat("undefined", 5)},
		{script: "throw new TypeError('bad')", wantErr: "script: TypeError: bad"},
		{script: "let = ;", wantErr: "script: "},
		{script: "(function(){})", wantErr: "script result is a function"},
		{script: "Symbol('s')", wantErr: "cannot be written as JSON"},
		{script: "function f(n) { return f(n + 1) + 1 } f(0)", wantErr: "RangeError: maximum call stack size exceeded"},
	}
	for _, tt := range tests {
		got, err := Run(context.Background(), tt.script, map[string]any{"input": in}, nil)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Run(%q) error = %v, want containing %q", tt.script, err, tt.wantErr)
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
	if in["name"] != "Ada" {
		t.Errorf("a script changed the caller's data: name = %v", in["name"])
	}
}

func TestRunLimits(t *testing.T) {
	start := time.Now()
	_, err := Run(context.Background(), "for (;;) {}", nil, &Limits{Timeout: 100 * time.Millisecond})
	if !errors.Is(err, ErrTimeout) || time.Since(start) > 2*time.Second {
		t.Errorf("endless loop: err = %v after %v, want ErrTimeout after about 100ms", err, time.Since(start))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Run(ctx, "for (;;) {}", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled ctx: err = %v, want context.DeadlineExceeded", err)
	}

	if _, err := Run(context.Background(), "1", map[string]any{"input": strings.Repeat("x", 100)}, &Limits{MaxInputBytes: 50}); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "the script's input is 112 bytes") {
		t.Errorf("large input: err = %v, want ErrTooLarge saying the script's input is 112 bytes", err)
	}
	lim := &Limits{MaxInputBytes: 50, InputName: "input and vars"}
	if _, err := Run(context.Background(), "1", map[string]any{"input": strings.Repeat("x", 100), "vars": map[string]any{}}, lim); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "input and vars are 122 bytes") {
		t.Errorf("large input with InputName: err = %v, want ErrTooLarge saying input and vars are 122 bytes", err)
	}
	if _, err := Run(context.Background(), "'x'.repeat(100)", nil, &Limits{MaxOutputBytes: 50}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("large output: err = %v, want ErrTooLarge", err)
	}

	start = time.Now()
	_, err = Run(context.Background(), "var keep = []; var s = 'x'; for (;;) { s = s + s + 'y'; keep.push(s); if (s.length > 1e9) break; }; keep.length",
		nil, &Limits{MaxMemory: 32 << 20, Timeout: 20 * time.Second})
	if !errors.Is(err, ErrMemory) {
		t.Fatalf("growing heap: err = %v, want ErrMemory", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("memory cap stopped the script after %v", d)
	}
}

// TestRunHostileBuiltins holds the limits for code that spends its time
// and memory inside one built-in call, which goja cannot interrupt: in
// process the first ran past any deadline growing the heap to gigabytes,
// the second took 12.6 s and 3.3 GB against 5 s and 64 MiB.
func TestRunHostileBuiltins(t *testing.T) {
	tests := []struct {
		script  string
		lim     Limits
		wantErr error
	}{
		// A 4 GiB string built in one join: killed at the time limit or,
		// sooner, at the memory cap.
		{script: "new Array(4294967295).join('x')", lim: Limits{Timeout: 2 * time.Second, MaxMemory: 64 << 20}},
		// 40 million elements in one fill: over a 64 MiB cap at once.
		{script: "new Array(40000000).fill(0)", lim: Limits{Timeout: 5 * time.Second, MaxMemory: 64 << 20}, wantErr: ErrMemory},
	}
	for _, tt := range tests {
		start := time.Now()
		_, err := Run(context.Background(), tt.script, nil, &tt.lim)
		d := time.Since(start)
		t.Logf("%s: %v after %v", tt.script, err, d.Round(time.Millisecond))
		if tt.wantErr != nil && !errors.Is(err, tt.wantErr) || !errors.Is(err, ErrTimeout) && !errors.Is(err, ErrMemory) {
			t.Errorf("%s: err = %v, want the time limit or the memory cap (%v)", tt.script, err, tt.wantErr)
		}
		if limit := tt.lim.Timeout + startGrace + time.Second; d > limit {
			t.Errorf("%s: ended after %v, more than %v", tt.script, d, limit)
		}
	}
	// The same cap lets a script that fits finish.
	got, err := Run(context.Background(), "new Array(100000).fill(1).length", nil, &Limits{MaxMemory: 64 << 20})
	if err != nil || got != 100000.0 {
		t.Errorf("a fitting array: %v, %v", got, err)
	}
}

func BenchmarkRun(b *testing.B) {
	const script = "input.items.map(x => x * 2).reduce((a, b) => a + b, 0)"
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
