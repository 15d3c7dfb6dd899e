package contract

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExtractJSON(t *testing.T) {
	tests := []struct {
		name string
		text string
		want int
		out  string // JSON; "" means errNoJSON
	}{
		{"whole object", `{"a":1}`, kindAny, `{"a":1}`},
		{"whole scalar", ` 42 `, kindAny, `42`},
		{"json fence", "x\n```json\n{\"a\":1}\n```\ny", kindObject, `{"a":1}`},
		{"json fence with windows newlines", "x\r\n```json\r\n{\"a\":1}\r\n```", kindObject, `{"a":1}`},
		{"unterminated fence (token limit)", "x\n```json\n{\"a\":[1,2]}\n", kindObject, `{"a":[1,2]}`},
		{"one-line fence", "```{\"a\":1}```", kindObject, `{"a":1}`},
		{"invalid json fence falls through to a valid plain fence", "```json\n{a:1}\n```\n```\n{\"a\":2}\n```", kindObject, `{"a":2}`},
		{"balanced object after junk braces", `a } { b [ {"a":"}"} c`, kindObject, `{"a":"}"}`},
		{"escaped quotes in strings", `say {"q":"he said \"{\""} ok`, kindObject, `{"q":"he said \"{\""}`},
		{"array wanted skips objects", `{"x":1} then [1,2]`, kindArray, `[1,2]`},
		{"object wanted skips citations", `see [1] and {"x":1}`, kindObject, `{"x":1}`},
		{"wrong kind is still returned when it is all there is", `only [1,2] here`, kindObject, `[1,2]`},
		{"an array inside a wrong-kind object is not taken", `got {"items":[1,2]} done`, kindArray, `{"items":[1,2]}`},
		{"whole text wins whatever its kind", `[1]`, kindObject, `[1]`},
		{"no JSON", "nothing here", kindAny, ""},
		{"unbalanced", `{"a":[1}`, kindAny, ""},
		{"empty", "", kindAny, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := extractJSON(tt.text, tt.want)
			if tt.out == "" {
				if err == nil {
					t.Fatalf("extractJSON = %v, want no JSON found", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("extractJSON: %v", err)
			}
			if diff := cmp.Diff(canonJSON(t, tt.out), canon(t, got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestExtractJSONBounded checks that prose full of brackets costs linear
// work per candidate and a bounded number of candidates, not quadratic time.
func TestExtractJSONBounded(t *testing.T) {
	text := strings.Repeat("{[", 50_000) + strings.Repeat("]}", 40_000)
	if _, err := extractJSON(text, kindAny); err == nil {
		t.Fatal("extractJSON found JSON in unbalanced brackets")
	}
}
