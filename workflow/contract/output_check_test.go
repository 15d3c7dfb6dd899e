package contract

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOutputCheck(t *testing.T) {
	writing := OutputRules{
		Required:  []string{"title", "body", "x_posts", "tags"},
		Types:     map[string]string{"title": "string", "x_posts": "array", "tags": "array", "word_count": "integer", "meta": "object"},
		Forbidden: []any{"No content generated.", 0.0},
	}
	tests := []struct {
		name  string
		value any
		rules OutputRules
		want  []Problem
	}{
		{
			name:  "a complete output passes",
			value: obj(t, `{"title":"Go 1.26","body":"Text","x_posts":["Go 1.26 is out"],"tags":["go"],"word_count":900}`),
			rules: writing,
			want:  []Problem{},
		},
		{
			name:  "pipeline: x_posts echoing its own name fails",
			value: obj(t, `{"title":"Go 1.26","body":"Text","x_posts":["x_posts"],"tags":["go"]}`),
			rules: writing,
			want: []Problem{
				{Field: "x_posts", Message: `every item is the field name "x_posts": the template was echoed instead of filled`},
			},
		},
		{
			name:  "every item equal to the key, any case, fails",
			value: obj(t, `{"title":"T","body":"B","x_posts":["x_posts"," X_POSTS "],"tags":["tags"]}`),
			rules: writing,
			want: []Problem{
				{Field: "tags", Message: `every item is the field name "tags": the template was echoed instead of filled`},
				{Field: "x_posts", Message: `every item is the field name "x_posts": the template was echoed instead of filled`},
			},
		},
		{
			name:  "the key name among real items is content",
			value: obj(t, `{"title":"T","body":"B","x_posts":["a post","x_posts"],"tags":["go"]}`),
			rules: writing,
			want:  []Problem{},
		},
		{
			name:  "missing and empty required fields fail",
			value: obj(t, `{"title":"  ","body":null,"x_posts":[],"meta":{}}`),
			rules: OutputRules{Required: []string{"title", "body", "x_posts", "tags", "meta"}},
			want: []Problem{
				{Field: "title", Message: "required field is empty (a blank string)"},
				{Field: "body", Message: "required field is empty (null)"},
				{Field: "x_posts", Message: "required field is empty (an empty array)"},
				{Field: "tags", Message: "required field is missing"},
				{Field: "meta", Message: "required field is empty (an empty object)"},
			},
		},
		{
			name:  "wrong types fail; optional absent fields are not checked",
			value: obj(t, `{"title":5,"body":"B","x_posts":"one post","tags":["go"],"word_count":9.5}`),
			rules: writing,
			want: []Problem{
				{Field: "title", Message: "is the number 5, want string"},
				{Field: "word_count", Message: "is the number 9.5, want integer"},
				{Field: "x_posts", Message: `is the string "one post", want array`},
			},
		},
		{
			name:  "placeholder strings fail at any depth",
			value: obj(t, `{"title":"title","body":"TODO","x_posts":["Lorem Ipsum","ok"],"tags":["go"],"meta":{"summary":"tbd","links":[{"url":"placeholder"}]}}`),
			rules: writing,
			want: []Problem{
				{Field: "body", Message: `holds the placeholder "TODO" instead of content`},
				{Field: "meta.links[0].url", Message: `holds the placeholder "placeholder" instead of content`},
				{Field: "meta.summary", Message: `holds the placeholder "tbd" instead of content`},
				{Field: "title", Message: `holds the placeholder "title" instead of content`},
				{Field: "x_posts[0]", Message: `holds the placeholder "Lorem Ipsum" instead of content`},
			},
		},
		{
			name:  "forbidden fallback values fail as values and as items",
			value: obj(t, `{"title":"T","body":" No content generated. ","x_posts":["real","No content generated."],"tags":["go"],"word_count":0}`),
			rules: writing,
			want: []Problem{
				{Field: "body", Message: `holds the fixed fallback value the string " No content generated. "`},
				{Field: "word_count", Message: "holds the fixed fallback value the number 0"},
				{Field: "x_posts[1]", Message: `holds the fixed fallback value the string "No content generated."`},
			},
		},
		{
			name:  "JSON in a fence is checked",
			value: "Done!\n```json\n{\"title\":\"T\",\"body\":\"B\",\"x_posts\":[\"x_posts\"],\"tags\":[\"go\"]}\n```",
			rules: writing,
			want: []Problem{
				{Field: "x_posts", Message: `every item is the field name "x_posts": the template was echoed instead of filled`},
			},
		},
		{
			name:  "prose without JSON fails",
			value: "Here is your post: Go is great.",
			rules: writing,
			want: []Problem{
				{Field: "$", Message: "output is text with no JSON object in it; the agent must return a JSON object"},
			},
		},
		{
			name:  "a non-object fails",
			value: []any{"a"},
			rules: writing,
			want:  []Problem{{Field: "$", Message: "output is array, want a JSON object"}},
		},
		{
			name:  "an unknown type name in the rules is reported",
			value: obj(t, `{"title":"T"}`),
			rules: OutputRules{Types: map[string]string{"title": "text"}},
			want: []Problem{
				{Field: "title", Message: `unknown type "text" in the rules; use string, number, integer, boolean, array or object`},
			},
		},
		{
			name:  "integer accepts 3.0 and json numbers",
			value: `{"n": 3.0, "m": 12345678901234567890}`,
			rules: OutputRules{Types: map[string]string{"n": "integer", "m": "integer"}},
			want:  []Problem{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := OutputCheck(tt.value, tt.rules)
			if diff := cmp.Diff(tt.want, got.Problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if got.OK != (len(tt.want) == 0) {
				t.Errorf("OK = %v with problems %v", got.OK, got.Problems)
			}
		})
	}
}

func TestOutputCheckJSONShape(t *testing.T) {
	b, err := json.Marshal(OutputCheck(map[string]any{"a": "b"}, OutputRules{}))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"ok":true,"problems":[]}`; got != want {
		t.Errorf("JSON = %s, want %s", got, want)
	}
}
