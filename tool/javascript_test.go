package tool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRunJavaScript(t *testing.T) {
	tests := []struct {
		args string
		want string
	}{
		{`{"code":"1 + 1"}`, "2"},
		{`{"code":"input.map(x => x * 2).reduce((a, b) => a + b, 0)","input":[1,2,3]}`, "12"},
		{`{"code":"({n: input.name.toUpperCase(), t: typeof require})","input":{"name":"ada"}}`, `{"n":"ADA","t":"undefined"}`},
		{`{"code":"'<b>' + '&'"}`, `"<b>&"`},
		{`{"code":"undefined"}`, "null"},
		{`{"code":"typeof input"}`, `"object"`}, // absent input is null
		{`{"code":"(() => { return 7 })()"}`, "7"},
		{"```json\n{\"code\": \"[1,2,].length\",}\n```", "2"},
	}
	for _, tt := range tests {
		res := call(t, RunJavaScript{}, tt.args)
		if res.IsError || res.Content != tt.want {
			t.Errorf("run_javascript %s = %+v, want %q", tt.args, res, tt.want)
		}
	}
}

func TestRunJavaScriptRejects(t *testing.T) {
	tests := []struct {
		tool RunJavaScript
		args string
		want string
	}{
		{RunJavaScript{}, `{"code":"return 1"}`, "script: SyntaxError"},
		{RunJavaScript{}, `{"code":"null.x"}`, "script: TypeError"},
		{RunJavaScript{}, `{"code":"require('fs')"}`, "ReferenceError: require is not defined"},
		{RunJavaScript{}, `{"code":"throw new Error('boom')"}`, "script: Error: boom"},
		{RunJavaScript{Timeout: 100 * time.Millisecond}, `{"code":"for (;;) {}"}`, "script ran longer than 100ms"},
		{RunJavaScript{MaxMemory: 16 << 20, Timeout: 20 * time.Second}, `{"code":"var k = []; var s = 'x'; for (;;) { s = s + s + 'y'; k.push(s); if (s.length > 1e9) break; }"}`, "memory cap exceeded"},
		{RunJavaScript{MaxOutputBytes: 10}, `{"code":"'x'.repeat(100)"}`, "more than the limit of 10"},
		{RunJavaScript{}, `{"code":""}`, `"code"`},
		{RunJavaScript{}, `{"script":"1"}`, `unknown argument "script"`},
	}
	for _, tt := range tests {
		res := call(t, tt.tool, tt.args)
		if !res.IsError || !strings.Contains(res.Content, tt.want) {
			t.Errorf("run_javascript %s = %+v, want error containing %q", tt.args, res, tt.want)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := (RunJavaScript{}).Call(ctx, json.RawMessage(`{"code":"for (;;) {}"}`)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled call: err = %v, want the context's error", err)
	}
}

// TestRunJavaScriptHostileBuiltin is the input that took a server down: one
// join building a 4 GiB string ran past the tool's 5 s limit (and the 60 s
// tool timeout) and grew the process to 10 GB. With the script in a child
// process it ends at the limit with an error result the model can read.
func TestRunJavaScriptHostileBuiltin(t *testing.T) {
	for _, code := range []string{"new Array(4294967295).join('x')", "new Array(40000000).fill(0)"} {
		start := time.Now()
		res := call(t, RunJavaScript{}, `{"code":"`+code+`"}`)
		d := time.Since(start)
		t.Logf("%s: %q after %v", code, res.Content, d.Round(time.Millisecond))
		if !res.IsError || !strings.Contains(res.Content, "script ran longer than 5s") && !strings.Contains(res.Content, "memory than its cap of 64 MiB") {
			t.Errorf("%s = %+v, want an error result naming the 5s limit or the 64 MiB cap", code, res)
		}
		if limit := DefaultJavaScriptTimeout + time.Second; d > limit {
			t.Errorf("%s ended after %v, more than %v", code, d, limit)
		}
	}
}
