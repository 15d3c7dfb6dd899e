package tool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRunStarlark(t *testing.T) {
	tests := []struct {
		args string
		want string
	}{
		{`{"code":"result = 1 + 1"}`, "2"},
		{`{"code":"result = 0\nfor x in input:\n    result += x * 2","input":[1,2,3]}`, "12"},
		{`{"code":"result = {'n': input['name'].upper(), 'keys': sorted(input.keys())}","input":{"name":"ada","b":1}}`, `{"keys":["b","name"],"n":"ADA"}`},
		{`{"code":"result = '<b>' + '&'"}`, `"<b>&"`},
		{`{"code":"result = None"}`, "null"},
		{`{"code":"result = type(input)"}`, `"NoneType"`}, // absent input is None
		{`{"code":"result = json.decode(input)['a']","input":"{\"a\": [1, 2.5]}"}`, "[1,2.5]"},
		{`{"code":"print('ignored')\nresult = math.sqrt(16)"}`, "4"},
		{"```json\n{\"code\": \"result = len([1,2,])\",}\n```", "2"},
	}
	for _, tt := range tests {
		res := call(t, RunStarlark{}, tt.args)
		if res.IsError || res.Content != tt.want {
			t.Errorf("run_starlark %s = %+v, want %q", tt.args, res, tt.want)
		}
	}
}

func TestRunStarlarkRejects(t *testing.T) {
	tests := []struct {
		tool RunStarlark
		args string
		want string
	}{
		{RunStarlark{}, `{"code":"1 + 1"}`, "the script set no result: assign the value to return to the global result"},
		{RunStarlark{}, `{"code":"result = (1,"}`, "script: script.star:1:13: got end of file"},
		{RunStarlark{}, `{"code":"result = input['x']","input":{}}`, `script: script.star:1:15: key "x" not in dict`},
		{RunStarlark{}, `{"code":"import os"}`, "script: script.star:1:1"},
		{RunStarlark{}, `{"code":"load('os', 'path')"}`, "load is not available"},
		{RunStarlark{}, `{"code":"fail('boom')"}`, "fail: boom"},
		{RunStarlark{}, `{"code":"result = set([1])"}`, "result is a set"},
		// The step budget (1M steps for 100ms) or, on a slow machine, the clock.
		{RunStarlark{Timeout: 100 * time.Millisecond}, `{"code":"while True:\n    pass"}`, "script time limit exceeded"},
		{RunStarlark{MaxMemory: 16 << 20, Timeout: 20 * time.Second}, `{"code":"k = []\nfor i in range(100000000):\n    k.append('x' * 1000 + str(i))"}`, "memory cap exceeded"},
		{RunStarlark{}, `{"code":"x = 'a' * (1 << 29)"}`, "memory than its cap of 64 MiB"},
		{RunStarlark{MaxOutputBytes: 10}, `{"code":"result = 'x' * 100"}`, "more than 10 bytes of JSON"},
		{RunStarlark{}, `{"code":""}`, `"code"`},
		{RunStarlark{}, `{"script":"result = 1"}`, `unknown argument "script"`},
	}
	for _, tt := range tests {
		res := call(t, tt.tool, tt.args)
		if !res.IsError || !strings.Contains(res.Content, tt.want) {
			t.Errorf("run_starlark %s = %+v, want error containing %q", tt.args, res, tt.want)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := (RunStarlark{}).Call(ctx, json.RawMessage(`{"code":"while True:\n    pass"}`)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled call: err = %v, want the context's error", err)
	}
}
