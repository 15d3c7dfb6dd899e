package tool

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRegisterBuiltinsWith(t *testing.T) {
	var bare Registry
	if err := RegisterBuiltinsWith(&bare, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"calculator", "current_time", "json_query", "ocr_image", "run_javascript", "run_starlark"}, bare.Names()); diff != "" {
		t.Errorf("built-ins without configuration (-want +got):\n%s", diff)
	}

	var full Registry
	if err := RegisterBuiltinsWith(&full, &BuiltinOptions{FilesDir: t.TempDir(), HTTPClient: &http.Client{}}); err != nil {
		t.Fatal(err)
	}
	wantCaps := map[string]Capability{
		"calculator": CapabilityLow, "current_time": CapabilityLow, "json_query": CapabilityLow,
		"run_javascript": CapabilityMedium, "run_starlark": CapabilityMedium, "file_read": CapabilityMedium, "file_list": CapabilityMedium,
		"ocr_image": CapabilityMedium, "http_request": CapabilityHigh,
	}
	got := map[string]Capability{}
	for _, tl := range full.List() {
		got[tl.Name()] = tl.Capability()
		var schema map[string]any
		if err := json.Unmarshal(tl.Schema(), &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: schema %s is not a JSON Schema object (%v)", tl.Name(), tl.Schema(), err)
		}
		if tl.Description() == "" {
			t.Errorf("%s: no description", tl.Name())
		}
	}
	if diff := cmp.Diff(wantCaps, got); diff != "" {
		t.Errorf("catalog and capabilities (-want +got):\n%s", diff)
	}
	if err := RegisterBuiltinsWith(&full, nil); err == nil {
		t.Error("registering the built-ins twice succeeded")
	}
	if err := RegisterBuiltinsWith(&Registry{}, &BuiltinOptions{FilesDir: "/nonexistent/agentcraft-files"}); err == nil {
		t.Error("a missing files directory was accepted")
	}
}

// BenchmarkDispatch measures one call of each built-in through the
// registry, as the agent loop makes it: look-up, argument parsing and
// validation, and the work.
func BenchmarkDispatch(b *testing.B) {
	var reg Registry
	if err := RegisterBuiltinsWith(&reg, &BuiltinOptions{FilesDir: b.TempDir()}); err != nil {
		b.Fatal(err)
	}
	calls := []struct{ tool, args string }{
		{"calculator", `{"expression":"sqrt(2) * (3 + 4)^2"}`},
		{"current_time", `{"timezone":"Asia/Tokyo"}`},
		{"json_query", `{"json":{"items":[{"name":"a","price":12},{"name":"b","price":3}]},"query":".items[] | select(.price > 10) | .name"}`},
		{"run_javascript", `{"code":"input.map(x => x * 2).reduce((a, b) => a + b, 0)","input":[1,2,3]}`},
		{"run_starlark", `{"code":"result = 0\nfor x in input:\n    result += x * 2","input":[1,2,3]}`},
		{"file_list", `{}`},
	}
	ctx := context.Background()
	for _, c := range calls {
		b.Run(c.tool, func(b *testing.B) {
			args := json.RawMessage(c.args)
			b.ReportAllocs()
			for b.Loop() {
				tl, ok := reg.Get(c.tool)
				if !ok {
					b.Fatal("not registered")
				}
				res, err := tl.Call(ctx, args)
				if err != nil || res.IsError {
					b.Fatalf("%+v %v", res, err)
				}
			}
		})
	}
}
