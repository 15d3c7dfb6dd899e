package contract

import (
	"encoding/json"
	"testing"
)

// FuzzCheck feeds arbitrary upstream text through JSON extraction, repair
// and validation. Check must never panic, must stay deterministic, and must
// never pass on a value that does not validate.
func FuzzCheck(f *testing.F) {
	for _, seed := range []string{
		`{"topic":"Go","audience":"devs","outline":["a"]}`,
		`{"handoff":{"topic":"Go","audience":"devs","outline":["a"]}}`,
		`{"handoff":{"summary":"s"}}`,
		"Plan:\n```json\n{\"topic\":\"Go\",\"audience\":\"devs\",\"outline\":\"a\"}\n```",
		"```\n{\"data\":{\"topic\":\"Go\"}}",
		`see [1] {"topic":"Go","outline":"x","word_count":"12","draft":"true"} done`,
		`{"topic":"Go","audience":"devs","outline":[1,{"a":[]}],"word_count":"1e400"}`,
		`{"a":{"topic":1},"b":{"topic":2}}`,
		`[[[[{"}":"{"}]]]]`,
		`"\u0000"`,
		``,
	} {
		f.Add(seed)
	}
	s, err := Compile(map[string]any{
		"type":     "object",
		"title":    "Plan",
		"required": []any{"topic", "audience", "outline"},
		"properties": map[string]any{
			"topic":      map[string]any{"type": "string"},
			"audience":   map[string]any{"type": "string"},
			"outline":    map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			"word_count": map[string]any{"type": "integer", "default": 800},
			"draft":      map[string]any{"type": "boolean"},
			"meta": map[string]any{"type": "object", "properties": map[string]any{
				"lang": map[string]any{"type": "string", "default": "en"},
			}},
		},
	})
	if err != nil {
		f.Fatal(err)
	}
	opts := &Options{Start: map[string]any{"audience": "devs"}, AllowStartFallback: true}
	rules := OutputRules{
		Required:  []string{"topic", "outline"},
		Types:     map[string]string{"topic": "string", "outline": "array"},
		Forbidden: []any{"none", 0},
	}
	f.Fuzz(func(t *testing.T, text string) {
		res := Check(text, s, true, opts)
		switch res.Contract.Status {
		case StatusOK, StatusNormalized:
			if err := s.compiled.Validate(res.Normalized); err != nil {
				t.Fatalf("status %q but normalized value does not validate: %v", res.Contract.Status, err)
			}
		case StatusFailed:
			if res.Normalized != nil {
				t.Fatalf("failed check returned normalized value %v", res.Normalized)
			}
			if len(res.Contract.Notes) == 0 {
				t.Fatal("failed check without a note")
			}
		default:
			t.Fatalf("unknown status %q", res.Contract.Status)
		}
		a, err := json.Marshal(res)
		if err != nil {
			t.Fatalf("result does not encode: %v", err)
		}
		b, _ := json.Marshal(Check(text, s, true, opts))
		if string(a) != string(b) {
			t.Fatalf("Check is not deterministic:\n%s\n%s", a, b)
		}
		if _, err := json.Marshal(OutputCheck(text, rules)); err != nil {
			t.Fatalf("output check result does not encode: %v", err)
		}
		if _, err := json.Marshal(Normalize(text, map[string]any{"tone": "neutral"})); err != nil {
			t.Fatalf("normalize result does not encode: %v", err)
		}
	})
}
