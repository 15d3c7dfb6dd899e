package contract

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNormalize(t *testing.T) {
	defaults := map[string]any{
		"tone":     "neutral",
		"language": "en",
		"channels": []any{"blog"},
		"limits":   map[string]any{"words": 800},
	}
	tests := []struct {
		name         string
		value        any
		defaults     map[string]any
		want         string // normalized, JSON
		wantOriginal string // JSON
		wantApplied  []string
	}{
		{
			name:         "missing, null, blank and empty-array fields get defaults",
			value:        obj(t, `{"topic":"Go","tone":null,"language":"  ","channels":[]}`),
			defaults:     defaults,
			want:         `{"topic":"Go","tone":"neutral","language":"en","channels":["blog"],"limits":{"words":800}}`,
			wantOriginal: `{"topic":"Go","tone":null,"language":"  ","channels":[]}`,
			wantApplied:  []string{"channels", "language", "limits", "tone"},
		},
		{
			name:         "given values win, an explicit empty object is kept",
			value:        obj(t, `{"tone":"playful","language":"de","channels":["x"],"limits":{}}`),
			defaults:     defaults,
			want:         `{"tone":"playful","language":"de","channels":["x"],"limits":{}}`,
			wantOriginal: `{"tone":"playful","language":"de","channels":["x"],"limits":{}}`,
			wantApplied:  []string{},
		},
		{
			name:         "a JSON object string is parsed",
			value:        ` {"topic":"Go","tone":""} `,
			defaults:     map[string]any{"tone": "neutral"},
			want:         `{"topic":"Go","tone":"neutral"}`,
			wantOriginal: `" {\"topic\":\"Go\",\"tone\":\"\"} "`,
			wantApplied:  []string{"tone"},
		},
		{
			name:         "plain text is kept under input",
			value:        "Write a post about Go {generics}",
			defaults:     map[string]any{"tone": "neutral"},
			want:         `{"input":"Write a post about Go {generics}","tone":"neutral"}`,
			wantOriginal: `"Write a post about Go {generics}"`,
			wantApplied:  []string{"tone"},
		},
		{
			name:         "prose with a JSON fence is text, not data",
			value:        "Use this:\n```json\n{\"tone\":\"x\"}\n```",
			defaults:     map[string]any{"tone": "neutral"},
			want:         `{"input":"Use this:\n` + "```json" + `\n{\"tone\":\"x\"}\n` + "```" + `","tone":"neutral"}`,
			wantOriginal: `"Use this:\n` + "```json" + `\n{\"tone\":\"x\"}\n` + "```" + `"`,
			wantApplied:  []string{"tone"},
		},
		{
			name:         "a JSON array string is kept under input as text",
			value:        `["a","b"]`,
			defaults:     nil,
			want:         `{"input":"[\"a\",\"b\"]"}`,
			wantOriginal: `"[\"a\",\"b\"]"`,
			wantApplied:  []string{},
		},
		{
			name:         "empty text takes the input default",
			value:        "",
			defaults:     map[string]any{"input": "Write about Go"},
			want:         `{"input":"Write about Go"}`,
			wantOriginal: `""`,
			wantApplied:  []string{"input"},
		},
		{
			name:         "nil becomes an object of defaults",
			value:        nil,
			defaults:     map[string]any{"tone": "neutral"},
			want:         `{"tone":"neutral"}`,
			wantOriginal: `null`,
			wantApplied:  []string{"tone"},
		},
		{
			name:         "a number is kept under input",
			value:        42,
			defaults:     nil,
			want:         `{"input":42}`,
			wantOriginal: `42`,
			wantApplied:  []string{},
		},
		{
			name:         "typed Go maps are accepted",
			value:        map[string]string{"topic": "Go"},
			defaults:     map[string]any{"tone": "neutral"},
			want:         `{"topic":"Go","tone":"neutral"}`,
			wantOriginal: `{"topic":"Go"}`,
			wantApplied:  []string{"tone"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := canon(t, tt.value)
			defBefore := canon(t, tt.defaults)
			got := Normalize(tt.value, tt.defaults)
			if diff := cmp.Diff(canonJSON(t, tt.want), canon(t, got.Normalized)); diff != "" {
				t.Errorf("normalized (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(canonJSON(t, tt.wantOriginal), canon(t, got.Original)); diff != "" {
				t.Errorf("original (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantApplied, got.DefaultsApplied); diff != "" {
				t.Errorf("defaults_applied (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, canon(t, tt.value)); diff != "" {
				t.Errorf("Normalize modified its input (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(defBefore, canon(t, tt.defaults)); diff != "" {
				t.Errorf("Normalize modified defaults (-before +after):\n%s", diff)
			}
		})
	}
}

// TestNormalizeDoesNotAlias guards against the result sharing memory with
// the input or the defaults, which would let a later node's edit leak back
// into the run's start input or into the next run's defaults.
func TestNormalizeDoesNotAlias(t *testing.T) {
	in := map[string]any{"outline": []any{"a"}}
	defaults := map[string]any{"channels": []any{"blog"}}
	got := Normalize(in, defaults)
	got.Normalized["outline"].([]any)[0] = "changed"
	got.Normalized["channels"].([]any)[0] = "changed"
	got.Original.(map[string]any)["outline"] = "changed"
	if in["outline"].([]any)[0] != "a" {
		t.Errorf("input changed through the result: %v", in)
	}
	if defaults["channels"].([]any)[0] != "blog" {
		t.Errorf("defaults changed through the result: %v", defaults)
	}
}
