package contract

import (
	"encoding/json"
	"strings"
	"testing"
)

// obj decodes a JSON object literal the way upstream outputs arrive: as
// encoding/json values with float64 numbers.
func obj(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad test JSON %q: %v", s, err)
	}
	return m
}

func compile(t testing.TB, schema string) *Schema {
	t.Helper()
	s, err := Compile(obj(t, schema))
	if err != nil {
		t.Fatalf("Compile(%s): %v", schema, err)
	}
	return s
}

// canon re-encodes a value so that json.Number(1), 1 and 1.0 compare equal.
func canon(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %v: %v", v, err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	return out
}

// canonJSON decodes a JSON literal for comparison with canon; "" is nil.
func canonJSON(t testing.TB, s string) any {
	t.Helper()
	if s == "" {
		return nil
	}
	var out any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("bad test JSON %q: %v", s, err)
	}
	return out
}

// hasNote reports whether some note contains every part.
func hasNote(notes []string, parts ...string) bool {
	for _, n := range notes {
		all := true
		for _, p := range parts {
			if !strings.Contains(n, p) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}
