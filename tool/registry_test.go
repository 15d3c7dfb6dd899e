package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/google/go-cmp/cmp"
)

// stubTool is a configurable Tool for registry tests.
type stubTool struct {
	name   string
	cap    Capability
	schema json.RawMessage
}

func (s stubTool) Name() string            { return s.name }
func (s stubTool) Description() string     { return "stub " + s.name }
func (s stubTool) Schema() json.RawMessage { return s.schema }
func (s stubTool) Capability() Capability  { return s.cap }
func (s stubTool) Call(context.Context, json.RawMessage) (Result, error) {
	return Result{Content: s.name}, nil
}

func names(tools []Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name())
	}
	return out
}

func TestRegistry(t *testing.T) {
	var r Registry
	if got := r.List(); len(got) != 0 {
		t.Fatalf("zero Registry lists %v", names(got))
	}
	for _, n := range []string{"zeta", "alpha", "mid_dle-2"} {
		if err := r.Register(stubTool{name: n, cap: CapabilityMedium}); err != nil {
			t.Fatalf("Register(%s): %v", n, err)
		}
	}
	if diff := cmp.Diff([]string{"alpha", "mid_dle-2", "zeta"}, names(r.List())); diff != "" {
		t.Errorf("List not sorted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"alpha", "mid_dle-2", "zeta"}, r.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	if got, ok := r.Get("zeta"); !ok || got.Name() != "zeta" {
		t.Errorf("Get(zeta) = %v, %v", got, ok)
	}
	if _, ok := r.Get("nope"); ok {
		t.Error("Get(nope) found a tool")
	}

	got, err := r.Resolve("zeta", "alpha")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"zeta", "alpha"}, names(got)); diff != "" {
		t.Errorf("Resolve keeps the caller's order (-want +got):\n%s", diff)
	}

	_, err = r.Resolve("alpha", "web_search")
	if !errors.Is(err, ErrUnknownTool) || !strings.Contains(err.Error(), `"web_search"`) || !strings.Contains(err.Error(), "alpha, mid_dle-2, zeta") {
		t.Errorf("Resolve(unknown) error = %v, want ErrUnknownTool naming web_search and the available tools", err)
	}
	if _, err := r.Resolve("alpha", "alpha"); err == nil {
		t.Error("Resolve accepted a repeated name")
	}

	defs, err := r.Defs("alpha")
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolDef{{Name: "alpha", Description: "stub alpha"}}
	if diff := cmp.Diff(want, defs); diff != "" {
		t.Errorf("Defs (-want +got):\n%s", diff)
	}
	if _, err := r.Defs("nope"); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("Defs(nope) error = %v, want ErrUnknownTool", err)
	}
}

func TestRegistryRejects(t *testing.T) {
	var r Registry
	if err := r.Register(stubTool{name: "taken", cap: CapabilityLow}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		tool Tool
		want string
	}{
		{"nil", nil, "nil tool"},
		{"duplicate", stubTool{name: "taken", cap: CapabilityLow}, "already registered"},
		{"empty name", stubTool{name: "", cap: CapabilityLow}, "invalid tool name"},
		{"space", stubTool{name: "web search", cap: CapabilityLow}, "invalid tool name"},
		{"too long", stubTool{name: strings.Repeat("a", 65), cap: CapabilityLow}, "1 to 64"},
		{"no capability", stubTool{name: "c"}, "capability"},
		{"bad schema", stubTool{name: "s", cap: CapabilityLow, schema: json.RawMessage(`[1]`)}, "schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := r.Register(tt.tool)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Register error = %v, want containing %q", err, tt.want)
			}
		})
	}
}

func TestRegistryConcurrent(t *testing.T) {
	var r Registry
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if err := r.Register(stubTool{name: fmt.Sprintf("t%02d", i), cap: CapabilityLow}); err != nil {
				t.Error(err)
			}
			r.List()
			r.Get("t00")
		})
	}
	wg.Wait()
	if n := len(r.List()); n != 20 {
		t.Errorf("registered %d tools, want 20", n)
	}
}

func TestRegisterBuiltins(t *testing.T) {
	var r Registry
	if err := RegisterBuiltins(&r); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"calculator", "current_time"}, r.Names()); diff != "" {
		t.Errorf("built-ins (-want +got):\n%s", diff)
	}
	if err := RegisterBuiltins(&r); err == nil {
		t.Error("registering the built-ins twice succeeded")
	}
	for _, tl := range r.List() {
		var schema map[string]any
		if err := json.Unmarshal(tl.Schema(), &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: schema %s is not a JSON Schema object (%v)", tl.Name(), tl.Schema(), err)
		}
		if tl.Capability() != CapabilityLow {
			t.Errorf("%s: capability %v, want low", tl.Name(), tl.Capability())
		}
	}
}

func TestCapabilityText(t *testing.T) {
	for _, c := range []Capability{CapabilityLow, CapabilityMedium, CapabilityHigh} {
		b, err := c.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Capability
		if err := back.UnmarshalText(b); err != nil || back != c {
			t.Errorf("round trip of %v gave %v, %v", c, back, err)
		}
	}
	var c Capability
	if err := json.Unmarshal([]byte(`"extreme"`), &c); err == nil {
		t.Error(`"extreme" accepted as a capability`)
	}
	if _, err := Capability(0).MarshalText(); err == nil {
		t.Error("zero capability marshalled")
	}
	if !(CapabilityLow < CapabilityMedium && CapabilityMedium < CapabilityHigh) {
		t.Error("capabilities are not ordered by risk")
	}
}
