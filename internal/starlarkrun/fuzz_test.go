package starlarkrun

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/internal/scriptrun"
)

// FuzzConvert: any JSON value goes into Starlark as a global and comes
// back, as the result, unchanged; nothing panics on the way.
func FuzzConvert(f *testing.F) {
	for _, s := range []string{
		`null`, `true`, `0`, `-12`, `3.5`, `1e300`, `-0`, `123456789012345678901234567890`, `1.5e-300`,
		`""`, `"a\u0000b\"c\\"`, `"日本語 ✓"`, `[]`, `{}`, `[1, "a", null, [true, {"k": []}]]`,
		`{"b": 1, "a": {"c": [1.25, 2]}, "": "empty key"}`, `[[[[[[[[[[]]]]]]]]]]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return
		}
		gjson, err := scriptrun.EncodeGlobals(map[string]any{"v": v}, 1<<30, "")
		if err != nil {
			t.Fatalf("encode %s: %v", data, err)
		}
		globals, err := decodeGlobals(gjson)
		if err != nil {
			t.Fatalf("decode globals %s: %v", gjson, err)
		}
		text, err := encodeResult(globals["v"], 1<<30)
		if err != nil {
			t.Fatalf("encode result of %s: %v", gjson, err)
		}
		got, err := scriptrun.DecodeResult(text)
		if err != nil {
			t.Fatalf("decode result %s: %v", text, err)
		}
		if diff := cmp.Diff(v, got); diff != "" {
			t.Errorf("%s came back as %s (-in +out):\n%s", data, text, diff)
		}
	})
}

// FuzzRun runs arbitrary source in the sandbox: whatever it is, Run
// returns within the limits with a result or one of the errors it
// documents. An error of another kind means the child crashed (a panic in
// the interpreter, a stack overflow), which the server survives but the
// caller cannot explain.
func FuzzRun(f *testing.F) {
	for _, s := range []string{
		"result = 1",
		"result = [x * 2 for x in input]",
		"def f(n):\n    return f(n)\nresult = f(1)",
		"while True:\n    pass",
		"a = []\na.append(a)\nresult = a",
		"x = 'a' * (1 << 29)",
		"result = json.decode('[' * 100000)",
		"result = json.encode([[[[[[[[]]]]]]]])",
		"result = ((((((((((((((((((((1))))))))))))))))))))",
		"load('x', 'y')",
		"result = {'a': set()}",
		"result = math.pow(10, 400)",
		"result = '%d' % 1.5",
		"result = 1 // 0",
		"result = sorted(input, key = lambda x: -x)",
		"s = 'x'\nfor i in range(40):\n    s += s\nresult = len(s)",
	} {
		f.Add(s)
	}
	lim := &Limits{Timeout: time.Second, MaxSteps: 1_000_000, MaxMemory: 32 << 20, MaxOutputBytes: 64 << 10}
	f.Fuzz(func(t *testing.T, src string) {
		start := time.Now()
		_, err := Run(context.Background(), src, map[string]any{"input": []any{3.0, 1.0, 2.0}}, lim)
		if d := time.Since(start); d > lim.Timeout+scriptrun.StartGrace+5*time.Second {
			t.Errorf("%q ran for %v", src, d)
		}
		var se *ScriptError
		if err == nil || errors.As(err, &se) || errors.Is(err, ErrTimeout) || errors.Is(err, ErrMemory) || errors.Is(err, ErrTooLarge) {
			return
		}
		t.Errorf("%q: %v, want a result, a *ScriptError or a limit's error", src, err)
	})
}
